package io.jbof.target.namespace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.transport.tcp.EventLoops;
import io.jbof.transport.tcp.LoopTurnWork;
import io.jbof.util.Tunable;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.Test;

/**
 * The same ring behaviour on the loops NVMe/TCP queues run on (EventLoops.group, epoll): there the
 * kernel wakes the loop through its eventfd and the loop reaps each turn, with no thread waiting beside it.
 */
class DirectIoRingOnEpollLoopTest extends DirectIoRingTest {
    @Override
    EventExecutor newLoop() {
        assumeTrue(EventLoops.EPOLL, "epoll unavailable");
        return EventLoops.group(1, new DefaultThreadFactory("ring-test")).next();
    }

    @Override
    boolean expectsWaker() {
        return false;
    }

    @Test
    void aLoopPollsBeforeItSleepsOnceItServesARing() throws Exception {
        assumeTrue(Tunable.TCP_SPIN_MICROS.longValue() == 0, "every loop polls already");
        assertEquals(0, onLoop(LoopTurnWork::pollBeforeSleepNanos), "a plain NVMe/TCP loop sleeps at once");
        assertNotNull(onLoop(() -> DirectIoRing.of(loop)));
        assertEquals(Tunable.DIRECT_IO_SPIN_MICROS.longValue() * 1000, onLoop(LoopTurnWork::pollBeforeSleepNanos));
    }
}
