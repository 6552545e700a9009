package io.jbof.target.namespace;

import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A block device exported as a namespace, as Linux's nvmet bdev backend (io-cmd-bdev.c) does: its size
 * and logical/physical block sizes come from the kernel, Deallocate is BLKDISCARD, Write Zeroes is
 * BLKZEROOUT (the kernel writes zeroes itself where the device has no such command), and the device is
 * held open exclusively (O_EXCL) while it is exported, so it cannot be mounted or claimed by another
 * exporter behind the hosts' backs; a device already in use is refused unless forced.
 */
final class BlockDevice implements Medium {
    private static final Logger log = LoggerFactory.getLogger(BlockDevice.class);

    private final Libc libc;
    private final Path path;
    /** Holds the exclusive claim (or, forced, a plain descriptor) for as long as the namespace lives. */
    private final int fd;

    private final long sizeBytes;
    private final int logicalBlockSize;
    private final int physicalBlockSize;
    private final int optimalIoBytes;
    private final boolean readOnly;
    private final long[] arg = new long[2];
    private volatile boolean discardUnsupported;

    private BlockDevice(
            Libc libc, Path path, int fd, long sizeBytes, int logical, int physical, int optimalIo, boolean readOnly) {
        this.libc = libc;
        this.path = path;
        this.fd = fd;
        this.sizeBytes = sizeBytes;
        this.logicalBlockSize = logical;
        this.physicalBlockSize = physical;
        this.optimalIoBytes = optimalIo;
        this.readOnly = readOnly;
    }

    /**
     * Claims {@code path} and reads its geometry. {@code force} skips the exclusive claim, for a device
     * another program holds on purpose (its writes and the hosts' would then race). A device the kernel
     * marks read-only is opened for reading only; {@link #readOnly()} then says so.
     */
    static BlockDevice open(Path path, boolean writable, boolean force) throws IOException {
        Libc libc = Libc.Holder.require("exporting block device " + path);
        int flags = Libc.O_CLOEXEC | (force ? 0 : Libc.O_EXCL);
        int fd = libc.open(path.toString(), flags | (writable ? Libc.O_RDWR : Libc.O_RDONLY));
        int e = fd < 0 ? Libc.Holder.errno() : 0;
        if (fd < 0 && writable && (e == Libc.EACCES || e == Libc.EROFS)) {
            fd = libc.open(path.toString(), flags | Libc.O_RDONLY); // perhaps a read-only device: BLKROGET tells
            if (fd < 0) e = Libc.Holder.errno();
        }
        if (fd < 0) {
            if (e == Libc.EBUSY) {
                throw new IOException(
                        "block device " + path + " is in use (mounted, or held exclusively by another program such as"
                                + " another target or a device mapper); unmount or release it, or add ,force to export it anyway");
            }
            if (e == Libc.EACCES) {
                throw new IOException("cannot open block device " + path
                        + ": permission denied; run the target as root or as a member of the device's group");
            }
            throw new IOException("cannot open block device " + path + ": " + Libc.Holder.describe(e));
        }
        try {
            long size = query(libc, fd, Libc.BLKGETSIZE64, path, "BLKGETSIZE64");
            int logical = (int) query(libc, fd, Libc.BLKSSZGET, path, "BLKSSZGET");
            int physical = (int) query(libc, fd, Libc.BLKPBSZGET, path, "BLKPBSZGET");
            int optimal = (int) query(libc, fd, Libc.BLKIOOPT, path, "BLKIOOPT");
            boolean ro = query(libc, fd, Libc.BLKROGET, path, "BLKROGET") != 0;
            if (writable && !ro && e != 0) {
                throw new IOException("cannot open block device " + path + " for writing: " + Libc.Holder.describe(e)
                        + "; export it read-only with ,ro");
            }
            return new BlockDevice(
                    libc, path, fd, size, logical, Math.max(physical, logical), optimal, ro || !writable);
        } catch (IOException | RuntimeException ex) {
            libc.close(fd);
            throw ex;
        }
    }

    /** An ioctl that reports one number (an int or a u64; an int fills the low half, see {@link Libc#ioctl}). */
    private static long query(Libc libc, int fd, long request, Path path, String name) throws IOException {
        long[] out = new long[2];
        if (libc.ioctl(fd, request, out) != 0)
            throw new IOException(name + " on " + path + " failed: " + Libc.Holder.describe(Libc.Holder.errno()));
        return request == Libc.BLKGETSIZE64 ? out[0] : out[0] & 0xFFFFFFFFL;
    }

    long sizeBytes() {
        return sizeBytes;
    }

    int logicalBlockSize() {
        return logicalBlockSize;
    }

    int physicalBlockSize() {
        return physicalBlockSize;
    }
    /** The device's optimal I/O size in bytes, 0 when it names none. */
    int optimalIoBytes() {
        return optimalIoBytes;
    }
    /** Opened for reading only: asked so, or the kernel marks the device read-only (BLKROGET). */
    boolean readOnly() {
        return readOnly;
    }

    /** BLKZEROOUT: the range reads as zeroes afterwards, whatever the device supports; the kernel drops its cached pages. */
    @Override
    public synchronized boolean zeroRange(long position, long length) throws IOException {
        arg[0] = position;
        arg[1] = length;
        if (libc.ioctl(fd, Libc.BLKZEROOUT, arg) != 0) {
            throw new IOException("BLKZEROOUT of " + length + " bytes at " + position + " on " + path + " failed: "
                    + Libc.Holder.describe(Libc.Holder.errno()));
        }
        return true;
    }

    /**
     * BLKDISCARD. Deallocation is advisory (DLFEAT says nothing about what the blocks read afterwards),
     * so a device that cannot discard does nothing, and the command still succeeds.
     */
    @Override
    public synchronized boolean deallocate(long position, long length) throws IOException {
        if (discardUnsupported) return true;
        arg[0] = position;
        arg[1] = length;
        if (libc.ioctl(fd, Libc.BLKDISCARD, arg) != 0) {
            int e = Libc.Holder.errno();
            if (e != Libc.EOPNOTSUPP)
                throw new IOException("BLKDISCARD of " + length + " bytes at " + position + " on " + path + " failed: "
                        + Libc.Holder.describe(e));
            log.debug("{} cannot discard; Deallocate does nothing on it", path);
            discardUnsupported = true;
        }
        return true;
    }

    @Override
    public boolean deallocatedReadZeroes() {
        return false; // discarded blocks read as whatever the device returns (Linux dropped discard_zeroes_data)
    }

    @Override
    public void close() {
        libc.close(fd);
    }
}
