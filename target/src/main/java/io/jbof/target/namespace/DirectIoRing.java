package io.jbof.target.namespace;

import io.jbof.transport.tcp.EventLoops;
import io.jbof.transport.tcp.LoopTurnWork;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The direct reads and writes of one event loop, through an io_uring of its own (as SPDK's uring
 * bdev, one ring per poller): the loop prepares each in the ring and submits them all once per loop
 * turn; their completions come back on the same loop, a batch per wake-up. On an epoll loop of
 * {@link EventLoops#group} the kernel wakes the loop itself (the ring signals the loop's eventfd) and the
 * loop reaps at the start of each turn ({@link LoopTurnWork}); on other loops a thread per ring only
 * waits for completions and wakes the loop, touching no command. Where io_uring is missing
 * (an old kernel, a container's seccomp profile, kernel.io_uring_disabled) or switched off
 * ({@code jbof.directIoRing=false}), there is no ring and direct I/O blocks on the thread pool instead.
 */
public final class DirectIoRing implements IoUring.CompletionSink {
    private static final Logger log = LoggerFactory.getLogger(DirectIoRing.class);
    /** Submissions per ring: commands beyond it, in flight on one loop at once, take the thread pool. */
    static final int ENTRIES = 1024;

    private static final long SPIN_NANOS = Tunable.DIRECT_IO_SPIN_MICROS.longValue() * 1000;

    /** A direct read or write's end, on the loop that started it: bytes moved, or -errno. */
    public interface Completion {
        void directDone(int result);
    }

    private static final Map<EventExecutor, DirectIoRing> RINGS = new ConcurrentHashMap<>();
    /** Why there are no rings (null: there are, or none was tried yet). */
    private static volatile String unavailable =
            Tunable.DIRECT_IO_RING.booleanValue() ? null : "jbof.directIoRing=false";

    private final EventExecutor loop;
    private final IoUring ring;
    private final Completion[] waiting;
    private final int[] free;
    private int freeCount;
    private boolean submitQueued;
    private final Runnable submitTask = this::submitNow;
    private final Runnable drainTask = this::drain;
    /** The thread that waits for completions; null where the kernel wakes the loop itself. */
    private final Thread waker;
    /** Set by the waker as it wakes the loop, cleared by the loop once it drained: the waker sleeps between. */
    private volatile boolean draining;

    private volatile boolean closing;
    /** Completions handled so far (written by the loop only). */
    private volatile long completed;

    DirectIoRing(EventExecutor loop, int entries) throws IOException {
        this.loop = loop;
        this.ring = IoUring.open(entries);
        int n = ring.entries();
        this.waiting = new Completion[n];
        this.free = new int[n];
        for (int i = 0; i < n; i++) free[i] = n - 1 - i;
        this.freeCount = n;
        // A loop serving a drive polls before it sleeps: its sleeps wait for the drive as well as the host.
        if (loop.inEventLoop()) LoopTurnWork.pollBeforeSleep(SPIN_NANOS);
        if (wakesLoopItself(loop)) {
            this.waker = null;
        } else {
            this.waker = new Thread(this::await, "jbof-uring-" + Integer.toHexString(System.identityHashCode(loop)));
            waker.setDaemon(true);
            waker.start();
        }
    }

    /**
     * On the thread of a loop that runs turn work and sleeps on an eventfd: the ring signals that eventfd
     * on completions and the loop reaps them each turn, with no thread and no task between kernel and loop.
     */
    private boolean wakesLoopItself(EventExecutor loop) {
        if (!loop.inEventLoop() || !LoopTurnWork.availableHere()) return false;
        int eventFd = EventLoops.wakeupFd(loop);
        return eventFd >= 0 && ring.registerEventFd(eventFd) && LoopTurnWork.set(this::reapOnTurn);
    }

    /** The loop's turn work: completions posted since its last turn, if any. */
    private void reapOnTurn() {
        ring.reap(this);
    }

    /** Whether a thread waits for this ring's completions (else the kernel wakes the loop itself). */
    boolean hasWaker() {
        return waker != null;
    }

    /**
     * The ring of {@code loop}, opened on first use and closed when the loop terminates; null when
     * direct I/O cannot use io_uring here (then {@link #unavailableReason} says why) or {@code loop}
     * runs tasks on other threads than its own.
     */
    public static DirectIoRing of(EventExecutor loop) {
        // Only a loop with a thread of its own: the ring's free slots are that thread's alone.
        if (unavailable != null || !(loop instanceof SingleThreadEventExecutor)) return null;
        DirectIoRing r = RINGS.get(loop);
        if (r != null) return r;
        synchronized (RINGS) {
            r = RINGS.get(loop);
            if (r != null || unavailable != null) return r;
            try {
                r = new DirectIoRing(loop, ENTRIES);
            } catch (IOException | RuntimeException | LinkageError e) {
                unavailable = e.getMessage();
                log.info("direct I/O on a thread pool: io_uring is unavailable ({})", e.getMessage());
                return null;
            }
            RINGS.put(loop, r);
            DirectIoRing opened = r;
            loop.terminationFuture().addListener(f -> {
                RINGS.remove(loop, opened);
                opened.close();
            });
            return r;
        }
    }

    /** True when direct namespaces can use io_uring here (tries a ring once). */
    public static boolean available() {
        return unavailableReason() == null;
    }

    /** How direct namespaces run here, for the target's start line: through the rings, or on the pool and why. */
    public static String engine() {
        String why = unavailableReason();
        return why == null ? "io_uring per event loop" : "thread pool (" + why + ")";
    }

    /** Tries a ring once, so a target can say at start how its direct namespaces will run; null when they can use io_uring. */
    static String unavailableReason() {
        if (unavailable != null || !RINGS.isEmpty()) return unavailable;
        try {
            IoUring.open(2).close();
            return null;
        } catch (IOException | RuntimeException | LinkageError e) {
            unavailable = e.getMessage();
            return unavailable;
        }
    }

    /**
     * Starts a read (into {@code buf}) or write (from it) of {@code n} bytes at {@code position} of
     * {@code fd}; {@code done} hears the result on this loop. False when the ring is full (the caller
     * takes the thread pool). Called on the loop only.
     */
    boolean start(boolean write, int fd, ByteBuf buf, int n, long position, boolean dsync, Completion done) {
        if (freeCount == 0 || closing) return false;
        int slot = free[freeCount - 1];
        if (!ring.prepare(
                write ? IoUring.OP_WRITE : IoUring.OP_READ,
                fd,
                buf.memoryAddress(),
                n,
                position,
                dsync ? IoUring.RWF_DSYNC : 0,
                slot + 1L)) // 0 is the no-op that wakes the waker to close
        return false;
        freeCount--;
        waiting[slot] = done;
        if (!submitQueued) {
            submitQueued = true;
            loop.execute(submitTask); // after this turn's other commands: one io_uring_enter for all of them
        }
        return true;
    }

    private void submitNow() {
        submitQueued = false;
        try {
            ring.submit();
        } catch (IOException e) {
            log.error("direct I/O submission failed", e);
        }
        if (ring.unsubmitted() > 0 && !closing) { // the kernel was busy: again, after the loop's other work
            submitQueued = true;
            loop.execute(submitTask);
        }
    }

    /** The waker: sleeps in io_uring_enter until completions are ready, wakes the loop, waits for it to drain. */
    private void await() {
        while (!closing) {
            try {
                ring.awaitCompletion();
            } catch (IOException e) {
                log.error("direct I/O: waiting for completions failed; the ring stops", e);
                return;
            }
            if (closing) return;
            draining = true;
            try {
                loop.execute(drainTask);
            } catch (RuntimeException e) { // the loop is shutting down
                return;
            }
            while (draining && !closing) LockSupport.park(this);
        }
    }

    private void drain() {
        ring.reap(this);
        draining = false;
        LockSupport.unpark(waker);
    }

    @Override
    public void completed(long userData, int result) {
        if (userData == 0) return; // the closing no-op
        int slot = (int) userData - 1;
        Completion c = waiting[slot];
        waiting[slot] = null;
        free[freeCount++] = slot;
        completed = completed + 1; // before the command hears it, so whoever it tells sees the count
        c.directDone(result);
    }

    /** Completions this ring handled; for tests and the curious. */
    long completed() {
        return completed;
    }

    /** Completions every open ring of this process handled (for tests and the curious). */
    public static long completions() {
        long n = 0;
        for (DirectIoRing r : RINGS.values()) n += r.completed();
        return n;
    }

    /**
     * Once the loop is gone: wakes the waker with a no-op and gives the ring back. Commands still in the
     * kernel then never complete (their connection went with the loop), and the kernel finishes them before
     * it lets go of their buffers, which are never reused: they stay with their commands.
     */
    private void close() {
        closing = true;
        if (waker == null) { // the loop that reaped is gone: nothing else reads the ring
            ring.close();
            return;
        }
        if (ring.prepare(IoUring.OP_NOP, -1, 0, 0, 0, 0, 0)) {
            try {
                ring.submit();
            } catch (IOException e) {
                log.debug("direct I/O ring: closing no-op not submitted", e);
            }
        }
        LockSupport.unpark(waker);
        try {
            waker.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!waker.isAlive()) ring.close(); // else leave it mapped: the waker may still read it
    }
}
