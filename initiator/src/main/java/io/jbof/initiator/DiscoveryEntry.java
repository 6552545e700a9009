package io.jbof.initiator;

import io.jbof.nvme.Connect;
import io.jbof.nvme.DiscoveryLog;
import io.jbof.transport.TransportType;
import io.netty.buffer.ByteBuf;

/**
 * One record of the discovery log page.
 *
 * @param tsas0 first byte of the transport-specific address subtype: for TCP the security type (2: TLS 1.3)
 */
public record DiscoveryEntry(
        int trtype,
        int adrfam,
        int subtype,
        int treq,
        int portId,
        int cntlid,
        int asqsz,
        String trsvcid,
        String subnqn,
        String traddr,
        int tsas0) {
    static DiscoveryEntry parse(ByteBuf b, int at) {
        return new DiscoveryEntry(
                b.getUnsignedByte(at + DiscoveryLog.TRTYPE),
                b.getUnsignedByte(at + DiscoveryLog.ADRFAM),
                b.getUnsignedByte(at + DiscoveryLog.SUBTYPE),
                b.getUnsignedByte(at + DiscoveryLog.TREQ),
                b.getUnsignedShortLE(at + DiscoveryLog.PORTID),
                b.getUnsignedShortLE(at + DiscoveryLog.CNTLID),
                b.getUnsignedShortLE(at + DiscoveryLog.ASQSZ),
                Connect.readSpacePadded(b, at + DiscoveryLog.TRSVCID, 32),
                Connect.readString(b, at + DiscoveryLog.SUBNQN, 256),
                Connect.readSpacePadded(b, at + DiscoveryLog.TRADDR, 256),
                b.getUnsignedByte(at + DiscoveryLog.TSAS));
    }

    public String transport() {
        return TransportType.nameOf(trtype);
    }

    /** The security type of a TCP port, as nvme-cli names it: none, tls12, tls13. */
    public String sectype() {
        switch (tsas0) {
            case 0:
                return "none";
            case 1:
                return "tls12";
            case DiscoveryLog.TCP_SECTYPE_TLS13:
                return "tls13";
            default:
                return "unknown (" + tsas0 + ")";
        }
    }

    public String subtypeName() {
        switch (subtype) {
            case DiscoveryLog.SUBTYPE_DISCOVERY_REFERRAL:
                return "discovery subsystem referral";
            case DiscoveryLog.SUBTYPE_NVME:
                return "nvme subsystem";
            case DiscoveryLog.SUBTYPE_CURRENT_DISCOVERY:
                return "current discovery subsystem";
            default:
                return "unknown (" + subtype + ")";
        }
    }
}
