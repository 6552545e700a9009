package io.jbof.initiator;

import io.jbof.nvme.IdentifyNamespace;
import io.netty.buffer.ByteBuf;

import java.util.UUID;

/** The Identify Namespace fields a host needs. */
public record NamespaceInfo(int nsid, long sizeBlocks, long capacityBlocks, long usedBlocks, int blockSize,
                            boolean writeProtected, int nmic, int dlfeat, UUID nguid, long eui64) {
    public static NamespaceInfo parse(int nsid, ByteBuf b) {
        int flbas = b.getUnsignedByte(IdentifyNamespace.FLBAS) & 0xF;
        int lbads = b.getUnsignedByte(IdentifyNamespace.LBAF0 + 4 * flbas + 2);
        return new NamespaceInfo(nsid,
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
