package io.jbof.initiator;

import io.jbof.nvme.Connect;
import io.jbof.nvme.IdentifyController;
import io.netty.buffer.ByteBuf;

/** The Identify Controller fields a host needs, decoded once at connect. */
public record ControllerInfo(int vid, String serial, String model, String firmware, int mdts, int cntlid, int version,
                             int controllerType, int maxCommands, int namespaces, int oncs, int vwc, int sgls,
                             String subsystemNqn, int ioccsz, int iorcsz, int kas, int sqes, int cqes) {
    public static ControllerInfo parse(ByteBuf b) {
        return new ControllerInfo(
                b.getUnsignedShortLE(IdentifyController.VID),
                Connect.readSpacePadded(b, IdentifyController.SN, 20),
                Connect.readSpacePadded(b, IdentifyController.MN, 40),
                Connect.readSpacePadded(b, IdentifyController.FR, 8),
                b.getUnsignedByte(IdentifyController.MDTS),
                b.getUnsignedShortLE(IdentifyController.CNTLID),
                b.getIntLE(IdentifyController.VER),
                b.getUnsignedByte(IdentifyController.CNTRLTYPE),
                b.getUnsignedShortLE(IdentifyController.MAXCMD),
                b.getIntLE(IdentifyController.NN),
                b.getUnsignedShortLE(IdentifyController.ONCS),
                b.getUnsignedByte(IdentifyController.VWC),
                b.getIntLE(IdentifyController.SGLS),
                Connect.readString(b, IdentifyController.SUBNQN, 256),
                b.getIntLE(IdentifyController.IOCCSZ),
                b.getIntLE(IdentifyController.IORCSZ),
                b.getUnsignedShortLE(IdentifyController.KAS),
                b.getUnsignedByte(IdentifyController.SQES),
                b.getUnsignedByte(IdentifyController.CQES));
    }

    /** Largest transfer of one command in bytes (MDTS in 4 KiB pages), or 0 for no limit. */
    public long maxTransferBytes() {
        return mdts == 0 ? 0 : 4096L << mdts;
    }

    /** In-capsule data the controller accepts on I/O queues. */
    public int inCapsuleDataBytes() {
        return Math.max(0, ioccsz * 16 - 64);
    }

    public String versionString() {
        return (version >>> 16) + "." + ((version >>> 8) & 0xFF) + "." + (version & 0xFF);
    }
}
