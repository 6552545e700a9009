package io.jbof.target.namespace;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/**
 * One io_uring, driven from Java over its shared rings (as liburing does in C, and Netty's io_uring
 * transport in Java): {@link #prepare} writes a submission entry in place, {@link #submit} hands every
 * prepared one to the kernel in one io_uring_enter, {@link #reap} reads completions in place. Not
 * thread-safe by design: one thread prepares and submits, one reaps (they may differ: the two rings are
 * independent), and {@link #awaitCompletion} may block in a third.
 */
final class IoUring implements AutoCloseable {
    static final int OP_NOP = 0;
    static final int OP_READ = 22;
    static final int OP_WRITE = 23;
    /** rw_flags of a write: durable before it completes (pwritev2's RWF_DSYNC), as nvmet's file backend does for FUA. */
    static final int RWF_DSYNC = 2;

    private static final long SYS_IO_URING_SETUP = 425; // the same number on x86_64 and arm64
    private static final long SYS_IO_URING_ENTER = 426;
    private static final long SYS_IO_URING_REGISTER = 427;
    private static final int REGISTER_EVENTFD = 4;
    private static final boolean ARM64 = "aarch64".equals(System.getProperty("os.arch"));
    private static final long SYS_MMAP = ARM64 ? 222 : 9;
    private static final long SYS_MUNMAP = ARM64 ? 215 : 11;
    private static final int ENTER_GETEVENTS = 1;
    private static final int FEAT_SINGLE_MMAP = 1;
    private static final long OFF_SQ_RING = 0;
    private static final long OFF_CQ_RING = 0x8000000L;
    private static final long OFF_SQES = 0x10000000L;
    private static final int PROT_READ_WRITE = 3;
    private static final int MAP_SHARED_POPULATE = 0x01 | 0x8000;
    private static final int SQE_SIZE = 64;
    private static final int CQE_SIZE = 16;
    private static final int PARAMS_SIZE = 120;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int EBUSY = 16;

    private static final UringCalls CALLS = load();
    private static final Runtime RUNTIME = CALLS == null ? null : Runtime.getRuntime(CALLS);

    /** Reads one completion: the user data given to {@link #prepare} and the result (bytes, or -errno). */
    interface CompletionSink {
        void completed(long userData, int result);
    }

    private final int fd;
    private final long sqRing;
    private final long sqMappedSize;
    private final long cqRing;
    private final long cqRingSize;
    private final long sqes;
    private final long sqesSize;
    private final long sqHead;
    private final long sqTail;
    private final int sqMask;
    private final int sqEntries;
    private final long cqHead;
    private final long cqTail;
    private final int cqMask;
    private final long cqes;
    /** Our copies of the indexes only we move: the next submission slot, the next completion to read. */
    private int tail;

    private int head;
    /** Prepared entries the kernel has not taken yet. */
    private int unsubmitted;

    private boolean closed;

    private IoUring(int fd, long params) throws IOException {
        this.fd = fd;
        int sqEntries = PlatformDependent.getInt(params);
        int cqEntries = PlatformDependent.getInt(params + 4);
        int features = PlatformDependent.getInt(params + 20);
        long sqOff = params + 40;
        long cqOff = params + 80;
        this.sqEntries = sqEntries;
        long sqSize = PlatformDependent.getInt(sqOff + 24) + 4L * sqEntries; // sq_off.array + the index array
        long cqSize = PlatformDependent.getInt(cqOff + 20) + (long) CQE_SIZE * cqEntries; // cq_off.cqes + the CQEs
        boolean single = (features & FEAT_SINGLE_MMAP) != 0;
        long sqMapped = single ? Math.max(sqSize, cqSize) : sqSize;
        long sq = map(sqMapped, OFF_SQ_RING);
        long cq = 0;
        long sqe = 0;
        try {
            cq = single ? sq : map(cqSize, OFF_CQ_RING);
            sqesSize = (long) SQE_SIZE * sqEntries;
            sqe = map(sqesSize, OFF_SQES);
        } catch (IOException e) {
            if (cq != 0 && cq != sq) munmap(cq, cqSize);
            munmap(sq, sqMapped);
            throw e;
        }
        sqRing = sq;
        cqRing = cq;
        sqes = sqe;
        sqMappedSize = sqMapped; // both rings when they share one mapping
        cqRingSize = single ? 0 : cqSize;
        sqHead = sq + PlatformDependent.getInt(sqOff);
        sqTail = sq + PlatformDependent.getInt(sqOff + 4);
        sqMask = PlatformDependent.getInt(sq + PlatformDependent.getInt(sqOff + 8));
        long array = sq + PlatformDependent.getInt(sqOff + 24);
        cqHead = cq + PlatformDependent.getInt(cqOff);
        cqTail = cq + PlatformDependent.getInt(cqOff + 4);
        cqMask = PlatformDependent.getInt(cq + PlatformDependent.getInt(cqOff + 8));
        cqes = cq + PlatformDependent.getInt(cqOff + 20);
        // Slot i of the index array names submission entry i, once for all: entries are used in ring order.
        for (int i = 0; i < sqEntries; i++) PlatformDependent.putInt(array + 4L * i, i);
        tail = PlatformDependent.getIntVolatile(sqTail);
        head = PlatformDependent.getIntVolatile(cqHead);
    }

    /** A ring of {@code entries} submissions (a power of two; the kernel gives twice as many completions). */
    static IoUring open(int entries) throws IOException {
        if (CALLS == null)
            throw new IOException("io_uring needs the system calls through jnr-ffi, which cannot be loaded here");
        ByteBuf params = Unpooled.directBuffer(PARAMS_SIZE, PARAMS_SIZE);
        try {
            params.setZero(0, PARAMS_SIZE);
            long p = params.memoryAddress();
            long fd = CALLS.syscall(SYS_IO_URING_SETUP, entries, p, 0, 0, 0, 0);
            if (fd < 0) throw new IOException("io_uring_setup: " + describe(errno()));
            try {
                return new IoUring((int) fd, p);
            } catch (IOException | RuntimeException e) {
                CALLS.close((int) fd);
                throw e;
            }
        } finally {
            params.release();
        }
    }

    private long map(long size, long offset) throws IOException {
        long a = CALLS.syscall(SYS_MMAP, 0, size, PROT_READ_WRITE, MAP_SHARED_POPULATE, fd, offset);
        if (a == -1)
            throw new IOException("mmap of an io_uring ring (" + size + " bytes at " + Long.toHexString(offset) + "): "
                    + describe(errno()));
        return a;
    }

    /**
     * Has the kernel signal {@code eventFd} whenever it posts completions, so that whoever sleeps on that
     * descriptor (an epoll loop) wakes for them; false when the kernel refuses.
     */
    boolean registerEventFd(int eventFd) {
        ByteBuf arg = Unpooled.directBuffer(4, 4);
        try {
            arg.setIntLE(0, eventFd);
            return CALLS.syscall(SYS_IO_URING_REGISTER, fd, REGISTER_EVENTFD, arg.memoryAddress(), 1, 0, 0) == 0;
        } finally {
            arg.release();
        }
    }

    /** Submission entries. */
    int entries() {
        return sqEntries;
    }

    /**
     * Writes one read, write or no-op into the submission ring (not yet submitted); false when the ring
     * is full of entries the kernel has not taken.
     */
    boolean prepare(int op, int fileFd, long address, int length, long offset, int rwFlags, long userData) {
        if (tail - PlatformDependent.getIntVolatile(sqHead) >= sqEntries) return false;
        long e = sqes + (long) (tail & sqMask) * SQE_SIZE;
        PlatformDependent.setMemory(e, SQE_SIZE, (byte) 0);
        PlatformDependent.putByte(e, (byte) op);
        PlatformDependent.putInt(e + 4, fileFd);
        PlatformDependent.putLong(e + 8, offset);
        PlatformDependent.putLong(e + 16, address);
        PlatformDependent.putInt(e + 24, length);
        PlatformDependent.putInt(e + 28, rwFlags);
        PlatformDependent.putLong(e + 32, userData);
        tail++;
        unsubmitted++;
        return true;
    }

    /** Prepared entries not yet submitted. */
    int unsubmitted() {
        return unsubmitted;
    }

    /**
     * Hands every prepared entry to the kernel (one io_uring_enter); returns how many it took. A busy
     * kernel (EAGAIN, EBUSY) or a signal takes none now: the caller submits again later.
     */
    int submit() throws IOException {
        if (unsubmitted == 0) return 0;
        PlatformDependent.putIntOrdered(sqTail, tail); // the entries are written before the kernel can see them
        long r = CALLS.syscall(SYS_IO_URING_ENTER, fd, unsubmitted, 0, 0, 0);
        if (r < 0) {
            int e = errno();
            if (e == EINTR || e == EAGAIN || e == EBUSY) return 0;
            throw new IOException("io_uring_enter: " + describe(e));
        }
        unsubmitted -= (int) r;
        return (int) r;
    }

    /** Blocks until at least one completion is ready (or a signal interrupts); for the thread that waits, not the one that reaps. */
    void awaitCompletion() throws IOException {
        long r = CALLS.syscall(SYS_IO_URING_ENTER, fd, 0, 1, ENTER_GETEVENTS, 0, 0);
        if (r < 0) {
            int e = errno();
            if (e != EINTR && e != EAGAIN && e != EBUSY) throw new IOException("io_uring_enter: " + describe(e));
        }
    }

    /** Hands every ready completion to {@code sink}, in order, and frees their places; returns how many. */
    int reap(CompletionSink sink) {
        int end = PlatformDependent.getIntVolatile(cqTail); // acquire: the entries before it are written
        int n = 0;
        while (head != end) {
            long c = cqes + (long) (head & cqMask) * CQE_SIZE;
            long userData = PlatformDependent.getLong(c);
            int result = PlatformDependent.getInt(c + 8);
            head++;
            n++;
            sink.completed(userData, result);
        }
        if (n > 0) PlatformDependent.putIntOrdered(cqHead, head); // the kernel may reuse them now
        return n;
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        munmap(sqes, sqesSize);
        if (cqRingSize != 0) munmap(cqRing, cqRingSize);
        munmap(sqRing, sqMappedSize);
        CALLS.close(fd);
    }

    private static void munmap(long address, long size) {
        CALLS.syscall(SYS_MUNMAP, address, size, 0, 0, 0, 0);
    }

    private static int errno() {
        return RUNTIME.getLastError();
    }

    /** "strerror (errno N)", as {@link Libc.Holder#describe} gives it. */
    static String describe(int errno) {
        return Libc.Holder.LIBC != null ? Libc.Holder.describe(errno) : "errno " + errno;
    }

    private static UringCalls load() {
        try {
            return LibraryLoader.create(UringCalls.class).load("c");
        } catch (Throwable e) {
            return null;
        }
    }
}
