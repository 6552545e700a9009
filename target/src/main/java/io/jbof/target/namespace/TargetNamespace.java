package io.jbof.target.namespace;

import io.jbof.target.metrics.IoStats;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A namespace the target exports, backed by a regular file or a block device: LBA n lives at byte
 * n * blockSize. Reads and writes go through the page cache on the queue's event loop (they do not
 * wait for the device), or, for a {@code direct} namespace, by O_DIRECT ({@link DirectIo}); what can
 * block for long (fdatasync for Flush/FUA, large Write Zeroes) runs on this namespace's small bounded
 * executor. Zeroing and deallocation go to the {@link Medium}: fallocate on a file, ioctls on a device.
 */
public final class TargetNamespace implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TargetNamespace.class);
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();

    private final int nsid;
    private final Path path;
    private final FileChannel channel;
    private final int blockSize;
    /** Grows live (resize); read on every I/O's range check, so volatile. */
    private volatile long blocks;

    private final boolean readOnly;
    private final UUID uuid;
    private final ExecutorService blockingExecutor;
    /** Zeroing and deallocation; null when read-only or unavailable (zeroes are then written). */
    private final Medium medium;
    /** The block device, or null for a regular file. */
    private final BlockDevice device;
    /** O_DIRECT reads and writes, or null for a buffered namespace. */
    private final DirectIo direct;
    /**
     * Each thread that reads or writes gets a descriptor of its own. The JDK registers every blocking
     * FileChannel call in the channel's thread set under that set's monitor, so one channel shared by
     * all event loops would be a lock every I/O of every loop takes. fsync covers the file whichever
     * descriptor asks, so Flush still uses the first.
     */
    private final ThreadLocal<FileChannel> perThread = ThreadLocal.withInitial(this::openForThread);

    private final Queue<FileChannel> threadChannels = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;
    /** What it served, per operation (the metrics' source). */
    private final IoStats stats = new IoStats();
    /** The ANA group it belongs to, set as it joins its subsystem (1 unless configured). */
    private volatile int anaGroup = 1;

    /** How a namespace opens its file or device. */
    public record Options(int blockSize, boolean readOnly, boolean direct, boolean force) {
        /** Buffered, read-write, exclusive. */
        public static Options of(int blockSize) {
            return new Options(blockSize, false, false, false);
        }
    }

    private TargetNamespace(
            int nsid,
            Path path,
            FileChannel channel,
            int blockSize,
            long blocks,
            boolean readOnly,
            UUID uuid,
            BlockDevice device,
            DirectIo direct) {
        this.nsid = nsid;
        this.path = path;
        this.channel = channel;
        this.blockSize = blockSize;
        this.blocks = blocks;
        this.readOnly = readOnly;
        this.uuid = uuid;
        this.device = device;
        this.direct = direct;
        this.medium = device != null ? device : readOnly ? null : FileSpace.open(path);
        // Four threads, so one long operation (a slow fdatasync, zeroes written where fallocate cannot) never
        // holds up another host's Flush; a full queue is refused (Namespace Not Ready), never run on an event loop.
        this.blockingExecutor = DaemonPool.of("jbof-ns" + nsid + "-sync-", 4, 4096);
    }

    /**
     * Opens a block device, or opens (or creates with {@code sizeBytes}) a regular file. An existing file
     * keeps its size: the target never truncates or grows a user's data; a device's size is its own.
     */
    public static TargetNamespace open(int nsid, Path path, long sizeBytes, Options o, String subsystemNqn)
            throws IOException {
        return open(nsid, path, sizeBytes, o, subsystemNqn, null);
    }

    /** As {@link #open(int, Path, long, Options, String)}, with the UUID the configuration stored (null: derived from NQN, NSID and path). */
    public static TargetNamespace open(
            int nsid, Path path, long sizeBytes, Options o, String subsystemNqn, UUID storedUuid) throws IOException {
        UUID uuid = storedUuid != null ? storedUuid : uuidOf(subsystemNqn, nsid, path);
        int blockSize = o.blockSize();
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size must be 512 or 4096, not " + blockSize);
        }
        boolean exists = Files.exists(path);
        if (exists && !Files.isRegularFile(path)) {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            if (!a.isOther() || !isBlockDevice(path))
                throw new IOException(path + " is neither a regular file nor a block device");
            return openDevice(nsid, path, sizeBytes, o, uuid);
        }
        if (o.force()) throw new IllegalArgumentException("force is for block devices in use; " + path + " is a file");
        boolean readOnly = o.readOnly();
        if (!exists) {
            if (readOnly) throw new IOException("read-only namespace file " + path + " does not exist");
            if (sizeBytes <= 0)
                throw new IOException("namespace file " + path
                        + " does not exist and no size was given to create it (use PATH:SIZE, e.g. " + path + ":1G)");
            if (sizeBytes % blockSize != 0) {
                throw new IllegalArgumentException(
                        "size " + sizeBytes + " of " + path + " is not a multiple of the block size " + blockSize);
            }
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent))
                throw new IOException("folder " + parent + " does not exist");
        }
        FileChannel ch = openChannel(path, readOnly, !exists);
        DirectIo direct = null;
        try {
            if (!exists) {
                // Sparse: set the length by writing the last byte.
                ch.write(ByteBuffer.allocate(1), sizeBytes - 1);
                ch.force(true);
                forceDirectoryOf(path); // the new name too, or a power cut may take the file and every write to it
            }
            long blocks = ch.size() / blockSize;
            if (blocks == 0) throw new IOException(path + " is smaller than one " + blockSize + "-byte block");
            if (o.direct()) direct = DirectIo.open(path, readOnly, blockSize);
            return new TargetNamespace(nsid, path, ch, blockSize, blocks, readOnly, uuid, null, direct);
        } catch (IOException | RuntimeException e) {
            if (direct != null) direct.close();
            ch.close();
            throw e;
        }
    }

    private static TargetNamespace openDevice(int nsid, Path path, long sizeBytes, Options o, UUID uuid)
            throws IOException {
        BlockDevice dev = BlockDevice.open(path, !o.readOnly(), o.force());
        FileChannel ch = null;
        DirectIo direct = null;
        try {
            int bs = o.blockSize();
            if (bs < dev.logicalBlockSize()) {
                throw new IllegalArgumentException(
                        path + " has " + dev.logicalBlockSize() + "-byte logical blocks; a namespace over it needs bs="
                                + dev.logicalBlockSize() + " or larger, not bs=" + bs);
            }
            if (sizeBytes > 0 && sizeBytes != dev.sizeBytes()) {
                throw new IllegalArgumentException(path + " is a block device of " + dev.sizeBytes()
                        + " bytes; drop :SIZE (a device's size is its own)");
            }
            long blocks = dev.sizeBytes() / bs;
            if (blocks == 0) throw new IOException(path + " is smaller than one " + bs + "-byte block");
            boolean readOnly = dev.readOnly();
            if (readOnly && !o.readOnly()) log.warn("{} is a read-only block device: exported read-only", path);
            ch = openChannel(path, readOnly, false);
            if (o.direct()) direct = DirectIo.open(path, readOnly, bs);
            return new TargetNamespace(nsid, path, ch, bs, blocks, readOnly, uuid, dev, direct);
        } catch (IOException | RuntimeException e) {
            if (direct != null) direct.close();
            if (ch != null) ch.close();
            dev.close();
            throw e;
        }
    }

    private static boolean isBlockDevice(Path path) throws IOException {
        try {
            // "unix:mode" holds S_IFMT; S_IFBLK is 0060000.
            return (((Integer) Files.getAttribute(path, "unix:mode")) & 0170000) == 0060000;
        } catch (UnsupportedOperationException e) {
            return false;
        }
    }

    private static FileChannel openChannel(Path path, boolean readOnly, boolean create) throws IOException {
        try {
            return readOnly
                    ? FileChannel.open(path, StandardOpenOption.READ)
                    : FileChannel.open(
                            path, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE);
        } catch (AccessDeniedException e) {
            throw new IOException(
                    "cannot open namespace file " + path
                            + (readOnly ? " for reading" : create ? " (creating it)" : " for writing")
                            + ": permission denied; run the target as a user who may " + (create ? "create and " : "")
                            + "write it"
                            + (readOnly || create ? "" : ", or export it read-only with ,ro"),
                    e);
        } catch (FileSystemException e) {
            throw new IOException(
                    "cannot open namespace file " + path + ": "
                            + (e.getReason() != null
                                    ? e.getReason()
                                    : e.getClass().getSimpleName()),
                    e);
        }
    }

    private static UUID uuidOf(String subsystemNqn, int nsid, Path path) {
        return UUID.nameUUIDFromBytes(
                (subsystemNqn + "/" + nsid + "/" + path.toAbsolutePath()).getBytes(StandardCharsets.UTF_8));
    }

    private static void forceDirectoryOf(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null) return;
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    public int nsid() {
        return nsid;
    }

    public Path path() {
        return path;
    }
    /** This thread's descriptor of the file (see {@link #perThread}). */
    public FileChannel channel() {
        return perThread.get();
    }

    private FileChannel openForThread() {
        if (closed) return channel;
        try {
            FileChannel c = readOnly
                    ? FileChannel.open(path, StandardOpenOption.READ)
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

    public int blockSize() {
        return blockSize;
    }

    public int blockShift() {
        return Integer.numberOfTrailingZeros(blockSize);
    }

    public long blocks() {
        return blocks;
    }

    public long sizeBytes() {
        return blocks * blockSize;
    }

    public boolean readOnly() {
        return readOnly;
    }
    /** True for a block device, false for a regular file. */
    public boolean blockDevice() {
        return device != null;
    }
    /** True when reads and writes bypass the page cache (O_DIRECT). */
    public boolean direct() {
        return direct != null;
    }
    /** The smallest write the medium takes without a read-modify-write: the device's physical block, or the block size for a file. */
    public int physicalBlockSize() {
        return device != null ? Math.max(device.physicalBlockSize(), blockSize) : blockSize;
    }
    /** The device's optimal I/O size in bytes; 0 when it names none (files). */
    public int optimalIoBytes() {
        return device != null ? device.optimalIoBytes() : 0;
    }
    /** Whether deallocated blocks read as zeroes: yes for files (holes), not promised for devices (discard). */
    public boolean deallocatedReadZeroes() {
        return medium == null || medium.deallocatedReadZeroes();
    }
    /** Stable across restarts: stored in the configuration, or derived from subsystem NQN, NSID and path. */
    public UUID uuid() {
        return uuid;
    }

    public int anaGroup() {
        return anaGroup;
    }

    public IoStats stats() {
        return stats;
    }

    public void anaGroup(int group) {
        anaGroup = group;
    }

    /** What identifies the file itself (device and inode), so one file named twice, or by a link, is recognised. */
    public Object fileKey() throws IOException {
        Object key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        return key != null ? key : path.toRealPath();
    }

    public ExecutorService blockingExecutor() {
        return blockingExecutor;
    }

    /** True when [slba, slba+nlb) lies inside the namespace. */
    public boolean inRange(long slba, long nlb) {
        return slba >= 0 && nlb >= 0 && slba <= blocks && nlb <= blocks - slba;
    }

    /** Reads {@code n} bytes at {@code position} by O_DIRECT into {@code buf} (from {@link #gatherBuffer}); blocks for the device. */
    public void readDirect(ByteBuf buf, int n, long position) throws IOException {
        direct.read(buf, n, position);
    }

    /**
     * Starts a direct read into {@code buf} or write from it on the calling loop's {@code ring}; {@code done}
     * hears the bytes moved (or -errno) on that loop. False when the ring is full: then run it on {@link #directExecutor}.
     */
    public boolean startDirect(
            DirectIoRing ring,
            boolean write,
            ByteBuf buf,
            int n,
            long position,
            boolean fua,
            DirectIoRing.Completion done) {
        return ring.start(write, direct.fd(), buf, n, position, write && fua, done); // FUA: RWF_DSYNC
    }

    /** The exception a failed direct read or write ({@code errno} from its completion) is reported with. */
    public IOException directFailure(boolean write, int n, long position, int errno) {
        return direct.failure(write, n, position, errno);
    }

    /**
     * Where a direct namespace's reads and writes block when there is no io_uring (or its ring is full):
     * they wait for the device, which an event loop must not.
     */
    public Executor directExecutor() {
        return DirectIo.EXECUTOR;
    }

    /**
     * For a direct namespace, an aligned buffer of {@code n} bytes a read lands in or a write gathers its
     * data in before {@link #writeGathered}; null for a buffered one, whose chunks go straight to the page cache.
     */
    public ByteBuf gatherBuffer(int n) {
        return direct == null ? null : DirectIo.buffer(n);
    }

    /** Writes {@code n} gathered bytes at {@code position} by O_DIRECT; the caller still owns {@code buf}. */
    public void writeGathered(ByteBuf buf, int n, long position) throws IOException {
        direct.write(buf, n, position);
    }

    /** Writes the readable bytes of {@code src} at byte {@code position} (page cache; no sync). */
    public void write(ByteBuf src, long position) throws IOException {
        int at = src.readerIndex();
        int end = at + src.readableBytes();
        FileChannel ch = channel();
        // ByteBuf.getBytes(.., FileChannel, ..) writes through the buffer's reused internal view: no ByteBuffer per
        // write.
        while (at < end) {
            int n = src.getBytes(at, ch, position, end - at);
            at += n;
            position += n;
        }
    }

    /** Zeroes [position, position+length): in place where the medium can (fallocate, BLKZEROOUT), else by writing zeroes. */
    public void zero(long position, long length) throws IOException {
        if (medium != null && medium.zeroRange(position, length)) return;
        writeZeroes(position, length);
    }

    /** Deallocates [position, position+length): the medium takes the blocks back (hole punched, BLKDISCARD). */
    public void deallocate(long position, long length) throws IOException {
        if (medium != null && medium.deallocate(position, length)) return;
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

    /**
     * Grows a file-backed namespace to {@code newSizeBytes} (sparse, durable before it is announced);
     * never shrinks: blocks a host wrote would vanish under it. A device's size is its own.
     */
    public synchronized void grow(long newSizeBytes) throws IOException {
        if (device != null)
            throw new IllegalArgumentException(path + " is a block device: its size is the device's own");
        if (readOnly) throw new IllegalArgumentException("namespace " + nsid + " is read-only");
        if (newSizeBytes % blockSize != 0) {
            throw new IllegalArgumentException(
                    "size " + newSizeBytes + " is not a multiple of the block size " + blockSize);
        }
        long now = sizeBytes();
        if (newSizeBytes < now)
            throw new IllegalArgumentException(
                    "namespace " + nsid + " has " + now + " bytes; it can grow, not shrink, to " + newSizeBytes);
        if (newSizeBytes == now) return;
        if (channel.size() < newSizeBytes) {
            channel.write(ByteBuffer.allocate(1), newSizeBytes - 1);
            channel.force(true);
        }
        blocks = newSizeBytes / blockSize;
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
            if (direct != null) direct.close();
            FileChannel c;
            while ((c = threadChannels.poll()) != null) c.close();
            channel.close();
            if (medium != null) medium.close(); // last: a device's exclusive claim ends here
        }
    }
}
