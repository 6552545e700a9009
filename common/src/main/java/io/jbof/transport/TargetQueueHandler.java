package io.jbof.transport;

/** What the target implements per queue; the transport calls it on the queue's thread. */
public interface TargetQueueHandler {
    /** A command capsule arrived. The handler must finish it with {@link TargetRequest#complete}. */
    void onCommand(TargetRequest request);

    /**
     * A command was completed with {@code status}, on the queue's thread, before its response is sent:
     * where the target counts what it served (no allocation, no lock: it runs for every command).
     */
    default void onCompleted(TargetRequest request, int status) {}

    /** The connection ended (by either side); no more calls follow. */
    void onClosed();
}
