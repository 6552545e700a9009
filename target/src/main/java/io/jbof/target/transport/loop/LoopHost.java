package io.jbof.target.transport.loop;

import io.jbof.nvme.Connect;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Properties;
import io.jbof.nvme.Status;
import io.jbof.target.controller.CommandSet;
import io.jbof.target.controller.InflightBudget;
import io.jbof.target.controller.QueueSession;
import io.jbof.target.controller.TargetContext;
import io.jbof.transport.TransportType;
import io.netty.buffer.ByteBuf;
import java.util.UUID;

/**
 * The few steps a host takes before I/O, done in process: an admin queue connected and enabled
 * (CC.EN, 64-byte SQEs, 16-byte CQEs) and one I/O queue, each a {@link QueueSession} on a
 * {@link LoopQueue}. For tests and benchmarks of the target alone.
 */
public final class LoopHost {
    public static final String HOST_NQN_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";

    public final QueueSession admin;
    public final QueueSession io;
    public final int cntlid;
    private final LoopQueue ioQueue;

    private LoopHost(QueueSession admin, QueueSession io, int cntlid, LoopQueue ioQueue) {
        this.admin = admin;
        this.io = io;
        this.cntlid = cntlid;
        this.ioQueue = ioQueue;
    }

    /** Connects to {@code subNqn} as a host named after {@code hostId}, over loop queues that answer as {@code as}. */
    public static LoopHost connect(TargetContext target, String subNqn, UUID hostId, TransportType as) {
        return connect(target, new InflightBudget(0), subNqn, hostId, as);
    }

    /** As {@link #connect(TargetContext, String, UUID, TransportType)}, its Reads and Writes bounded by {@code inflight}. */
    public static LoopHost connect(
            TargetContext target, InflightBudget inflight, String subNqn, UUID hostId, TransportType as) {
        return connect(target, inflight, subNqn, hostId, as, Long.MAX_VALUE);
    }

    /** As {@link #connect(TargetContext, InflightBudget, String, UUID, TransportType)}, over queues that carry at most {@code maxTransferBytes} per command. */
    public static LoopHost connect(
            TargetContext target,
            InflightBudget inflight,
            String subNqn,
            UUID hostId,
            TransportType as,
            long maxTransferBytes) {
        CommandSet commands = new CommandSet(target, inflight);
        LoopQueue adminQueue = new LoopQueue(as, 8192, maxTransferBytes);
        QueueSession admin = new QueueSession(adminQueue, commands);
        int cntlid;
        try (LoopRequest r = new LoopRequest(adminQueue, null)) {
            connect(admin, r, hostId, subNqn, 0, 0xFFFF);
            cntlid = (int) (r.result() & 0xFFFF);
            r.reset(Opcodes.FABRICS, 0)
                    .fctype(Opcodes.FCTYPE_PROPERTY_SET)
                    .cdw(11, Properties.CC)
                    .cdw(12, Properties.CC_EN | (6 << 16) | (4 << 20));
            admin.onCommand(r);
            check(r, "Property Set CC.EN");
        }
        LoopQueue ioQueue = new LoopQueue(as, 16384, maxTransferBytes);
        QueueSession io = new QueueSession(ioQueue, commands);
        try (LoopRequest r = new LoopRequest(ioQueue, null)) {
            connect(io, r, hostId, subNqn, 1, cntlid);
        }
        return new LoopHost(admin, io, cntlid, ioQueue);
    }

    /** A new command slot on the I/O queue; data to the host goes into {@code hostBuffer} (null: dropped). Close it when done. */
    public LoopRequest ioRequest(ByteBuf hostBuffer) {
        return new LoopRequest(ioQueue, hostBuffer);
    }

    /** A new command slot on the admin queue. Close it when done. */
    public LoopRequest adminRequest(ByteBuf hostBuffer) {
        return new LoopRequest((LoopQueue) admin.queue(), hostBuffer);
    }

    private static void connect(QueueSession s, LoopRequest r, UUID hostId, String subNqn, int qid, int cntlid) {
        ByteBuf data = Connect.data(hostId, cntlid, subNqn, HOST_NQN_PREFIX + hostId);
        try {
            r.reset(Opcodes.FABRICS, Connect.DATA_SIZE)
                    .fctype(Opcodes.FCTYPE_CONNECT)
                    .cdw(10, qid << 16)
                    .cdw(11, 31);
            r.payload(data);
            s.onCommand(r);
            check(r, "Connect (queue " + qid + ")");
        } finally {
            data.release();
        }
    }

    /** Throws unless {@code r} completed with success: setup steps must not take an error path unseen. */
    public static void check(LoopRequest r, String what) {
        if (r.status() != Status.SUCCESS)
            throw new IllegalStateException(what + " failed: " + Status.describe(r.status()));
    }
}
