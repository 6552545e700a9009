package io.jbof.fuse;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Keeps read-modify-write of partial blocks correct under concurrency. A writer that patches a block
 * holds that block's stripe exclusively; a writer of whole blocks holds its stripes shared, so whole-
 * block writers run in parallel but never interleave with a patch of the same block (which would write
 * back stale bytes around its own). Readers take no lock: a patch rewrites bytes it did not change
 * with their current value. Stripes are taken in ascending order, so two writers cannot deadlock.
 * Semaphores, not locks: a write is locked by the thread that starts it and unlocked by the thread
 * that completes it.
 */
final class StripedBlockLocks {
    static final int STRIPES = 256;
    private static final int EXCLUSIVE = Integer.MAX_VALUE;
    private final Semaphore[] stripes = new Semaphore[STRIPES];

    /** What one write holds: per stripe 0 none, 1 shared, 2 exclusive. One per request slot or call. */
    static final class Held {
        final byte[] modes = new byte[STRIPES];
        /** The stripes touched: from {@code start}, {@code count} of them, wrapping past the last. */
        int start;

        int count;
    }

    StripedBlockLocks() {
        // Fair: a patch waiting for its stripe is not overtaken forever by a stream of shared writers.
        for (int i = 0; i < STRIPES; i++) stripes[i] = new Semaphore(EXCLUSIVE, true);
    }

    private static int stripe(long lba) {
        return (int) (lba & (STRIPES - 1));
    }

    /** Locks the blocks a write of {@code r} touches into {@code h}; pair with {@link #unlock}. */
    void lock(ByteRange r, Held h) {
        byte[] m = mark(r, h);
        // Ascending stripe order: a range that wraps takes its low part (0..) before its high part.
        int end = h.start + h.count;
        if (end > STRIPES) acquire(m, 0, end - STRIPES);
        acquire(m, h.start, Math.min(end, STRIPES));
    }

    /** Notes in {@code h} the stripes a write of {@code r} touches and how (shared, or exclusive for an edge). */
    private static byte[] mark(ByteRange r, Held h) {
        byte[] m = h.modes;
        long first = r.firstBlock();
        long n = Math.min(r.lastBlock() - first + 1, STRIPES);
        for (long i = 0; i < n; i++) m[stripe(first + i)] = 1;
        if (r.headBytes != 0) m[stripe(r.headLba)] = 2;
        if (r.tailBytes != 0) m[stripe(r.tailLba)] = 2;
        h.start = stripe(first);
        h.count = (int) n;
        return m;
    }

    /**
     * {@link #lock} without waiting: true with every stripe held, or false with none held (some stripe is
     * taken). For a thread that must not block (an event loop); honours the stripes' fairness, so a waiting
     * patch is not overtaken.
     */
    boolean tryLock(ByteRange r, Held h) {
        byte[] m = mark(r, h);
        int end = h.start + h.count;
        int lowEnd = end > STRIPES ? end - STRIPES : 0;
        int got = tryAcquire(m, 0, lowEnd);
        if (got == lowEnd) {
            int high = tryAcquire(m, h.start, Math.min(end, STRIPES));
            if (high == Math.min(end, STRIPES)) return true;
            release(m, h.start, high);
        }
        release(m, 0, got);
        for (int s = 0; s < STRIPES; s++) m[s] = 0;
        h.count = 0;
        return false;
    }

    /** Takes stripes from {@code from} on until one is busy; returns the first one not taken ({@code to} when all were). */
    private int tryAcquire(byte[] m, int from, int to) {
        for (int s = from; s < to; s++) {
            boolean got;
            try {
                // The timed form with 0 honours fairness, where the untimed tryAcquire barges.
                got = stripes[s].tryAcquire(m[s] == 2 ? EXCLUSIVE : 1, 0, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                got = false;
            }
            if (!got) return s;
        }
        return to;
    }

    private void acquire(byte[] m, int from, int to) {
        for (int s = from; s < to; s++) stripes[s].acquireUninterruptibly(m[s] == 2 ? EXCLUSIVE : 1);
    }

    void unlock(Held h) {
        byte[] m = h.modes;
        int end = h.start + h.count;
        release(m, h.start, Math.min(end, STRIPES));
        if (end > STRIPES) release(m, 0, end - STRIPES);
        h.count = 0;
    }

    private void release(byte[] m, int from, int to) {
        for (int s = to - 1; s >= from; s--) {
            stripes[s].release(m[s] == 2 ? EXCLUSIVE : 1);
            m[s] = 0;
        }
    }
}
