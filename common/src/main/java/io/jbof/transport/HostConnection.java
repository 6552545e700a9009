package io.jbof.transport;

import io.netty.util.concurrent.EventExecutor;

/** One queue's connection on the host side: a TCP connection or an RDMA QP. */
public interface HostConnection {
    EventExecutor executor();

    /** Sends a command; must be called on {@link #executor()}. Output is flushed by {@link #flush()}. */
    void send(HostCommand command);

    /** Pushes out what {@link #send} queued (batching several sends into one write). */
    void flush();

    /** In-capsule data this connection may use for writes (from the controller's IOCCSZ). */
    void inCapsuleDataSize(int bytes);

    boolean isOpen();

    void close();

    /** What the host queue logic provides to the transport. */
    interface Listener {
        /** The in-flight command with this CID, or null if none. */
        HostCommand lookup(int cid);

        /** The connection ended; in-flight commands must be failed. */
        void onClosed(Throwable cause);
    }
}
