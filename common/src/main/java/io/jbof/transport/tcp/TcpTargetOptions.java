package io.jbof.transport.tcp;

/**
 * Transport limits of the NVMe/TCP target side.
 *
 * @param inCapsuleDataSize largest in-capsule data accepted (admin and I/O queues); Linux hosts use 8 KiB on the admin queue
 * @param maxH2CData        MAXH2CDATA advertised in ICResp: the largest H2CData PDU payload
 * @param maxQueueEntries   hard cap on commands in flight per connection
 * @param allowDigests      whether header/data digests may be negotiated
 */
public record TcpTargetOptions(int inCapsuleDataSize, int maxH2CData, int maxQueueEntries, boolean allowDigests) {
    public static TcpTargetOptions defaults() {
        return new TcpTargetOptions(Pdu.ADMIN_IN_CAPSULE_DATA, 128 * 1024, 1024, true);
    }
}
