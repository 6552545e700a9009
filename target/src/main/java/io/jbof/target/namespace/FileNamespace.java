package io.jbof.target.namespace;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A namespace backed by a regular file: LBA n lives at byte n * blockSize. Reads and writes go through
 * the page cache on the queue's event loop (they do not wait for the device); what can block for long
 * (fdatasync for Flush/FUA, large Write Zeroes) runs on this namespace's small bounded executor.
 */
public final class FileNamespace implements AutoCloseable {
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();

    private final int nsid;
    private final Path path;
    private final FileChannel channel;
    private final int blockSize;
    private final long blocks;
    private final boolean readOnly;
    private final UUID uuid;
    private final ExecutorService blockingExecutor;
    /** fallocate(2) on the file; null when read-only or unavailable (zeroes are then written). */
    private final FileSpace space;
    /**
     * Each thread that reads or writes gets a descriptor of its own. The JDK registers every blocking
     * FileChannel call in the channel's thread set under that set's monitor, so one channel shared by
     * all event loops would be a lock every I/O of every loop takes. fsync covers the file whichever
     * descriptor asks, so Flush still uses the first.
     */
    private final ThreadLocal<FileChannel> perThread = ThreadLocal.withInitial(this::openForThread);
    private final Queue<FileChannel> threadChannels = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private FileNamespace(int nsid, Path path, FileChannel channel, int blockSize, long blocks, boolean readOnly, UUID uuid) {
        this.nsid = nsid;
        this.path = path;
        this.channel = channel;
        this.blockSize = blockSize;
        this.blocks = blocks;
        this.readOnly = readOnly;
        this.uuid = uuid;
        this.space = readOnly ? null : FileSpace.open(path);
        AtomicInteger n = new AtomicInteger();
        // Four threads, so one long operation (a slow fdatasync, zeroes written where fallocate cannot) never
        // holds up another host's Flush; a full queue is refused (Namespace Not Ready), never run on an event loop.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 4, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(4096), r -> {
            Thread t = new Thread(r, "jbof-ns" + nsid + "-sync-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.AbortPolicy());
        pool.allowCoreThreadTimeOut(true);
        this.blockingExecutor = pool;
    }

    /**
     * Opens (or creates with {@code sizeBytes}) the backing file. An existing file keeps its size: the
     * target never truncates or grows a user's data.
     */
    public static FileNamespace open(int nsid, Path path, long sizeBytes, int blockSize, boolean readOnly, String subsystemNqn)
            throws IOException {
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size must be 512 or 4096, not " + blockSize);
        }
        boolean exists = Files.exists(path);
        if (!exists) {
            if (readOnly) throw new IOException("read-only namespace file " + path + " does not exist");
            if (sizeBytes <= 0) throw new IOException("namespace file " + path + " does not exist and no size was given to create it (use PATH:SIZE, e.g. " + path + ":1G)");
            if (sizeBytes % blockSize != 0) {
                throw new IllegalArgumentException("size " + sizeBytes + " of " + path + " is not a multiple of the block size " + blockSize);
            }
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) throw new IOException("folder " + parent + " does not exist");
        } else if (!Files.isRegularFile(path)) {
            throw new IOException(path + " is not a regular file");
        }
        FileChannel ch;
        try {
            ch = readOnly
                    ? FileChannel.open(path, StandardOpenOption.READ)
                    : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE);
        } catch (AccessDeniedException e) {
            throw new IOException("cannot open namespace file " + path + (readOnly ? " for reading" : exists ? " for writing" : " (creating it)")
                    + ": permission denied; run the target as a user who may " + (exists ? "" : "create and ") + "write it"
                    + (readOnly || !exists ? "" : ", or export it read-only with ,ro"), e);
        } catch (FileSystemException e) {
            throw new IOException("cannot open namespace file " + path + ": " + (e.getReason() != null ? e.getReason() : e.getClass().getSimpleName()), e);
        }
        try {
            if (!exists) {
                // Sparse: set the length by writing the last byte.
                ch.write(ByteBuffer.allocate(1), sizeBytes - 1);
                ch.force(true);
                forceDirectoryOf(path); // the new name too, or a power cut may take the file and every write to it
            }
            long size = ch.size();
            long blocks = size / blockSize;
            if (blocks == 0) throw new IOException(path + " is smaller than one " + blockSize + "-byte block");
            UUID uuid = UUID.nameUUIDFromBytes((subsystemNqn + "/" + nsid + "/" + path.toAbsolutePath())
                    .getBytes(StandardCharsets.UTF_8));
            return new FileNamespace(nsid, path, ch, blockSize, blocks, readOnly, uuid);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static void forceDirectoryOf(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null) return;
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    public int nsid() { return nsid; }
    public Path path() { return path; }
    /** This thread's descriptor of the file (see {@link #perThread}). */
    public FileChannel channel() { return perThread.get(); }

    private FileChannel openForThread() {
        if (closed) return channel;
        try {
            FileChannel c = readOnly ? FileChannel.open(path, StandardOpenOption.READ)
                    : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            threadChannels.add(c);
            if (closed) { // raced with close: give it back, use the first (closed) one
                threadChannels.remove(c);
                c.close();
                return channel;
            }
            return c;
        } catch (IOException e) {
            // The path may be gone (renamed, deleted): the first descriptor still reaches the file.
            return channel;
        }
    }
    public int blockSize() { return blockSize; }
    public int blockShift() { return Integer.numberOfTrailingZeros(blockSize); }
    public long blocks() { return blocks; }
    public long sizeBytes() { return blocks * blockSize; }
    public boolean readOnly() { return readOnly; }
    /** Stable across restarts: derived from subsystem NQN, NSID and file path. */
    public UUID uuid() { return uuid; }

    /** What identifies the file itself (device and inode), so one file named twice, or by a link, is recognised. */
    public Object fileKey() throws IOException {
        Object key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        return key != null ? key : path.toRealPath();
    }
    public ExecutorService blockingExecutor() { return blockingExecutor; }

    /** True when [slba, slba+nlb) lies inside the namespace. */
    public boolean inRange(long slba, long nlb) {
        return slba >= 0 && nlb >= 0 && slba <= blocks && nlb <= blocks - slba;
    }

    /** Writes the readable bytes of {@code src} at byte {@code position} (page cache; no sync). */
    public void write(ByteBuf src, long position) throws IOException {
        int at = src.readerIndex();
        int end = at + src.readableBytes();
        FileChannel ch = channel();
        // ByteBuf.getBytes(.., FileChannel, ..) writes through the buffer's reused internal view: no ByteBuffer per write.
        while (at < end) {
            int n = src.getBytes(at, ch, position, end - at);
            at += n;
            position += n;
        }
    }

    /** Zeroes [position, position+length): in place by fallocate where the file system can, else by writing zeroes. */
    public void zero(long position, long length) throws IOException {
        if (space != null && (space.zeroRange(position, length) || space.punchHole(position, length))) return;
        writeZeroes(position, length);
    }

    /** Deallocates [position, position+length): the file system takes the blocks back; they read as zeroes. */
    public void deallocate(long position, long length) throws IOException {
        if (space != null && space.punchHole(position, length)) return;
        writeZeroes(position, length);
    }

    private void writeZeroes(long position, long length) throws IOException {
        while (length > 0) {
            ByteBuffer z = ZEROES.duplicate();
            int n = (int) Math.min(length, z.capacity());
            z.limit(n);
            while (z.hasRemaining()) position += channel().write(z, position);
            length -= n;
        }
    }

    /** Makes every acknowledged write durable (fdatasync). */
    public void force() throws IOException {
        if (!readOnly) channel.force(false);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        blockingExecutor.shutdown();
        try {
            blockingExecutor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            force();
        } finally {
            if (space != null) space.close();
            FileChannel c;
            while ((c = threadChannels.poll()) != null) c.close();
            channel.close();
        }
    }
}
