package io.jbof.transport;

import io.jbof.nvme.tls.TlsPskIdentity;
import io.netty.util.concurrent.EventExecutor;

/**
 * The target's view of one NVMe queue pair carried by a transport connection (a TCP connection or
 * an RDMA QP). Every call is made on {@link #executor()}, the one thread that owns the queue.
 */
public interface TargetQueue {
    /** The thread that owns this queue: commands arrive on it and must be completed on it. */
    EventExecutor executor();

    /** The transport carrying this queue, as it describes itself. */
    TransportType transport();

    /** The peer, for logs and access decisions. */
    String remoteAddress();

    /** The TLS PSK identity this queue's host proved (NVMe/TCP over TLS), or null on a plain queue. */
    default TlsPskIdentity tlsIdentity() {
        return null;
    }

    /** In-capsule data the transport accepts on this queue, in bytes. */
    int inCapsuleDataSize();

    /**
     * The largest data transfer of one command this queue's transport can carry (its part of MDTS, as
     * Linux's nvmet_fabrics_ops.get_mdts): the controller advertises and enforces the smaller of this
     * and its own limit. NVMe/TCP has no bound of its own.
     */
    default long maxTransferBytes() {
        return Long.MAX_VALUE;
    }

    /**
     * Set once Connect succeeded: the queue ID and size (entries) used for the SQ head pointer in
     * completions, and whether the host turned SQ flow control off.
     */
    void bind(int qid, int sqSize, boolean sqFlowControlDisabled);

    /** Ends the connection: in-flight commands are failed, the handler's onClosed follows. */
    void close(String reason);
}
