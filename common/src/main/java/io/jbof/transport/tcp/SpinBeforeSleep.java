package io.jbof.transport.tcp;

import io.jbof.util.Tunable;
import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.function.LongSupplier;

/**
 * An event loop that was woken soon after it last went to sleep polls its sockets (epoll_wait without
 * waiting) for a few microseconds before it sleeps again: at low queue depth the next command or
 * response usually arrives within that time, and catching it by polling saves the sleep and the
 * wake-up on both sides (as the RDMA loop's spin polls do, and Linux's busy_poll for sockets). A loop
 * that slept long is idle: it sleeps at once, so idle loops burn nothing. Tasks handed to the loop
 * end the polling at once (while it polls, nobody wakes it). Every loop starts with
 * {@code jbof.tcp.spinMicros} (off by default: it pays where host and target have cores of their own,
 * 4K QD1 p50 of jbof bench 26 µs instead of 40 here, and costs where they share one: fio on the jbof
 * mount, whose loops shared a core with the target's, p50 210 µs instead of 66); a loop that serves a
 * drive raises its own ({@link #pollAtLeast}), since there each sleep also waits for the drive.
 */
final class SpinBeforeSleep implements SelectStrategy {
    /** Every loop's poll to begin with. */
    static final long DEFAULT_NANOS = Tunable.TCP_SPIN_MICROS.longValue() * 1000;

    private final LongSupplier clock;
    private long spinNanos;
    /** A sleep shorter than this means traffic is steady enough for the next one to be polled for. */
    private long busyNanos;
    /** When it last chose to sleep; 0 once the loop came back from that sleep. */
    private long sleptAt;

    private boolean busy;

    SpinBeforeSleep(long spinNanos, LongSupplier clock) {
        this.clock = clock;
        pollAtLeast(spinNanos);
    }

    /** Polls at least {@code nanos} before sleeping from now on (never less than it did). On the loop's thread. */
    void pollAtLeast(long nanos) {
        spinNanos = Math.max(spinNanos, nanos);
        busyNanos = Math.max(1_000_000L, 8 * spinNanos);
    }

    long spinNanos() {
        return spinNanos;
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        if (hasTasks) return selectNow.get();
        if (spinNanos == 0) return SelectStrategy.SELECT; // Netty's own choice, without reading the clock
        long now = clock.getAsLong();
        if (sleptAt != 0) {
            busy = now - sleptAt < busyNanos;
            sleptAt = 0;
        }
        if (busy) {
            EventExecutor loop = ThreadExecutorMap.currentExecutor();
            long end = now + spinNanos;
            do {
                int ready = selectNow.get();
                if (ready > 0) return ready;
                if (loop instanceof SingleThreadEventExecutor && ((SingleThreadEventExecutor) loop).pendingTasks() > 0)
                    return 0; // run them; the loop comes back here after
                Thread.onSpinWait();
            } while (clock.getAsLong() - end < 0);
        }
        sleptAt = clock.getAsLong();
        return SelectStrategy.SELECT;
    }
}
