package io.jbof.target.controller;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A target-wide bound on the data bytes of Read and Write commands in progress (from acceptance to
 * completion). A command that would pass it waits on its own queue, in order, until others complete;
 * it never fails for it. One command is always let through when nothing is in flight, so a bound
 * below MDTS cannot wedge the target.
 */
public final class InflightBudget {
    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();
    private final AtomicLong waits = new AtomicLong();
    private final ConcurrentLinkedQueue<QueueSession> waiting = new ConcurrentLinkedQueue<>();

    /** {@code limit} bytes; 0 or less: no bound. */
    public InflightBudget(long limit) {
        this.limit = limit;
    }

    public long limit() {
        return limit;
    }
    /** Bytes in flight now (counted only when bounded). */
    public long used() {
        return used.get();
    }
    /** How many times a queue had to wait for the budget. */
    public long waits() {
        return waits.get();
    }
    /** The most that was ever in flight at once. */
    public long peak() {
        return peak.get();
    }

    boolean tryAcquire(long n) {
        if (limit <= 0) return true; // unbounded: no shared counter touched per I/O
        for (; ; ) {
            long u = used.get();
            if (u > 0 && u + n > limit) return false;
            if (used.compareAndSet(u, u + n)) {
                peak.accumulateAndGet(u + n, Math::max);
                return true;
            }
        }
    }

    void release(long n) {
        if (limit <= 0 || n <= 0) return;
        used.addAndGet(-n);
        QueueSession s;
        while ((s = waiting.poll()) != null) s.wake();
    }

    /** {@code s} waits for {@code need} bytes; woken by the next release (or now, if they freed up meanwhile). */
    void await(QueueSession s, long need) {
        waits.incrementAndGet();
        waiting.add(s);
        long u = used.get();
        if (u == 0 || u + need <= limit) {
            if (waiting.remove(s)) s.wake();
        }
    }
}
