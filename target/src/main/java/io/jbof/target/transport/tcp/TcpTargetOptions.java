package io.jbof.target.transport.tcp;

import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.tls.TlsMode;
import io.jbof.transport.tcp.tls.TlsPskServerPeer;

/**
 * Transport limits of the NVMe/TCP target side.
 *
 * @param inCapsuleDataSize largest in-capsule data accepted (admin and I/O queues); Linux hosts use 8 KiB on the admin queue
 * @param maxH2CData        MAXH2CDATA advertised in ICResp: the largest H2CData PDU payload
 * @param maxQueueEntries   hard cap on commands in flight per connection
 * @param allowDigests      whether header/data digests may be negotiated
 * @param tls               TLS 1.3 (PSK) before the first PDU: off, optional or required
 * @param tlsKeys           the TLS PSK of an offered identity (used unless tls is OFF)
 */
public record TcpTargetOptions(
        int inCapsuleDataSize,
        int maxH2CData,
        int maxQueueEntries,
        boolean allowDigests,
        TlsMode tls,
        TlsPskServerPeer.KeyLookup tlsKeys) {
    public TcpTargetOptions(int inCapsuleDataSize, int maxH2CData, int maxQueueEntries, boolean allowDigests) {
        this(inCapsuleDataSize, maxH2CData, maxQueueEntries, allowDigests, TlsMode.OFF, null);
    }

    public static TcpTargetOptions defaults() {
        return new TcpTargetOptions(Pdu.ADMIN_IN_CAPSULE_DATA, 128 * 1024, 1024, true);
    }

    public TcpTargetOptions withTls(TlsMode mode, TlsPskServerPeer.KeyLookup keys) {
        return new TcpTargetOptions(inCapsuleDataSize, maxH2CData, maxQueueEntries, allowDigests, mode, keys);
    }
}
