package io.jbof.initiator;

import io.jbof.nvme.Connect;
import io.jbof.nvme.IdentifyController;
import io.netty.buffer.ByteBuf;

/** The Identify Controller fields a host needs, decoded once at connect. */
public record ControllerInfo(
        int vid,
        String serial,
        String model,
        String firmware,
        int mdts,
        int cntlid,
        int version,
        int controllerType,
        int maxCommands,
        int namespaces,
        int oncs,
        int vwc,
        int sgls,
        String subsystemNqn,
        int ioccsz,
        int iorcsz,
        int kas,
        int sqes,
        int cqes) {
    /** MDTS of 2^20 pages is 4 GiB; anything above is no size a transfer can have. */
    static final int MDTS_MAX = 20;
    /** IOCCSZ in 16-byte units: at least the 64-byte command, at most 1 MiB of capsule. */
    static final int IOCCSZ_MIN = 4;

    static final int IOCCSZ_MAX = 1 << 16;

    public static ControllerInfo parse(ByteBuf b) throws ControllerDataException {
        ControllerInfo i = decode(b);
        if (i.mdts > MDTS_MAX)
            throw new ControllerDataException("MDTS", i.mdts, "more than 2^" + MDTS_MAX + " pages (4 GiB)");
        boolean discovery = i.controllerType == IdentifyController.CNTRLTYPE_DISCOVERY;
        // Discovery controllers have no I/O queues; a zero IOCCSZ there means nothing.
        if (!discovery && (i.ioccsz < IOCCSZ_MIN || i.ioccsz > IOCCSZ_MAX)) {
            throw new ControllerDataException(
                    "IOCCSZ", i.ioccsz & 0xFFFFFFFFL, "outside " + IOCCSZ_MIN + ".." + IOCCSZ_MAX + " (16-byte units)");
        }
        return i;
    }

    private static ControllerInfo decode(ByteBuf b) {
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
