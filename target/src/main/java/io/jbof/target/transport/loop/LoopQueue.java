package io.jbof.target.transport.loop;

import io.jbof.transport.TargetQueue;
import io.jbof.transport.TransportType;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;

/**
 * A queue with no wire under it, as Linux's nvme-loop: the caller's thread is the queue's thread, so
 * the target's command handling can be driven (by tests, by JMH) without a socket or an initiator.
 * It answers as a queue of the transport it is given would (Identify's SGL support follows it).
 */
public final class LoopQueue implements TargetQueue {
    private final TransportType as;
    private final int inCapsuleDataSize;
    private final long maxTransferBytes;
    private volatile int qid = -1;
    private volatile String closedBecause;

    public LoopQueue(TransportType as, int inCapsuleDataSize) {
        this(as, inCapsuleDataSize, Long.MAX_VALUE);
    }

    /** A queue whose transport carries at most {@code maxTransferBytes} in one command (as RDMA's registered buffers bound it). */
    public LoopQueue(TransportType as, int inCapsuleDataSize, long maxTransferBytes) {
        this.as = as;
        this.inCapsuleDataSize = inCapsuleDataSize;
        this.maxTransferBytes = maxTransferBytes;
    }

    @Override
    public EventExecutor executor() {
        return ImmediateEventExecutor.INSTANCE;
    }

    @Override
    public TransportType transport() {
        return as;
    }

    @Override
    public String remoteAddress() {
        return "loop";
    }

    @Override
    public int inCapsuleDataSize() {
        return inCapsuleDataSize;
    }

    @Override
    public long maxTransferBytes() {
        return maxTransferBytes;
    }

    @Override
    public void bind(int qid, int sqSize, boolean sqFlowControlDisabled) {
        this.qid = qid;
    }

    @Override
    public void close(String reason) {
        closedBecause = reason;
    }

    /** The queue ID a successful Connect bound, or -1. */
    public int qid() {
        return qid;
    }

    /** Why the target closed this queue, or null while it has not. */
    public String closedBecause() {
        return closedBecause;
    }
}
