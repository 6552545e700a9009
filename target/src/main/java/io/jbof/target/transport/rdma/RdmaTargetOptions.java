package io.jbof.target.transport.rdma;

import io.jbof.util.Tunable;

/**
 * @param inCapsuleDataSize data a host may put in a command capsule (IOCCSZ minus the command)
 * @param maxQueueEntries   entries of an I/O queue (HSQSIZE + 1 bound)
 * @param maxIoQueues       highest queue ID a connect request may name
 * @param bufferSize        size of one page buffer of the data pool
 * @param buffersPerLoop    page buffers each event loop registers once per device
 */
public record RdmaTargetOptions(
        int inCapsuleDataSize, int maxQueueEntries, int maxIoQueues, int bufferSize, int buffersPerLoop) {
    public static final int DEFAULT_BUFFER_SIZE = 128 * 1024;
    public static final int DEFAULT_BUFFERS = Tunable.RDMA_BUFFERS.intValue();
}
