package io.jbof.target.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.transport.rdma.RegisteredMemory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DataBufferPoolTest {
    /** A request that needs {@code n} buffers and takes them when resumed. */
    private static final class Waiter implements DataBufferPool.Waiter {
        final DataBufferPool pool;
        final int n;
        final int[] got;
        final List<Waiter> order;

        Waiter(DataBufferPool pool, int n, List<Waiter> order) {
            this.pool = pool;
            this.n = n;
            this.got = new int[n];
            this.order = order;
        }

        @Override
        public int buffersNeeded() {
            return n;
        }

        @Override
        public void resume() {
            pool.take(n, got);
            order.add(this);
        }
    }

    @Test
    void transfersThatFindTooFewBuffersWaitAndResumeInArrivalOrder() {
        DataBufferPool pool = new DataBufferPool(new PageBufferPool(4, 4096), (RegisteredMemory) null);
        int[] first = new int[3];
        assertTrue(pool.tryAcquire(3, first));
        List<Waiter> resumed = new ArrayList<>();
        Waiter big = new Waiter(pool, 2, resumed);
        Waiter small = new Waiter(pool, 1, resumed);
        int[] tmp = new int[2];
        assertFalse(pool.tryAcquire(2, tmp), "2 buffers wanted, 1 free");
        pool.waitFor(big);
        // One buffer is free, but a later small transfer must not overtake the waiting big one.
        assertFalse(pool.tryAcquire(1, tmp), "a newcomer may not jump the queue");
        pool.waitFor(small);
        assertEquals(1, pool.pool.available());

        pool.release(first, 1);
        assertEquals(List.of(big), resumed, "the first waiter resumes as soon as its 2 buffers are there");
        assertEquals(0, pool.pool.available());

        pool.release(new int[] {first[1], first[2]}, 2);
        assertEquals(List.of(big, small), resumed);
        assertEquals(1, pool.pool.available());
        pool.release(big.got, 2);
        pool.release(small.got, 1);
        assertEquals(4, pool.pool.available(), "every buffer came back");
    }
}
