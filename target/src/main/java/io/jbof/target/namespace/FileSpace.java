package io.jbof.target.namespace;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;

/**
 * The space of a namespace file, changed through fallocate(2) as Linux's nvmet file backend does:
 * Deallocate punches a hole (the file system takes the blocks back, reads return zeroes) and Write
 * Zeroes zeroes a range without writing it. Each is one system call whatever the range, so a host
 * cannot turn a 4 KiB command into gigabytes of writes. Where the file system cannot, the caller
 * falls back to writing zeroes.
 */
final class FileSpace implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FileSpace.class);

    static final int FALLOC_FL_KEEP_SIZE = 0x01;
    static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    static final int FALLOC_FL_ZERO_RANGE = 0x10;
    private static final int O_RDWR = 02;
    private static final int O_CLOEXEC = 02000000;
    private static final int EOPNOTSUPP = 95;

    /** The few libc calls used; jnr-ffi binds them at run time. */
    public interface LibC {
        int open(String path, int flags);

        int fallocate(int fd, int mode, long offset, long length);

        int close(int fd);
    }

    private static final LibC LIBC = load();

    private final int fd;
    private final Path path;
    private volatile boolean punchUnsupported;
    private volatile boolean zeroRangeUnsupported;

    private FileSpace(int fd, Path path) {
        this.fd = fd;
        this.path = path;
    }

    private static LibC load() {
        try {
            return LibraryLoader.create(LibC.class).load("c");
        } catch (Throwable e) { // no libc binding: zeroes are written instead
            log.debug("fallocate unavailable ({}); Deallocate and Write Zeroes write zeroes", e.toString());
            return null;
        }
    }

    /** A descriptor of {@code path} for fallocate, or null where none can be had (the caller writes zeroes). */
    static FileSpace open(Path path) {
        if (LIBC == null) return null;
        int fd = LIBC.open(path.toString(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            log.debug("cannot open {} for fallocate (errno {}); zeroes will be written", path, errno());
            return null;
        }
        return new FileSpace(fd, path);
    }

    /** Returns [position, position+length) to the file system; false when it cannot (nothing was done). */
    boolean punchHole(long position, long length) {
        if (punchUnsupported) return false;
        return fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, position, length, true);
    }

    /** Zeroes [position, position+length) in place, keeping its blocks allocated; false when it cannot. */
    boolean zeroRange(long position, long length) {
        if (zeroRangeUnsupported) return false;
        return fallocate(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, position, length, false);
    }

    private boolean fallocate(int mode, long position, long length, boolean punch) {
        if (LIBC.fallocate(fd, mode, position, length) == 0) return true;
        int errno = errno();
        if (errno == EOPNOTSUPP) {
            log.debug("{}: the file system does not support fallocate mode 0x{}", path, Integer.toHexString(mode));
            if (punch) punchUnsupported = true; else zeroRangeUnsupported = true;
        } else {
            log.warn("fallocate(0x{}) of {} bytes at {} in {} failed: errno {}", Integer.toHexString(mode), length, position, path, errno);
        }
        return false;
    }

    private static int errno() {
        return Runtime.getRuntime(LIBC).getLastError();
    }

    @Override
    public void close() {
        LIBC.close(fd);
    }
}
