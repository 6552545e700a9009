package io.jbof.target.namespace;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.transport.tcp.EventLoops;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;

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
}
