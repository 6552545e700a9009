package io.jbof.fuse;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class StripedBlockLocksTest {
    private static final int BS = 4096;
    private final StripedBlockLocks locks = new StripedBlockLocks();

    private static ByteRange range(long offset, int length) {
        return new ByteRange().set(offset, length, BS);
    }

    @Test
    void tryLockOfWholeBlocksFailsWhereAPatchHoldsOneAndHoldsNothingThen() {
        StripedBlockLocks.Held patch = new StripedBlockLocks.Held();
        locks.lock(range(3 * BS + 10, 100), patch); // block 3 exclusively
        StripedBlockLocks.Held write = new StripedBlockLocks.Held();
        assertFalse(locks.tryLock(range(0, 8 * BS), write), "blocks 0..7 include the patched block 3");
        // What it took before it met block 3 (blocks 0..2) it gave back: a patch of each gets it at once.
        for (int b = 0; b < 3; b++) {
            StripedBlockLocks.Held other = new StripedBlockLocks.Held();
            assertTrue(locks.tryLock(range(b * BS + 1, 10), other), "block " + b + " was left taken");
            locks.unlock(other);
        }
        locks.unlock(patch);
        assertTrue(locks.tryLock(range(0, 8 * BS), write));
        locks.unlock(write);
    }

    @Test
    void tryLockDoesNotOvertakeAPatchWaitingForItsBlock() throws Exception {
        StripedBlockLocks.Held first = new StripedBlockLocks.Held();
        assertTrue(locks.tryLock(range(0, BS), first)); // block 0 shared, as a whole-block write in flight
        CountDownLatch patched = new CountDownLatch(1);
        Thread patcher = new Thread(() -> {
            StripedBlockLocks.Held p = new StripedBlockLocks.Held();
            locks.lock(range(5, 10), p); // waits for the write on block 0
            locks.unlock(p);
            patched.countDown();
        });
        patcher.start();
        while (patcher.getState() != Thread.State.WAITING) {
            assertTrue(patcher.isAlive());
            Thread.onSpinWait();
        }
        StripedBlockLocks.Held second = new StripedBlockLocks.Held();
        assertFalse(locks.tryLock(range(0, BS), second), "a later writer overtook the waiting patch");
        locks.unlock(first);
        patched.await();
        assertTrue(locks.tryLock(range(0, BS), second));
        locks.unlock(second);
    }
}
