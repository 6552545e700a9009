package io.jbof.target.namespace;

import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The space of a namespace file, changed through fallocate(2) as Linux's nvmet file backend does:
 * Deallocate punches a hole (the file system takes the blocks back, reads return zeroes) and Write
 * Zeroes zeroes a range without writing it. Each is one system call whatever the range, so a host
 * cannot turn a 4 KiB command into gigabytes of writes. Where the file system cannot, the caller
 * falls back to writing zeroes.
 */
final class FileSpace implements Medium {
    private static final Logger log = LoggerFactory.getLogger(FileSpace.class);

    static final int FALLOC_FL_KEEP_SIZE = 0x01;
    static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    static final int FALLOC_FL_ZERO_RANGE = 0x10;

    private final Libc libc;
    private final int fd;
    private final Path path;
    private volatile boolean punchUnsupported;
    private volatile boolean zeroRangeUnsupported;

    private FileSpace(Libc libc, int fd, Path path) {
        this.libc = libc;
        this.fd = fd;
        this.path = path;
    }

    /** A descriptor of {@code path} for fallocate, or null where none can be had (the caller writes zeroes). */
    static FileSpace open(Path path) {
        Libc libc = Libc.Holder.LIBC;
        if (libc == null) {
            log.debug("fallocate unavailable (no libc binding); Deallocate and Write Zeroes write zeroes");
            return null;
        }
        int fd = libc.open(path.toString(), Libc.O_RDWR | Libc.O_CLOEXEC);
        if (fd < 0) {
            log.debug("cannot open {} for fallocate (errno {}); zeroes will be written", path, Libc.Holder.errno());
            return null;
        }
        return new FileSpace(libc, fd, path);
    }

    @Override
    public boolean zeroRange(long position, long length) {
        return (!zeroRangeUnsupported && fallocate(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, position, length, false))
                || deallocate(position, length);
    }

    /** Returns [position, position+length) to the file system; false when it cannot (nothing was done). */
    @Override
    public boolean deallocate(long position, long length) {
        if (punchUnsupported) return false;
        return fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, position, length, true);
    }

    @Override
    public boolean deallocatedReadZeroes() {
        return true; // a punched hole, or the zeroes written in its place
    }

    private boolean fallocate(int mode, long position, long length, boolean punch) {
        if (libc.fallocate(fd, mode, position, length) == 0) return true;
        int errno = Libc.Holder.errno();
        if (errno == Libc.EOPNOTSUPP) {
            log.debug("{}: the file system does not support fallocate mode 0x{}", path, Integer.toHexString(mode));
            if (punch) punchUnsupported = true;
            else zeroRangeUnsupported = true;
        } else {
            log.warn(
                    "fallocate(0x{}) of {} bytes at {} in {} failed: errno {}",
                    Integer.toHexString(mode),
                    length,
                    position,
                    path,
                    errno);
        }
        return false;
    }

    @Override
    public void close() {
        libc.close(fd);
    }
}
