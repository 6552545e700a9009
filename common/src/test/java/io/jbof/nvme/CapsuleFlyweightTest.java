package io.jbof.nvme;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The flyweights read and write the spec's byte offsets (little-endian) over any buffer position. */
class CapsuleFlyweightTest {
    @Test
    void commandFieldsSitAtTheirSpecOffsets() {
        ByteBuf b = Unpooled.buffer(128).writeZero(128);
        NvmeCommand c = new NvmeCommand().wrap(b, 32);
        c.cid(0xBEEF);
        assertEquals(0xBEEF, b.getUnsignedShortLE(32 + 2));
        b.setByte(32, Opcodes.IO_WRITE);
        b.setIntLE(32 + 4, 7); // NSID
        b.setLongLE(32 + 40, 0x1_0000_0002L); // SLBA in CDW10/11
        b.setIntLE(32 + 48, 15 | 1 << 30); // NLB 0's based, FUA
        assertEquals(Opcodes.IO_WRITE, c.opcode());
        assertEquals(7, c.nsid());
        assertEquals(0x1_0000_0002L, c.slba());
        assertEquals(16, c.nlb());
    }

    @Test
    void keyedSglDataBlockCarriesAddressThreeByteLengthKeyAndInvalidateSubtype() {
        ByteBuf b = Unpooled.buffer(64).writeZero(64);
        Sgl.writeKeyed(b, 0, 0x7f12_3456_7000L, 0xABCDEF, 0x89ABCDEF, Sgl.SUBTYPE_INVALIDATE_KEY);
        NvmeCommand c = new NvmeCommand().wrap(b, 0);
        assertEquals(0x7f12_3456_7000L, c.sglAddress());
        assertEquals(0xABCDEF, c.sglKeyedLength());
        assertEquals(0x89ABCDEF, c.sglKey());
        assertEquals(Sgl.TYPE_KEYED_DATA_BLOCK, c.sglType());
        assertEquals(Sgl.SUBTYPE_INVALIDATE_KEY, c.sglSubtype());
        // Spec layout: length bytes 8..10, key bytes 11..14, identifier byte 15 (0x4F).
        assertEquals(0xEF, b.getUnsignedByte(24 + 8));
        assertEquals(0xEF, b.getUnsignedByte(24 + 11));
        assertEquals(0x4F, b.getUnsignedByte(24 + 15));
    }

    @Test
    void sglDataBlockDescriptorIsAddressLengthIdentifier() {
        ByteBuf b = Unpooled.buffer(64).writeZero(64);
        Sgl.write(b, 0, 0, 8192, Sgl.ID_IN_CAPSULE);
        assertEquals(0, b.getLongLE(24));
        assertEquals(8192, b.getIntLE(32));
        assertEquals(0x01, b.getUnsignedByte(39), "data block, offset subtype");
        Sgl.write(b, 0, 0, 65536, Sgl.ID_TCP_TRANSPORT);
        assertEquals(0x5A, b.getUnsignedByte(39), "transport data block, transport-specific subtype");
    }

    @Test
    void completionCarriesStatusWithoutThePhaseBit() {
        ByteBuf b = Unpooled.buffer(16).writeZero(16);
        b.setShortLE(12, 0x42);
        b.setShortLE(14, (Status.dnr(Status.LBA_OUT_OF_RANGE) << 1) | 1);
        NvmeCompletion c = new NvmeCompletion().wrap(b, 0);
        assertEquals(0x42, c.cid());
        assertEquals(Status.dnr(Status.LBA_OUT_OF_RANGE), c.status());
        assertEquals(Status.SCT_GENERIC, Status.sct(c.status()));
        assertEquals(true, Status.isDnr(c.status()));
    }
}
