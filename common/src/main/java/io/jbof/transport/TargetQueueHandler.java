package io.jbof.transport;

/** What the target implements per queue; the transport calls it on the queue's thread. */
public interface TargetQueueHandler {
    /** A command capsule arrived. The handler must finish it with {@link TargetRequest#complete}. */
    void onCommand(TargetRequest request);

    /** The connection ended (by either side); no more calls follow. */
    void onClosed();
}
