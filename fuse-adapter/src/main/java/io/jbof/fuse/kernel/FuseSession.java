package io.jbof.fuse.kernel;

import static io.jbof.fuse.kernel.FuseAbi.*;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one FUSE connection. Requests are read from /dev/fuse (each reader from its own cloned
 * descriptor where the kernel allows, so replies go back where their request came from), decoded and
 * handed to the {@link FuseOperations}. The readers are the initiator's event loops where they can be
 * ({@link LoopReader}: each queue's loop reads in its own turns, so a request runs to completion on the
 * thread that sends its command), else a few reader threads. Nothing waits per request: an operation may
 * reply later from whatever thread completes it, and the request's slot returns to the pool then.
 * The pool's size bounds what is in flight; a reader that finds it empty waits for a reply.
 */
public final class FuseSession {
    private static final Logger log = LoggerFactory.getLogger(FuseSession.class);

    /**
     * @param readers        threads reading /dev/fuse
     * @param maxBackground  asynchronous requests (reads, direct I/O) the kernel may have outstanding
     * @param maxIo          largest read or write in bytes (a multiple of 4 KiB, at most 1 MiB)
     * @param writebackCache let the kernel cache writes (opt-in: data is durable only after fsync)
     * @param onLoops        read on the loops given to {@link #start} where they allow it, not on threads
     */
    public record Config(int readers, int maxBackground, int maxIo, boolean writebackCache, boolean onLoops) {
        public static Config defaults() {
            return new Config(defaultReaders(Runtime.getRuntime().availableProcessors()), 64, 1 << 20, false, true);
        }

        /**
         * One reader per core, 2 to 4: a reader beyond the cores only adds a wake-up per request (measured on 2 cores:
         * 4 readers did ~14 % fewer 4 KiB IOPS at QD32 than 2, with ~30 % more context switches).
         */
        static int defaultReaders(int cores) {
            return Math.min(4, Math.max(2, cores));
        }
    }

    private final FuseDevice device;
    private final FuseOperations ops;
    private final Config config;
    private final ArrayBlockingQueue<FuseRequest> free;
    private final int maxSlots;
    private final AtomicInteger created = new AtomicInteger();
    private final List<Thread> readers = new ArrayList<>();
    /** Copy-on-write: replies on any thread look through it while {@link #start} may still add. */
    private final List<LoopReader> loopReaders = new CopyOnWriteArrayList<>();

    private final CountDownLatch initialized = new CountDownLatch(1);
    /** Readers still reading, plus one while {@link #start} runs; the connection ended when none is left. */
    private final AtomicInteger live = new AtomicInteger(1);

    private final CountDownLatch ended = new CountDownLatch(1);
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger peakInFlight = new AtomicInteger();
    private final AtomicInteger periodPeak = new AtomicInteger();
    private volatile int minor;
    private volatile int grantedFlags;
    private volatile Throwable failure;

    public FuseSession(FuseDevice device, FuseOperations ops, Config config) {
        if (config.maxIo() % 4096 != 0 || config.maxIo() < 4096 || config.maxIo() > (1 << 20)) {
            throw new IllegalArgumentException(
                    "maxIo " + config.maxIo() + ": must be a multiple of 4096 from 4096 to 1 MiB");
        }
        this.device = device;
        this.ops = ops;
        this.config = config;
        this.maxSlots = config.maxBackground() + Math.max(config.readers(), 16) + 16;
        this.free = new ArrayBlockingQueue<>(maxSlots);
    }

    /**
     * Starts the readers: one on each of {@code loops} that can read in its turns (when the config says
     * so), else reader threads. The kernel's INIT is already queued once the file system is mounted.
     */
    public void start(List<? extends EventExecutor> loops) {
        if (config.onLoops()) {
            for (EventExecutor loop : loops) {
                if (loopReaders.size() == 16) break;
                int fd = loopReaders.isEmpty() ? device.fd() : device.cloneOrShare();
                live.incrementAndGet();
                LoopReader r = attachOn(loop, fd);
                if (r == null) {
                    live.decrementAndGet();
                    continue;
                }
                loopReaders.add(r);
            }
        }
        if (loopReaders.isEmpty()) {
            for (int i = 0; i < config.readers(); i++) {
                int fd = i == 0 ? device.fd() : device.cloneOrShare();
                Thread t = new Thread(() -> serve(fd), "fuse-reader-" + i);
                t.setDaemon(true);
                readers.add(t);
            }
            live.addAndGet(readers.size());
            readers.forEach(Thread::start);
        }
        log.debug(
                "FUSE requests read by {}",
                loopReaders.isEmpty() ? readers.size() + " threads" : loopReaders.size() + " event loops");
        readerEnded(); // start's own count
    }

    private LoopReader attachOn(EventExecutor loop, int fd) {
        Future<LoopReader> f;
        try {
            f = loop.submit(() -> LoopReader.attach(this, loop, fd));
        } catch (RejectedExecutionException e) {
            return null;
        }
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            log.debug("reading /dev/fuse on {} failed to start: {}", loop, e.toString());
        }
        // Not started in time: it must not start later, uncounted (a loop that runs it still is awaited).
        if (!f.cancel(false)) return f.getNow();
        return null;
    }

    /** How many event loops read requests (0: reader threads do). */
    public int loopReaders() {
        return loopReaders.size();
    }

    void readerEnded() {
        if (live.decrementAndGet() == 0) ended.countDown();
    }

    /** True once INIT was answered; false when the connection ended first or the time ran out. */
    public boolean awaitInit(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!initialized.await(20, TimeUnit.MILLISECONDS)) {
            if (ended.getCount() == 0 || System.nanoTime() > deadline) return false;
        }
        return true;
    }

    /** Waits until every reader saw the connection end (unmounted or aborted). */
    public boolean awaitEnd(long timeout, TimeUnit unit) throws InterruptedException {
        return ended.await(timeout, unit);
    }

    public boolean running() {
        return ended.getCount() > 0;
    }

    public Throwable failure() {
        return failure;
    }

    public int protocolMinor() {
        return minor;
    }

    public int grantedFlags() {
        return grantedFlags;
    }
    /** READ and WRITE requests handed to the file system and not yet answered. */
    public int inFlight() {
        return inFlight.get();
    }
    /** The most READ and WRITE requests that were in flight at once. */
    public int peakInFlight() {
        return peakInFlight.get();
    }

    /** The peak since the last call (or the start), and a new peak period from now on. */
    public int takePeakInFlight() {
        return periodPeak.getAndSet(inFlight.get());
    }

    private void serve(int fd) {
        try {
            while (readAndDispatch(fd, acquire()) != END) {
                // next request
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failure = t;
            log.error("FUSE reader stopped", t);
        } finally {
            readerEnded();
        }
    }

    /** {@link #readAndDispatch}: a request was read (or the read was interrupted), nothing waits, the connection ended. */
    static final int READ_ONE = 0;

    static final int EMPTY = 1;
    static final int END = 2;

    /** Reads one request from {@code fd} into {@code r} and hands it on; {@code r} returns to the pool where none came. */
    int readAndDispatch(int fd, FuseRequest r) {
        LibC libc = LibC.Holder.LIBC;
        long n = libc.read(fd, r.inAddress(), r.capacity());
        if (n < 0) {
            int e = LibC.Holder.errno();
            release(r);
            if (e == EAGAIN) return EMPTY; // a non-blocking descriptor with nothing waiting
            if (e == EINTR || e == ENOENT) return READ_ONE; // interrupted, or a request withdrawn meanwhile
            if (e != ENODEV) log.warn("reading /dev/fuse failed: errno {} ({})", e, libc.strerror(e));
            return END; // ENODEV: unmounted or aborted
        }
        r.received(fd, (int) n);
        dispatch(r);
        return READ_ONE;
    }

    /** A free slot, or null when all are in flight (never waits). */
    FuseRequest tryAcquire() {
        FuseRequest r = free.poll();
        if (r != null) return r;
        if (created.incrementAndGet() <= maxSlots) return new FuseRequest(this, config.maxIo());
        created.decrementAndGet();
        return null;
    }

    private void release(FuseRequest r) {
        free.offer(r);
        for (LoopReader l : loopReaders) l.slotFreed();
    }

    private FuseRequest acquire() throws InterruptedException {
        FuseRequest r = tryAcquire();
        return r != null ? r : free.take();
    }

    /** Called by a request once its reply was written: its slot serves the next request. */
    void finished(FuseRequest r) {
        int op = r.opcode();
        if (op == READ || op == WRITE) inFlight.decrementAndGet();
        release(r);
    }

    private void dispatch(FuseRequest r) {
        int op = r.opcode();
        long node = r.nodeId();
        try {
            switch (op) {
                case INIT -> init(r);
                case READ, WRITE -> {
                    int now = inFlight.incrementAndGet();
                    if (now > periodPeak.get()) {
                        periodPeak.accumulateAndGet(now, Math::max);
                        if (now > peakInFlight.get()) peakInFlight.accumulateAndGet(now, Math::max);
                    }
                    long offset = r.bodyLong(RW_OFFSET);
                    int size = r.bodyInt(RW_SIZE);
                    if (op == READ) ops.read(r, node, offset, size);
                    else ops.write(r, node, offset, size, r.bodyInt(RW_FLAGS));
                }
                case LOOKUP -> ops.lookup(r, node, r.bodyName());
                case GETATTR -> ops.getattr(r, node);
                case SETATTR -> ops.setattr(r, node, r.bodyInt(SETATTR_VALID), r.bodyLong(SETATTR_SIZE));
                case OPEN -> ops.open(r, node, r.bodyInt(OPEN_FLAGS));
                case FLUSH -> ops.flush(r, node);
                case FSYNC -> ops.fsync(r, node);
                case RELEASE -> ops.release(r, node);
                case FALLOCATE ->
                    ops.fallocate(
                            r, node, r.bodyInt(FALLOC_MODE), r.bodyLong(FALLOC_OFFSET), r.bodyLong(FALLOC_LENGTH));
                case STATFS -> ops.statfs(r, node);
                case OPENDIR -> ops.opendir(r, node);
                case READDIR, READDIRPLUS ->
                    ops.readdir(r, node, r.bodyLong(RW_OFFSET), r.bodyInt(RW_SIZE), op == READDIRPLUS);
                case RELEASEDIR -> ops.releasedir(r, node);
                case FSYNCDIR -> r.replyOk();
                case MKNOD, MKDIR, UNLINK, RMDIR, RENAME, RENAME2, LINK, SYMLINK, CREATE -> ops.modify(r, op);
                // No reply: FORGET (inodes here are fixed), INTERRUPT (every request ends on its own soon).
                case FORGET, BATCH_FORGET, INTERRUPT -> release(r);
                case DESTROY -> r.replyOk();
                default -> r.replyError(ENOSYS);
            }
        } catch (RuntimeException e) {
            log.error("FUSE request {} (opcode {}) failed", r.unique(), op, e);
            r.replyError(EIO);
        }
    }

    private void init(FuseRequest r) {
        int major = r.bodyInt(INIT_MAJOR);
        int kernelMinor = r.bodyInt(INIT_MINOR);
        int kernelFlags = r.bodyInt(INIT_FLAGS);
        if (major > KERNEL_VERSION) {
            // The kernel speaks a newer major: answer with ours only, and it asks again in our terms.
            r.replyInit(KERNEL_VERSION, KERNEL_MINOR, 0, 0, 0, 0, 0, 0);
            return;
        }
        if (major < KERNEL_VERSION || kernelMinor < OLDEST_MINOR) {
            log.error(
                    "the kernel speaks FUSE {}.{}; jbof needs 7.{} or newer (Linux 4.20+)",
                    major,
                    kernelMinor,
                    OLDEST_MINOR);
            r.replyError(EPROTO);
            return;
        }
        int wanted = ASYNC_READ
                | BIG_WRITES
                | ASYNC_DIO
                | MAX_PAGES
                | PARALLEL_DIROPS
                | DO_READDIRPLUS
                | (config.writebackCache() ? WRITEBACK_CACHE : 0);
        int flags = wanted & kernelFlags;
        minor = Math.min(kernelMinor, KERNEL_MINOR);
        grantedFlags = flags;
        int maxBackground = config.maxBackground();
        r.replyInit(
                KERNEL_VERSION,
                minor,
                r.bodyInt(INIT_MAX_READAHEAD),
                flags,
                maxBackground,
                Math.max(1, maxBackground * 3 / 4),
                config.maxIo(),
                config.maxIo() / 4096);
        log.debug(
                "FUSE INIT: kernel 7.{}, flags {} granted of {}; max_background {}, max_write {}",
                kernelMinor,
                Integer.toHexString(flags),
                Integer.toHexString(kernelFlags),
                maxBackground,
                config.maxIo());
        initialized.countDown();
    }

    /** Frees the slots; only once no request is in flight (after {@link #awaitEnd}). */
    public void freeSlots() {
        FuseRequest r;
        while ((r = free.poll()) != null) r.free();
    }
}
