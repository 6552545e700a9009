package io.jbof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RdmaEventLoopTest {
    private RdmaEventLoopGroup group;

    @AfterEach
    void stop() {
        if (group != null) group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Completions a test feeds in; the loop polls them like a CQ. */
    private static final class FakeCompletions implements RdmaEventLoop.CompletionSource {
        final List<Integer> pending = new ArrayList<>();
        final List<Integer> handled = new ArrayList<>();
        final List<Thread> pollers = new ArrayList<>();
        final CountDownLatch armed = new CountDownLatch(1);
        final CountDownLatch done;

        FakeCompletions(int expected) {
            done = new CountDownLatch(expected);
        }

        @Override
        public synchronized int poll() {
            int n = Math.min(pending.size(), 4); // batches, as a poll over a fixed array of work completions
            for (int i = 0; i < n; i++) {
                handled.add(pending.remove(0));
                done.countDown();
            }
            if (n > 0) pollers.add(Thread.currentThread());
            return n;
        }

        @Override
        public void arm() {
            armed.countDown();
        }
    }

    @Test
    void completionsOfEverySourceAreHandledInOrderOnTheLoopAndATaskWakesAnIdleLoop() throws Exception {
        assumeTrue(RdmaNative.problem() == null, "libdisni.so not built: " + RdmaNative.problem());
        group = new RdmaEventLoopGroup(1, "test-rdma");
        RdmaEventLoop loop = group.next();
        FakeCompletions a = new FakeCompletions(10), b = new FakeCompletions(3);
        loop.submit(() -> {
                    loop.add(a);
                    loop.add(b);
                })
                .get(5, TimeUnit.SECONDS);
        // Let the loop go idle: it arms every source before it sleeps.
        assertTrue(
                a.armed.await(10, TimeUnit.SECONDS) && b.armed.await(10, TimeUnit.SECONDS),
                "an idle loop arms its completion queues");

        // A task from another thread wakes it; the task feeds completions the loop then polls in batches.
        loop.execute(() -> {
            synchronized (a) {
                for (int i = 0; i < 10; i++) a.pending.add(i);
            }
            synchronized (b) {
                for (int i = 0; i < 3; i++) b.pending.add(100 + i);
            }
        });
        assertTrue(a.done.await(10, TimeUnit.SECONDS) && b.done.await(10, TimeUnit.SECONDS));
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), a.handled);
        assertEquals(List.of(100, 101, 102), b.handled);
        Thread loopThread = loop.submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
        assertTrue(
                a.pollers.stream().allMatch(t -> t == loopThread)
                        && b.pollers.stream().allMatch(t -> t == loopThread),
                "completions are handled on the loop's own thread only");
    }
}
