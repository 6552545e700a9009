package io.jbof.transport.rdma;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.impl.NatObject;
import io.jbof.util.Tunable;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread that owns a set of RDMA queue pairs from capsule in to response out (SPDK's poller,
 * Netty's event loop): it polls their completion queues, runs tasks, and when nothing is left to do
 * arms the CQs and sleeps on the completion channel and a wake-up eventfd at once. Its completion
 * sources run to completion on this thread; nothing is handed to another thread per I/O.
 */
public final class RdmaEventLoop extends SingleThreadEventExecutor {
    private static final Logger log = LoggerFactory.getLogger(RdmaEventLoop.class);
    /** Polls of empty CQs before the loop arms them and sleeps: cheap latency for back-to-back I/O. */
    private static final int SPIN_POLLS = Tunable.RDMA_SPIN_POLLS.intValue();

    /** A queue pair's completion queue, polled on this loop. */
    public interface CompletionSource {
        /** Polls and handles completions; returns how many there were. */
        int poll() throws IOException;

        /** Requests an event for the next completion. */
        void arm() throws IOException;
    }

    private final List<CompletionSource> sources = new ArrayList<>();
    private final Map<Long, IbvCompChannel> channels = new HashMap<>();
    private final AtomicBoolean awake = new AtomicBoolean(true);
    private volatile int wakeFd = -1;

    RdmaEventLoop(EventExecutorGroup parent, Executor executor) {
        super(parent, executor, false);
    }

    /** The completion channel of this loop for a device (created once per device). Loop thread only. */
    IbvCompChannel channel(IbvContext context) throws IOException {
        long key = ((NatObject) context).getObjId();
        IbvCompChannel c = channels.get(key);
        if (c == null) {
            c = context.createCompChannel();
            channels.put(key, c);
        }
        return c;
    }

    void add(CompletionSource s) {
        sources.add(s);
    }

    void remove(CompletionSource s) {
        sources.remove(s);
    }

    @Override
    protected void wakeup(boolean inEventLoop) {
        if (!inEventLoop && awake.compareAndSet(false, true) && wakeFd >= 0) RdmaNative.signal(wakeFd);
    }

    @Override
    protected void run() {
        try {
            wakeFd = RdmaNative.eventFd();
        } catch (IOException e) {
            log.error("RDMA event loop cannot start: {}", e.getMessage());
            return;
        }
        int idle = 0;
        try {
            for (; ; ) {
                int work = pollAll();
                boolean ran = runAllTasks();
                if (confirmShutdown()) break;
                if (work > 0 || ran) {
                    idle = 0;
                    continue;
                }
                if (++idle < SPIN_POLLS) continue;
                idle = 0;
                sleep();
            }
        } finally {
            for (IbvCompChannel c : channels.values()) {
                try {
                    c.destroyCompChannel();
                } catch (IOException | RuntimeException e) {
                    log.debug("destroying a completion channel: {}", e.toString());
                }
            }
            RdmaNative.closeFd(wakeFd);
        }
    }

    private void sleep() {
        awake.set(false);
        try {
            for (CompletionSource s : sources) arm(s);
            if (pollAll() > 0 || hasTasks()) return;
            long delay = delayNanos(System.nanoTime());
            int timeout = (int) Math.min(1000, Math.max(1, TimeUnit.NANOSECONDS.toMillis(delay + 999_999)));
            long channel = channels.size() == 1
                    ? ((NatObject) channels.values().iterator().next()).getObjId()
                    : 0;
            // More than one device: the wait covers none of their channels, so it is bounded short.
            if (channels.size() > 1) timeout = 1;
            int r = RdmaNative.await(channel, wakeFd, timeout);
            if (r < 0) log.debug("RDMA event loop wait failed: errno {}", -r);
        } finally {
            awake.set(true);
        }
    }

    private int pollAll() {
        int n = 0;
        for (int i = 0; i < sources.size(); i++) {
            CompletionSource s = sources.get(i);
            try {
                n += s.poll();
            } catch (IOException | RuntimeException e) {
                log.warn("polling an RDMA completion queue failed: {}", e.toString());
            }
        }
        return n;
    }

    private static void arm(CompletionSource s) {
        try {
            s.arm();
        } catch (IOException | RuntimeException e) {
            log.debug("arming an RDMA completion queue: {}", e.toString());
        }
    }
}
