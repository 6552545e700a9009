package io.jbof.target.namespace;

import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;

/**
 * Reads and writes of a {@code direct} namespace: O_DIRECT, past the target's page cache, for drives
 * where that cache would only double the host's own. Data moves through buffers aligned to a page
 * (pooled, so no allocation per I/O once warm), by pread/pwrite at their addresses, so the device's
 * own alignment rule applies (a 512-byte-block device takes 512-byte I/O) rather than the JDK's.
 * Network data is never aligned, so a write is gathered into such a buffer first: one copy, the price
 * of bypassing the cache.
 */
final class DirectIo implements AutoCloseable {
    /** Page-aligned pooled direct buffers; only direct namespaces draw from it. */
    private static final ByteBufAllocator ALIGNED = new PooledByteBufAllocator(
            true,
            0,
            PooledByteBufAllocator.defaultNumDirectArena(),
            PooledByteBufAllocator.defaultPageSize(),
            PooledByteBufAllocator.defaultMaxOrder(),
            PooledByteBufAllocator.defaultSmallCacheSize(),
            PooledByteBufAllocator.defaultNormalCacheSize(),
            true,
            4096);

    /**
     * The threads direct reads and writes block in, shared by every direct namespace of the target (as
     * QEMU's thread pool for its aio=threads drives): enough for the queue depths hosts drive, started on
     * demand, gone when idle. A full queue refuses (Namespace Not Ready, which a host retries).
     */
    static final ExecutorService EXECUTOR = DaemonPool.of("jbof-dio-", Tunable.DIRECT_IO_THREADS.intValue(), 65536);

    private final Libc libc;
    private final Path path;
    private final int fd;

    private DirectIo(Libc libc, Path path, int fd) {
        this.libc = libc;
        this.path = path;
        this.fd = fd;
    }

    /**
     * Opens {@code path} with O_DIRECT and reads its first block, so a file system without direct I/O
     * (tmpfs before Linux 6.6) or a block size below the device's is refused at start, not on the first host's read.
     */
    static DirectIo open(Path path, boolean readOnly, int blockSize) throws IOException {
        Libc libc = Libc.Holder.require("direct I/O on " + path);
        int fd = libc.open(path.toString(), (readOnly ? Libc.O_RDONLY : Libc.O_RDWR) | Libc.O_DIRECT | Libc.O_CLOEXEC);
        if (fd < 0) {
            int e = Libc.Holder.errno();
            if (e == Libc.EINVAL) {
                throw new IOException(
                        "the file system of " + path
                                + " does not support direct I/O (O_DIRECT; tmpfs before Linux 6.6 for one); drop ,direct for it");
            }
            throw new IOException("cannot open " + path + " for direct I/O: " + Libc.Holder.describe(e));
        }
        DirectIo io = new DirectIo(libc, path, fd);
        ByteBuf probe = buffer(blockSize);
        try {
            if (!probe.hasMemoryAddress())
                throw new IOException(
                        "direct I/O needs netty's direct-buffer addresses (sun.misc.Unsafe), which this JVM does not give");
            io.read(probe, blockSize, 0);
        } catch (IOException e) {
            io.close();
            throw new IOException(
                    "direct I/O of one " + blockSize + "-byte block of " + path + " failed (" + e.getMessage()
                            + "); the device's logical block size is probably larger: use bs=4096",
                    e);
        } finally {
            probe.release();
        }
        return io;
    }

    /** An aligned buffer of {@code length} bytes (capacity), for one read or one gathered write. */
    static ByteBuf buffer(int length) {
        return ALIGNED.directBuffer(length, length);
    }

    /** Reads {@code n} bytes at {@code position} into {@code dst} (aligned, from {@link #buffer}) and sets its writer index. */
    void read(ByteBuf dst, int n, long position) throws IOException {
        int done = transfer(false, dst, n, position);
        if (done < n)
            dst.setZero(
                    done, n - done); // past the end (a file shrunk behind our back): zeroes, as a buffered read gives
        dst.writerIndex(n);
    }

    /** Writes {@code n} bytes of {@code src} (aligned, from {@link #buffer}) at {@code position}. */
    void write(ByteBuf src, int n, long position) throws IOException {
        transfer(true, src, n, position);
    }

    /** pwrite or pread until {@code n} bytes moved (a read stops early at the end); returns the bytes moved. */
    private int transfer(boolean write, ByteBuf buf, int n, long position) throws IOException {
        long address = buf.memoryAddress();
        int done = 0;
        while (done < n) {
            long r = write
                    ? libc.pwrite(fd, address + done, n - done, position + done)
                    : libc.pread(fd, address + done, n - done, position + done);
            if (r < 0) {
                int e = Libc.Holder.errno();
                if (e == Libc.EINTR) continue;
                throw failure(write, n, position, e);
            }
            if (r == 0) break;
            done += (int) r;
        }
        return done;
    }

    /** What a failed direct read or write says: which, where, and the error. */
    IOException failure(boolean write, int n, long position, int errno) {
        return new IOException("direct " + (write ? "write" : "read") + " of " + n + " bytes at " + position
                + (write ? " to " : " from ") + path + ": " + IoUring.describe(errno));
    }

    /** The O_DIRECT descriptor, for the ring's submissions. */
    int fd() {
        return fd;
    }

    @Override
    public void close() {
        libc.close(fd);
    }
}
