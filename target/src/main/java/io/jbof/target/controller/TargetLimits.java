package io.jbof.target.controller;

/**
 * Limits a controller advertises and enforces.
 *
 * @param maxIoQueues      I/O queues per controller (Number of Queues feature, Connect QID bound)
 * @param maxQueueEntries  entries per queue (CAP.MQES + 1, MAXCMD)
 * @param inCapsuleData    in-capsule data accepted on I/O queues (IOCCSZ)
 * @param maxTransferBytes largest data transfer of one command (MDTS)
 * @param maxControllers   controllers alive at once across all subsystems
 * @param ioccszAdvertised whether the transport uses IOCCSZ (TCP, RDMA)
 */
public record TargetLimits(
        int maxIoQueues,
        int maxQueueEntries,
        int inCapsuleData,
        int maxTransferBytes,
        int maxControllers,
        boolean ioccszAdvertised) {
    /** Admin queues hold at most 32 entries, as Linux's nvmet allows. */
    public static final int ADMIN_QUEUE_ENTRIES = 32;
    /** NSIDs a subsystem may use (1..this), as Linux's nvmet (NVMET_MAX_NAMESPACES); Identify's NN and MNAN. */
    public static final int MAX_NAMESPACES = 1024;

    public static TargetLimits defaults() {
        return new TargetLimits(
                Math.max(1, Runtime.getRuntime().availableProcessors()), 128, 16384, 1 << 20, 1024, true);
    }

    /** The smallest MDTS can say: 2^1 pages (0 would mean no limit). */
    static final int MIN_TRANSFER = 8192;

    /**
     * The largest transfer of one command on a queue whose transport carries at most {@code transportMax}
     * bytes: the smaller of the two, rounded down to a power of two (MDTS counts powers of two of pages).
     */
    public int maxTransferBytes(long transportMax) {
        long max = Math.min(maxTransferBytes, transportMax);
        return (int) Math.max(MIN_TRANSFER, Long.highestOneBit(max));
    }

    /** MDTS for a queue whose transport carries at most {@code transportMax} bytes: a power of two of 4 KiB pages (CAP.MPSMIN = 0). */
    public int mdtsField(long transportMax) {
        return Integer.numberOfTrailingZeros(maxTransferBytes(transportMax)) - 12;
    }
}
