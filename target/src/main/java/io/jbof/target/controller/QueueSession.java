package io.jbof.target.controller;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.metrics.Stripes;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.transport.TargetQueue;
import io.jbof.transport.TargetQueueHandler;
import io.jbof.transport.TargetRequest;
import java.util.ArrayDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NVMe queue on the target: unbound until a Fabrics Connect names its controller, then admin
 * (QID 0) or I/O. Every call runs on the queue's own event loop (run to completion).
 */
public final class QueueSession implements TargetQueueHandler {
    private static final Logger log = LoggerFactory.getLogger(QueueSession.class);

    private final TargetQueue queue;
    private final CommandSet commands;
    private Controller controller;
    private int qid = -1;
    private boolean closed;
    /** Read/Write commands waiting for the in-flight budget, in arrival order. */
    private final ArrayDeque<TargetRequest> deferred = new ArrayDeque<>();

    private boolean resuming;
    private final Runnable resume = this::resumeDeferred;
    /** Set when the host must authenticate this queue (DH-HMAC-CHAP) before anything but Disconnect. */
    private QueueAuthentication auth;

    private boolean connectClaimed;

    // Plain counters: written only by this queue's thread, read approximately by the SMART log.
    volatile long readCommands;
    volatile long writeCommands;
    volatile long bytesRead;
    volatile long bytesWritten;

    /** The target port the queue's connection arrived on (which subsystems it may Connect to). */
    private final int portId;

    /** This queue's row in the counter tables: its event loop's ({@link Stripes}). */
    private final int stripe;

    /** The largest data transfer of one command here (the MDTS Identify reports on this transport). */
    final int maxTransfer;

    public QueueSession(TargetQueue queue, CommandSet commands, int portId) {
        this.queue = queue;
        this.commands = commands;
        this.portId = portId;
        this.stripe = Stripes.of(queue.executor());
        this.maxTransfer = commands.limits.maxTransferBytes(queue.maxTransferBytes());
    }

    /** A queue that is not on a port (the in-process loop transport): every subsystem's first listener. */
    public QueueSession(TargetQueue queue, CommandSet commands) {
        this(queue, commands, ANY_PORT);
    }

    static final int ANY_PORT = 0;

    int portId() {
        return portId;
    }

    public TargetQueue queue() {
        return queue;
    }

    public Controller controller() {
        return controller;
    }

    public int qid() {
        return qid;
    }

    QueueAuthentication auth() {
        return auth;
    }

    /** Takes this queue's one Connect; false when a Connect succeeded or is still under way. */
    boolean claimConnect() {
        if (connectClaimed) return false;
        connectClaimed = true;
        return true;
    }

    /** The claimed Connect was refused: the host may try again on this queue. */
    void connectFailed() {
        if (controller == null) connectClaimed = false;
    }

    void requireAuthentication(QueueAuthentication a) {
        this.auth = a;
    }

    void bind(Controller controller, int qid, int entries, boolean sqFlowDisabled) {
        this.controller = controller;
        this.qid = qid;
        queue.bind(qid, entries, sqFlowDisabled);
    }

    @Override
    public void onCommand(TargetRequest request) {
        NvmeCommand cmd = request.command();
        try {
            int invalid = commonFieldsStatus(request);
            if (invalid != Status.SUCCESS) {
                request.complete(invalid, 0);
            } else if (cmd.opcode() == Opcodes.FABRICS) {
                commands.fabrics.handle(this, request);
            } else if (auth != null && !auth.authenticated()) {
                request.complete(Status.dnr(Status.AUTHENTICATION_REQUIRED), 0);
            } else if (controller == null) {
                request.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            } else if (qid == 0) {
                controller.keepAlive();
                commands.admin.handle(this, request);
            } else {
                commands.io.handle(this, request);
            }
        } catch (RuntimeException e) {
            log.error("internal error handling {} on queue {} from {}", cmd, qid, queue.remoteAddress(), e);
            request.complete(Status.INTERNAL_ERROR, 0);
        }
    }

    /**
     * What every command must get right before its opcode is looked at (as Linux's nvmet_req_init): no
     * fused operations, SGLs (PSDT 01b; PRPs mean nothing on a fabric), and a data length within MDTS
     * (an absurd length is refused, never truncated to what the command happens to use).
     */
    private int commonFieldsStatus(TargetRequest request) {
        int flags = request.command().flags();
        if ((flags & NvmeCommand.FLAGS_FUSE_MASK) != 0) return Status.dnr(Status.INVALID_FIELD);
        if ((flags & NvmeCommand.FLAGS_PSDT_MASK) != NvmeCommand.FLAGS_SGL) return Status.dnr(Status.INVALID_FIELD);
        if (request.sglStatus() == Status.SUCCESS) {
            int length = request.transferLength();
            if (length < 0 || length > maxTransfer) return Status.dnr(Status.INVALID_FIELD);
        }
        return Status.SUCCESS;
    }

    /**
     * Whether a Read/Write of {@code bytes} may run now under the in-flight budget (the command then
     * holds them until it completes); if not, it waits here (behind any already waiting on this queue,
     * so the queue keeps its order) and is dispatched again when the budget allows.
     */
    boolean admit(IoCommands.IoOp op, int bytes) {
        InflightBudget b = commands.inflight;
        if ((deferred.isEmpty() || resuming) && op.hold(b, bytes)) return true;
        if (resuming) deferred.addFirst(op.req);
        else deferred.add(op.req);
        b.await(this, bytes);
        return false;
    }

    /** Called from any thread when budget was released. */
    void wake() {
        queue.executor().execute(resume);
    }

    private void resumeDeferred() {
        resuming = true;
        try {
            while (!deferred.isEmpty() && !closed) {
                int before = deferred.size();
                onCommand(deferred.poll());
                if (deferred.size() >= before) return; // it went back to wait
            }
        } finally {
            resuming = false;
        }
    }

    /** An I/O command traced at dispatch completed: its namespace counts it in this loop's row. */
    @Override
    public void onCompleted(TargetRequest request, int status) {
        Object a = request.attachment();
        if (!(a instanceof IoCommands.IoOp)) return;
        IoCommands.IoOp op = (IoCommands.IoOp) a;
        TargetNamespace ns = op.traced;
        if (ns == null) return;
        op.traced = null;
        ns.stats().record(stripe, op.tracedOp, op.tracedBytes, System.nanoTime() - op.startNanos, status);
    }

    @Override
    public void onClosed() {
        closed = true;
        TargetRequest r;
        while ((r = deferred.poll()) != null) r.complete(Status.ABORTED_SQ_DELETION, 0);
        if (controller != null) controller.detach(this);
    }

    void closeQueue(String reason) {
        if (!closed) queue.executor().execute(() -> queue.close(reason));
    }
}
