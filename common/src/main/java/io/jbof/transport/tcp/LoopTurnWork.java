package io.jbof.transport.tcp;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Work an event loop of {@link EventLoops#group} does at the start of every turn, before it decides
 * whether to sleep: how a source that wakes the loop through its wake-up descriptor (an io_uring's
 * registered eventfd) gets its completions handled on the loop without a task per wake-up, as SPDK's
 * pollers run in each turn of their reactor. The loop's select strategy runs it; one piece per loop.
 */
public final class LoopTurnWork implements SelectStrategy {
    /** Each loop's strategy, found from its thread (set at the loop's first turn); looked up only outside turns. */
    private static final FastThreadLocal<LoopTurnWork> OF_THREAD = new FastThreadLocal<>();

    private final SpinBeforeSleep next;
    private boolean known;
    /** Written and read on the loop's thread only. */
    private Runnable work;

    LoopTurnWork(SpinBeforeSleep next) {
        this.next = next;
    }

    /** True on the thread of a loop that runs turn work (one of {@link EventLoops#group}'s) and has none yet. */
    public static boolean availableHere() {
        LoopTurnWork s = OF_THREAD.getIfExists();
        return s != null && s.work == null;
    }

    /**
     * Runs {@code work} at the start of every turn of the calling thread's loop from now on; false (and
     * nothing set) when that thread is no such loop's or its loop has work already.
     */
    public static boolean set(Runnable work) {
        if (!availableHere()) return false;
        OF_THREAD.get().work = work;
        return true;
    }

    /** Stops running {@code work} on the calling thread's loop; nothing happens when other work (or none) is set. */
    public static void clear(Runnable work) {
        LoopTurnWork s = OF_THREAD.getIfExists();
        if (s != null && s.work == work) s.work = null;
    }

    /**
     * The calling thread's loop polls at least {@code nanos} before it sleeps once traffic is steady
     * ({@link SpinBeforeSleep}); false (and nothing changed) when that thread is no loop of {@link EventLoops#group}.
     */
    public static boolean pollBeforeSleep(long nanos) {
        LoopTurnWork s = OF_THREAD.getIfExists();
        if (s == null) return false;
        s.next.pollAtLeast(nanos);
        return true;
    }

    /** How long the calling thread's loop polls before it sleeps; 0 when it sleeps at once or is no such loop. */
    public static long pollBeforeSleepNanos() {
        LoopTurnWork s = OF_THREAD.getIfExists();
        return s == null ? 0 : s.next.spinNanos();
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        if (!known) {
            OF_THREAD.set(this);
            known = true;
        }
        // Tasks it hands the loop (a flush) are not slept on: Netty looks for tasks again before it sleeps.
        if (work != null) work.run();
        return next.calculateStrategy(selectNow, hasTasks);
    }
}
