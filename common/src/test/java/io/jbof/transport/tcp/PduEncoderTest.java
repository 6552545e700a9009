package io.jbof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jbof.nvme.NvmeCommand;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** What one role's encoder writes, the other role's decoder accepts: headers, digests and lengths agree. */
class PduEncoderTest {
    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;

    private static ByteBuf decode(boolean controllerSide, boolean hd, boolean dd, ByteBuf... parts) {
        PduDecoder d = new PduDecoder(controllerSide, 1 << 20);
        d.negotiated(hd, dd, 1 << 20);
        EmbeddedChannel ch = new EmbeddedChannel(d);
        ch.writeInbound(Unpooled.wrappedBuffer(parts));
        ByteBuf out = ch.readInbound();
        assertFalse(ch.finish());
        return out;
    }

    @Test
    void aCapsuleWithInCapsuleDataAndBothDigestsPassesTheTargetsDecoder() {
        PduEncoder e = new PduEncoder();
        e.negotiated(true, true);
        ByteBuf sqe =
                Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE).setByte(0, 0x01);
        ByteBuf data = Unpooled.wrappedBuffer(new byte[] {9, 8, 7, 6, 5, 4, 3, 2});
        ByteBuf pdu = decode(
                true,
                true,
                true,
                e.capsuleCmd(ALLOC, sqe, 0, 8),
                data.retainedSlice(),
                e.dataDigest(ALLOC, data, 0, 8));
        assertEquals(Pdu.CAPSULE_CMD, Pdu.type(pdu, 0));
        assertEquals(Pdu.CAPSULE_CMD_HLEN + 4 + 8 + 4, Pdu.plen(pdu, 0));
        assertEquals(Pdu.CAPSULE_CMD_HLEN + 4, Pdu.pdo(pdu, 0));
        assertEquals(0x01, pdu.getByte(Pdu.COMMON_HEADER));
        pdu.release();
    }

    @Test
    void aC2HDataHeaderSaysLastAndSuccessAndPassesTheHostsDecoder() {
        PduEncoder e = new PduEncoder();
        e.negotiated(true, false);
        ByteBuf data = Unpooled.wrappedBuffer(new byte[512]);
        ByteBuf pdu = decode(false, true, false, e.dataHeader(ALLOC, Pdu.C2H_DATA, 7, 0, 4096, 512, true, true), data);
        assertEquals(Pdu.C2H_DATA, Pdu.type(pdu, 0));
        assertEquals(Pdu.FLAG_HDGST | Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS, Pdu.flags(pdu, 0));
        assertEquals(7, pdu.getUnsignedShortLE(Pdu.DATA_OFF_CCCID));
        assertEquals(4096, pdu.getIntLE(Pdu.DATA_OFF_DATAO));
        assertEquals(512, pdu.getIntLE(Pdu.DATA_OFF_DATAL));
        assertEquals(Pdu.DATA_HLEN + 4 + 512, Pdu.plen(pdu, 0));
        pdu.release();
    }

    @Test
    void anR2TCarriesNoDataAndH2CDataNeverSaysSuccess() {
        PduEncoder e = new PduEncoder();
        ByteBuf r2t = e.dataHeader(ALLOC, Pdu.R2T, 3, 1, 0, 8192, true, true);
        assertEquals(0, Pdu.pdo(r2t, 0));
        assertEquals(Pdu.DATA_HLEN, Pdu.plen(r2t, 0));
        assertEquals(0, Pdu.flags(r2t, 0));
        r2t.release();
        ByteBuf h2c = e.dataHeader(ALLOC, Pdu.H2C_DATA, 3, 1, 0, 8192, true, true);
        assertEquals(Pdu.FLAG_LAST_PDU, Pdu.flags(h2c, 0));
        h2c.release();
    }

    @Test
    void termReqAndIcPdusHaveTheirFixedLengths() {
        ByteBuf t = PduEncoder.termReq(ALLOC, Pdu.C2H_TERM_REQ, Pdu.FES_INVALID_PDU_HEADER, 10);
        assertEquals(Pdu.TERM_REQ_HLEN, t.readableBytes());
        assertEquals(Pdu.FES_INVALID_PDU_HEADER, t.getUnsignedShortLE(Pdu.TERM_OFF_FES));
        assertEquals(10, t.getIntLE(Pdu.TERM_OFF_FEI));
        t.release();
        ByteBuf req = PduEncoder.icReq(ALLOC, true, false);
        assertEquals(Pdu.IC_LENGTH, req.readableBytes());
        assertEquals(Pdu.IC_DGST_HEADER, req.getUnsignedByte(Pdu.IC_OFF_DGST));
        req.release();
        PduEncoder e = new PduEncoder();
        e.negotiated(false, true);
        ByteBuf resp = e.icResp(ALLOC, 131072);
        assertEquals(Pdu.IC_DGST_DATA, resp.getUnsignedByte(Pdu.IC_OFF_DGST));
        assertEquals(131072, resp.getIntLE(Pdu.IC_OFF_DGST + 1));
        resp.release();
    }
}
