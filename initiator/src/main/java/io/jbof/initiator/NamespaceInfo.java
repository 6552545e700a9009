package io.jbof.initiator;

import io.jbof.nvme.IdentifyNamespace;
import io.netty.buffer.ByteBuf;
import java.util.UUID;

/** The Identify Namespace fields a host needs. */
public record NamespaceInfo(
        int nsid,
        long sizeBlocks,
        long capacityBlocks,
        long usedBlocks,
        int blockSize,
        boolean writeProtected,
        int nmic,
        int dlfeat,
        UUID nguid,
        long eui64) {
    public static NamespaceInfo parse(int nsid, ByteBuf b) throws ControllerDataException {
        int flbas = b.getUnsignedByte(IdentifyNamespace.FLBAS) & 0xF;
        int lbads = b.getUnsignedByte(IdentifyNamespace.LBAF0 + 4 * flbas + 2);
        long nsze = b.getLongLE(IdentifyNamespace.NSZE);
        if (nsze != 0) { // an inactive namespace reads as zeroes
            if (lbads < 9 || lbads > 16) {
                throw new ControllerDataException(
                        "LBADS of namespace " + (nsid & 0xFFFFFFFFL), lbads, "not a block size of 512 B to 64 KiB");
            }
            if (nsze < 0 || nsze > (Long.MAX_VALUE >> lbads)) {
                throw new ControllerDataException(
                        "NSZE of namespace " + (nsid & 0xFFFFFFFFL), nsze, "more bytes than a 64-bit offset holds");
            }
        }
        return new NamespaceInfo(
                nsid,
                b.getLongLE(IdentifyNamespace.NSZE),
                b.getLongLE(IdentifyNamespace.NCAP),
                b.getLongLE(IdentifyNamespace.NUSE),
                lbads == 0 ? 0 : 1 << lbads,
                (b.getUnsignedByte(IdentifyNamespace.NSATTR) & 1) != 0,
                b.getUnsignedByte(30),
                b.getUnsignedByte(IdentifyNamespace.DLFEAT),
                new UUID(b.getLong(IdentifyNamespace.NGUID), b.getLong(IdentifyNamespace.NGUID + 8)),
                b.getLong(IdentifyNamespace.EUI64));
    }

    public long sizeBytes() {
        return sizeBlocks * blockSize;
    }

    public boolean active() {
        return sizeBlocks != 0;
    }
}
