package io.jbof.initiator.queue;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One host queue: command IDs (slot index = CID), the commands in flight, the ones waiting for a free
 * slot, and per-command timeouts checked by one periodic task (no timer per command). Everything
 * runs on the connection's event loop; {@link #submit} from another thread hops onto it.
 */
public final class QueuePair implements HostConnection.Listener {
    private static final Logger log = LoggerFactory.getLogger(QueuePair.class);

    private final int qid;
    private final Slot[] slots;
    private final int[] free;
    private int freeCount;
    private final ArrayDeque<Request> waiting = new ArrayDeque<>();
    private final long defaultTimeoutNanos;
    private HostConnection connection;
    private EventExecutor loop;
    private ScheduledFuture<?> timeoutCheck;
    private volatile Throwable closedCause;
    private boolean flushPending;
    private final Runnable flushTask = this::flushNow;
    private final Queue<Request> incoming = PlatformDependent.newMpscQueue();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainIncoming = this::drainIncoming;

    // Reconnect support (set by the controller when a controller-loss timeout is configured).
    /** Called on the loop when the connection ends by itself (not by {@link #close}). */
    private Runnable lossListener;
    /** On loss, keep in-flight and new commands (to resend after {@link #resume}) instead of failing them. */
    private boolean parkOnLoss;
    /** Connection lost, commands parked in {@link #waiting}; only priority commands (Connect) are sent. */
    private boolean parked;
    /** While parked: new commands fail at once (fast_io_fail_tmo passed) instead of waiting. */
    private Throwable parkedFailure;

    private volatile boolean closing;

    public QueuePair(int qid, int depth, long defaultTimeoutNanos) {
        this.qid = qid;
        this.slots = new Slot[depth];
        this.free = new int[depth];
        for (int i = 0; i < depth; i++) {
            slots[i] = new Slot(i);
            free[i] = depth - 1 - i;
        }
        this.freeCount = depth;
        this.defaultTimeoutNanos = defaultTimeoutNanos;
    }

    /** Binds the queue to its connection (once the transport connected). */
    public void attach(HostConnection connection) {
        this.connection = connection;
        this.loop = connection.executor();
        long period = Math.max(TimeUnit.NANOSECONDS.toMillis(defaultTimeoutNanos) / 4, 50);
        timeoutCheck = loop.scheduleAtFixedRate(this::expireTimedOut, period, period, TimeUnit.MILLISECONDS);
    }

    public int qid() {
        return qid;
    }

    public int depth() {
        return slots.length;
    }

    public EventExecutor executor() {
        return loop;
    }

    public HostConnection connection() {
        return connection;
    }

    public boolean isOpen() {
        return closedCause == null && connection != null && connection.isOpen();
    }

    /** Submits from any thread; the callback runs on this queue's event loop. */
    public void submit(Request r) {
        if (loop.inEventLoop()) {
            submitOnLoop(r);
        } else {
            // Other threads hand requests over through a bounded-growth MPSC array queue and one reusable
            // drain task, scheduled only when the queue goes from idle to busy: no allocation per submit.
            incoming.offer(r);
            if (drainScheduled.compareAndSet(false, true)) loop.execute(drainIncoming);
        }
    }

    private void drainIncoming() {
        drainScheduled.set(false);
        Request r;
        while ((r = incoming.poll()) != null) submitOnLoop(r);
    }

    private void submitOnLoop(Request r) {
        Throwable dead = closedCause;
        if (dead != null) {
            r.callback.onComplete(r, -1, 0, dead);
            return;
        }
        if (parked) {
            if (parkedFailure != null) r.callback.onComplete(r, -1, 0, parkedFailure);
            else waiting.add(r);
            return;
        }
        if (freeCount == 0) {
            waiting.add(r);
            return;
        }
        dispatch(r, slots[free[--freeCount]]);
    }

    private void dispatch(Request r, Slot s) {
        s.request = r;
        s.deadline = System.nanoTime() + (r.timeoutNanos > 0 ? r.timeoutNanos : defaultTimeoutNanos);
        r.encode(s.command);
        s.command.cid(s.cid);
        connection.send(s);
        if (!flushPending) {
            flushPending = true;
            loop.execute(flushTask); // one flush for every command submitted in this loop turn
        }
    }

    private void flushNow() {
        flushPending = false;
        connection.flush();
    }

    private void finish(Slot s, int status, long result, Throwable error) {
        Request r = s.request;
        s.request = null;
        free[freeCount++] = s.cid;
        // Parked: only the reviving Connect runs. Failed: the connection is gone, so nothing more is sent (a waiting
        // command dispatched into the slot being failed would never complete).
        Request next = parked || closedCause != null ? null : waiting.poll();
        if (next != null) dispatch(next, slots[free[--freeCount]]);
        r.callback.onComplete(r, status, result, error);
    }

    private void expireTimedOut() {
        long now = System.nanoTime();
        for (Slot s : slots) {
            if (s.request != null && now - s.deadline > 0) {
                String what = String.format(
                        "command opcode 0x%02x (CID %d) on queue %d timed out after %d ms; closing the queue",
                        s.request.opcode,
                        s.cid,
                        qid,
                        TimeUnit.NANOSECONDS.toMillis(
                                s.request.timeoutNanos > 0 ? s.request.timeoutNanos : defaultTimeoutNanos));
                log.warn(what);
                if (parkOnLoss && !closing) {
                    // Error recovery as Linux does it: drop the connection; its commands are resent after reconnecting.
                    connection.close();
                    return;
                }
                // The CID cannot be reused while the controller may still answer it: the queue dies.
                fail(new TimeoutException(what));
                connection.close();
                return;
            }
        }
    }

    private void fail(Throwable cause) {
        if (closedCause == null) closedCause = cause;
        for (Slot s : slots) {
            if (s.request != null) finish(s, -1, 0, cause);
        }
        Request r;
        while ((r = waiting.poll()) != null) r.callback.onComplete(r, -1, 0, cause);
    }

    // ---- HostConnection.Listener ----

    @Override
    public HostCommand lookup(int cid) {
        return cid < slots.length && slots[cid].request != null ? slots[cid] : null;
    }

    @Override
    public void onClosed(Throwable cause) {
        if (timeoutCheck != null) timeoutCheck.cancel(false);
        Throwable c = cause != null ? cause : new IOException("queue " + qid + " closed");
        if (!closing && parkOnLoss && closedCause == null) {
            park();
        } else {
            fail(c);
        }
        if (!closing && lossListener != null) lossListener.run();
    }

    /** In-flight commands go back to the front of the line, in CID order; they are resent after {@link #resume}. */
    private void park() {
        parked = true;
        for (int i = slots.length - 1; i >= 0; i--) {
            Slot s = slots[i];
            if (s.request == null) continue;
            Request r = s.request;
            s.request = null;
            free[freeCount++] = s.cid;
            waiting.addFirst(r);
        }
    }

    /**
     * What to do when the connection ends by itself: {@code listener} runs on the loop, and with
     * {@code park} the queue keeps its commands for {@link #reattach} / {@link #resume}.
     */
    public void onLoss(Runnable listener, boolean park) {
        this.lossListener = listener;
        this.parkOnLoss = park;
    }

    /** A new connection on the same loop (from the transport's connect with this queue's executor); still parked. */
    public void reattach(HostConnection c) {
        if (c.executor() != loop) throw new IllegalStateException("queue " + qid + " must stay on its event loop");
        loop.execute(() -> {
            connection = c;
            long period = Math.max(TimeUnit.NANOSECONDS.toMillis(defaultTimeoutNanos) / 4, 50);
            timeoutCheck = loop.scheduleAtFixedRate(this::expireTimedOut, period, period, TimeUnit.MILLISECONDS);
        });
    }

    /** Sends {@code r} now even while parked (the Connect that revives the queue). */
    public void submitPriority(Request r) {
        loop.execute(() -> {
            if (freeCount == 0) {
                r.callback.onComplete(r, -1, 0, new IOException("queue " + qid + " has no free command slot"));
                return;
            }
            dispatch(r, slots[free[--freeCount]]);
        });
    }

    /** Connected again: parked commands go out (resent from the start), new ones flow. */
    public void resume() {
        loop.execute(() -> {
            parked = false;
            parkedFailure = null;
            Request r;
            while (freeCount > 0 && (r = waiting.poll()) != null) dispatch(r, slots[free[--freeCount]]);
        });
    }

    /** While reconnecting: fail what is parked and what arrives until {@link #resume} (fast_io_fail_tmo). */
    public void failParked(Throwable cause) {
        loop.execute(() -> {
            if (!parked) return;
            parkedFailure = cause;
            Request r;
            while ((r = waiting.poll()) != null) r.callback.onComplete(r, -1, 0, cause);
        });
    }

    /** Ends the queue for good: everything parked or in flight fails with {@code cause}. */
    public void failForGood(Throwable cause) {
        loop.execute(() -> {
            parked = false;
            fail(cause);
        });
    }

    /** Closes the connection as a loss would (the queue parks its commands if it parks on loss). */
    public void dropConnection() {
        HostConnection c = connection;
        if (c != null) c.close();
    }

    /** Closes for good: in-flight and held commands fail. */
    public void close() {
        closing = true;
        if (connection != null) connection.close();
        if (loop == null) return;
        try {
            loop.execute(() -> {
                if (parked) {
                    parked = false;
                    fail(new IOException("queue " + qid + " closed while reconnecting"));
                }
            });
        } catch (RejectedExecutionException e) {
            // the event loops are gone already: nothing can be pending on them
        }
    }

    /** A CID and its reusable capsule buffer. */
    private final class Slot implements HostCommand {
        final int cid;
        // Heap: the transport copies it into its PDU header, and it lives as long as the queue object.
        final ByteBuf capsule =
                Unpooled.buffer(NvmeCommand.SIZE, NvmeCommand.SIZE).writerIndex(NvmeCommand.SIZE);
        final NvmeCommand command = new NvmeCommand().wrap(capsule, 0);
        Request request;
        long deadline;
        int transferred;

        Slot(int cid) {
            this.cid = cid;
        }

        @Override
        public ByteBuf capsule() {
            return capsule;
        }

        @Override
        public ByteBuf data() {
            return request.data;
        }

        @Override
        public int dataLength() {
            return request.dataLength;
        }

        @Override
        public boolean dataToController() {
            return request.toController;
        }

        @Override
        public int transferred() {
            return transferred;
        }

        @Override
        public void transferred(int bytes) {
            transferred = bytes;
        }

        @Override
        public void onCompletion(NvmeCompletion c) {
            finish(this, c.status(), c.result64(), null);
        }
    }
}
