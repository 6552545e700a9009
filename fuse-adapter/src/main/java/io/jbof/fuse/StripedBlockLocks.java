package io.jbof.fuse;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Keeps read-modify-write of partial blocks correct under concurrency. A writer that patches a block
 * holds that block's stripe exclusively; a writer of whole blocks holds its stripes shared, so whole-
 * block writers run in parallel but never interleave with a patch of the same block (which would write
 * back stale bytes around its own). Readers take no lock: a patch rewrites bytes it did not change
 * with their current value. Stripes are taken in ascending order, so two writers cannot deadlock.
 */
final class StripedBlockLocks {
    static final int STRIPES = 256;
    private final ReentrantReadWriteLock[] stripes = new ReentrantReadWriteLock[STRIPES];
    /** Per thread: the mode each stripe is held in for the current write (0 none, 1 shared, 2 exclusive). */
    private final ThreadLocal<byte[]> modes = ThreadLocal.withInitial(() -> new byte[STRIPES]);

    StripedBlockLocks() {
        for (int i = 0; i < STRIPES; i++) stripes[i] = new ReentrantReadWriteLock();
    }

    private static int stripe(long lba) {
        return (int) (lba & (STRIPES - 1));
    }

    /** Locks the blocks a write of {@code r} touches; pair with {@link #unlock}. */
    void lock(ByteRange r) {
        byte[] m = modes.get();
        long first = r.firstBlock();
        long last = r.lastBlock();
        long n = Math.min(last - first + 1, STRIPES);
        for (long i = 0; i < n; i++) m[stripe(first + i)] = 1;
        if (r.headBytes != 0) m[stripe(r.headLba)] = 2;
        if (r.tailBytes != 0) m[stripe(r.tailLba)] = 2;
        for (int s = 0; s < STRIPES; s++) {
            if (m[s] == 1) stripes[s].readLock().lock();
            else if (m[s] == 2) stripes[s].writeLock().lock();
        }
    }

    void unlock() {
        byte[] m = modes.get();
        for (int s = STRIPES - 1; s >= 0; s--) {
            if (m[s] == 1) stripes[s].readLock().unlock();
            else if (m[s] == 2) stripes[s].writeLock().unlock();
            m[s] = 0;
        }
    }
}
