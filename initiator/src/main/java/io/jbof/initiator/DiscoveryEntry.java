package io.jbof.initiator;

import io.jbof.nvme.Connect;
import io.jbof.nvme.DiscoveryLog;
import io.netty.buffer.ByteBuf;

/** One record of the discovery log page. */
public record DiscoveryEntry(int trtype, int adrfam, int subtype, int treq, int portId, int cntlid, int asqsz,
                             String trsvcid, String subnqn, String traddr) {
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
                Connect.readSpacePadded(b, at + DiscoveryLog.TRADDR, 256));
    }

    public String transport() {
        return DiscoveryLog.transportName(trtype);
    }

    public String subtypeName() {
        switch (subtype) {
            case DiscoveryLog.SUBTYPE_DISCOVERY_REFERRAL: return "discovery subsystem referral";
            case DiscoveryLog.SUBTYPE_NVME: return "nvme subsystem";
            case DiscoveryLog.SUBTYPE_CURRENT_DISCOVERY: return "current discovery subsystem";
            default: return "unknown (" + subtype + ")";
        }
    }
}
