package io.jbof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.SelectStrategy;
import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The poll-before-sleep choice of an event loop, on a clock the test moves. */
class SpinBeforeSleepTest {
    private static final long SPIN = 50_000;

    private long now = 1_000_000_000L;
    /** Each look at the clock moves it 1 µs, so a poll with nothing ready ends after SPIN of them. */
    private final SpinBeforeSleep strategy = new SpinBeforeSleep(SPIN, () -> now += 1_000);

    private final AtomicInteger polls = new AtomicInteger();

    @Test
    void aLoopThatSleptLongSleepsAgainWithoutPolling() throws Exception {
        assertEquals(SelectStrategy.SELECT, strategy.calculateStrategy(this::nothingReady, false));
        now += 10_000_000; // slept 10 ms: idle
        assertEquals(SelectStrategy.SELECT, strategy.calculateStrategy(this::nothingReady, false));
        assertEquals(0, polls.get());
    }

    @Test
    void aLoopWokenSoonAfterItSleptPollsAndTakesWhatArrives() throws Exception {
        assertEquals(SelectStrategy.SELECT, strategy.calculateStrategy(this::nothingReady, false));
        now += 100_000; // woken after 100 µs: steady traffic
        int[] readyOnPoll = {0, 0, 0, 2};
        assertEquals(2, strategy.calculateStrategy(() -> readyOnPoll[Math.min(polls.getAndIncrement(), 3)], false));
        assertEquals(4, polls.get());
    }

    @Test
    void pollingThatFindsNothingEndsInSleepAfterTheSpinTime() throws Exception {
        strategy.calculateStrategy(this::nothingReady, false);
        now += 100_000;
        long start = now;
        assertEquals(SelectStrategy.SELECT, strategy.calculateStrategy(this::nothingReady, false));
        assertEquals(SPIN / 1_000, polls.get(), "one poll per µs of the spin");
        assertEquals(start + SPIN + 2_000, now); // and the clock read as it went to sleep
    }

    @Test
    void aTaskHandedToThePollingLoopEndsThePoll() throws Exception {
        DefaultEventExecutor loop = new DefaultEventExecutor();
        try {
            int strategyResult = loop.submit(() -> {
                        strategy.calculateStrategy(this::nothingReady, false);
                        now += 100_000;
                        loop.execute(() -> {}); // pending on this loop
                        return strategy.calculateStrategy(this::nothingReady, false);
                    })
                    .get(10, TimeUnit.SECONDS);
            assertEquals(0, strategyResult, "runs the task instead of polling on");
            assertEquals(1, polls.get());
        } finally {
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void withTasksWaitingItLooksOnceAsNettyDoes() throws Exception {
        assertEquals(0, strategy.calculateStrategy(this::nothingReady, true));
        assertEquals(1, polls.get());
    }

    @Test
    void aLoopWithoutPollSleepsAtOnceUntilItsWorkAsksForOne() throws Exception {
        SpinBeforeSleep off = new SpinBeforeSleep(0, () -> now += 1_000);
        assertEquals(SelectStrategy.SELECT, off.calculateStrategy(this::nothingReady, false));
        now += 100_000;
        assertEquals(SelectStrategy.SELECT, off.calculateStrategy(this::nothingReady, false));
        assertEquals(0, polls.get(), "no poll while off");
        off.pollAtLeast(SPIN);
        off.pollAtLeast(SPIN / 2); // a smaller ask leaves the larger
        off.calculateStrategy(this::nothingReady, false);
        now += 100_000;
        off.calculateStrategy(this::nothingReady, false);
        assertEquals(SPIN / 1_000, polls.get(), "polls as long as the larger ask");
    }

    private int nothingReady() {
        polls.incrementAndGet();
        return 0;
    }
}
