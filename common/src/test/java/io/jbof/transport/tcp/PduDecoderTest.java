package io.jbof.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class PduDecoderTest {
    private static ByteBuf capsule(boolean hd, boolean dd, byte[] data) {
        int hlen = Pdu.CAPSULE_CMD_HLEN;
        int headerEnd = hlen + (hd ? 4 : 0);
        int plen = headerEnd + (data.length > 0 ? data.length + (dd ? 4 : 0) : 0);
        ByteBuf b = Unpooled.buffer(plen);
        Pdu.writeCommonHeader(
                b,
                Pdu.CAPSULE_CMD,
                (hd ? Pdu.FLAG_HDGST : 0) | (dd && data.length > 0 ? Pdu.FLAG_DDGST : 0),
                hlen,
                data.length > 0 ? headerEnd : 0,
                plen);
        for (int i = b.writerIndex(); i < hlen; i++) b.writeByte(i);
        CRC32C crc = new CRC32C();
        if (hd) b.writeIntLE(Pdu.crc32c(crc, b, 0, hlen));
        if (data.length > 0) {
            int at = b.writerIndex();
            b.writeBytes(data);
            if (dd) b.writeIntLE(Pdu.crc32c(crc, b, at, data.length));
        }
        return b;
    }

    private static EmbeddedChannel target(boolean hd, boolean dd) {
        PduDecoder d = new PduDecoder(true, 1 << 20);
        d.negotiated(hd, dd, 1 << 20);
        return new EmbeddedChannel(d);
    }

    @Test
    void reassemblesAPduDeliveredOneByteAtATime() {
        EmbeddedChannel ch = target(true, true);
        ByteBuf pdu = capsule(true, true, new byte[] {1, 2, 3, 4, 5});
        int n = pdu.readableBytes();
        for (int i = 0; i < n; i++) {
            ch.writeInbound(pdu.readRetainedSlice(1));
            if (i < n - 1) assertNull(ch.readInbound(), "no PDU before its last byte");
        }
        ByteBuf out = ch.readInbound();
        assertEquals(n, out.readableBytes());
        assertEquals(Pdu.CAPSULE_CMD, Pdu.type(out, 0));
        out.release();
        pdu.release();
        assertTrue(!ch.finish());
    }

    @Test
    void splitsTwoPdusThatArriveInOneRead() {
        EmbeddedChannel ch = target(false, false);
        ByteBuf both = Unpooled.wrappedBuffer(capsule(false, false, new byte[0]), capsule(false, false, new byte[100]));
        ch.writeInbound(both);
        ByteBuf a = ch.readInbound();
        ByteBuf b = ch.readInbound();
        assertEquals(Pdu.CAPSULE_CMD_HLEN, a.readableBytes());
        assertEquals(Pdu.CAPSULE_CMD_HLEN + 100, b.readableBytes());
        a.release();
        b.release();
    }

    @Test
    void wrongHeaderLengthIsAnInvalidPduHeaderAtByteTwo() {
        ByteBuf b = capsule(false, false, new byte[0]);
        b.setByte(2, 40);
        PduException e = expectFailure(target(false, false), b);
        assertEquals(Pdu.FES_INVALID_PDU_HEADER, e.fes());
        assertEquals(2, e.fei());
    }

    @Test
    void corruptHeaderDigestIsAHeaderDigestError() {
        ByteBuf b = capsule(true, false, new byte[0]);
        b.setByte(20, b.getByte(20) ^ 1);
        assertEquals(
                Pdu.FES_HEADER_DIGEST_ERROR,
                expectFailure(target(true, false), b).fes());
    }

    @Test
    void corruptDataDigestOnTheTargetMarksThePduAndDeliversIt() {
        ByteBuf b = capsule(false, true, new byte[64]);
        b.setShortLE(Pdu.COMMON_HEADER + 2, 0x1234); // CID of the SQE
        b.setByte(Pdu.CAPSULE_CMD_HLEN + 3, 9);
        EmbeddedChannel ch = target(false, true);
        ch.writeInbound(b);
        assertSame(PduDecoder.DATA_DIGEST_ERROR, ch.readInbound(), "the mark comes first");
        ByteBuf pdu = ch.readInbound();
        assertEquals(0x1234, pdu.getUnsignedShortLE(Pdu.COMMON_HEADER + 2), "then the PDU itself, whose command fails");
        pdu.release();
        ByteBuf good = capsule(false, true, new byte[64]);
        ch.writeInbound(good);
        ByteBuf next = ch.readInbound();
        assertTrue(next != null, "the stream goes on");
        next.release();
    }

    @Test
    void pduLargerThanTheLimitIsRefusedBeforeItIsBuffered() {
        PduDecoder d = new PduDecoder(true, 8192);
        d.negotiated(false, false, 8192);
        ByteBuf b = Unpooled.buffer(Pdu.CAPSULE_CMD_HLEN);
        Pdu.writeCommonHeader(b, Pdu.CAPSULE_CMD, 0, Pdu.CAPSULE_CMD_HLEN, Pdu.CAPSULE_CMD_HLEN, Integer.MAX_VALUE);
        b.writeZero(Pdu.CAPSULE_CMD_HLEN - b.writerIndex());
        assertEquals(
                Pdu.FES_DATA_LIMIT_EXCEEDED,
                expectFailure(new EmbeddedChannel(d), b).fes());
    }

    @Test
    void dataOffsetInsideTheHeaderIsRefused() {
        ByteBuf b = capsule(false, false, new byte[32]);
        b.setByte(3, 16);
        PduException e = expectFailure(target(false, false), b);
        assertEquals(3, e.fei());
    }

    @Test
    void capsuleBeforeICReqIsASequenceError() {
        EmbeddedChannel ch = new EmbeddedChannel(new PduDecoder(true, 1 << 20));
        assertEquals(
                Pdu.FES_PDU_SEQUENCE_ERROR,
                expectFailure(ch, capsule(false, false, new byte[0])).fes());
    }

    @Test
    void hostToControllerTypesAreRefusedByTheHost() {
        PduDecoder d = new PduDecoder(false, 1 << 20);
        d.negotiated(false, false, 1 << 20);
        assertEquals(
                Pdu.FES_INVALID_PDU_HEADER,
                expectFailure(new EmbeddedChannel(d), capsule(false, false, new byte[0]))
                        .fes());
    }

    private static PduException expectFailure(EmbeddedChannel ch, ByteBuf b) {
        DecoderException e = assertThrows(DecoderException.class, () -> ch.writeInbound(b));
        assertTrue(e.getCause() instanceof PduException, String.valueOf(e.getCause()));
        // Whatever follows a fatal error is dropped, not interpreted.
        ch.writeInbound(capsule(false, false, new byte[0]));
        assertNull(ch.readInbound());
        return (PduException) e.getCause();
    }

    /** A placement into one destination buffer that counts what it was handed to copy and what arrived in place. */
    private static final class Destination implements PduDecoder.DataPlacement {
        final ByteBuf buf = Unpooled.directBuffer(256 * 1024);
        int next;
        int copied;
        int placed;
        int ended;

        @Override
        public void begin(ByteBuf header, int at) {
            next = 0;
        }

        @Override
        public void data(ByteBuf in, int from, int length) {
            buf.setBytes(next, in, from, length);
            next += length;
            copied += length;
        }

        @Override
        public ByteBuf target(int length) {
            return buf.retainedSlice(next, length).clear();
        }

        @Override
        public void placed(int length) {
            next += length;
            placed += length;
        }

        @Override
        public void end() {
            ended++;
        }
    }

    @Test
    void theRestOfALargePayloadIsReadIntoItsDestinationAndNotCopied() {
        PduDecoder d = new PduDecoder(true, 1 << 20);
        d.negotiated(false, true, 1 << 20);
        Destination dst = new Destination();
        d.placeData(Pdu.H2C_DATA, dst);
        EmbeddedChannel ch = new EmbeddedChannel(d);
        byte[] payload = new byte[128 * 1024];
        new java.util.Random(3).nextBytes(payload);
        PduEncoder enc = new PduEncoder();
        enc.negotiated(false, true);
        ByteBuf header = enc.dataHeader(
                io.netty.buffer.ByteBufAllocator.DEFAULT, Pdu.H2C_DATA, 1, 0, 0, payload.length, true, false);
        ByteBuf digest = Unpooled.buffer(4)
                .writeIntLE(Pdu.crc32c(new CRC32C(), Unpooled.wrappedBuffer(payload), 0, payload.length));

        assertNull(d.directReadTarget(), "between PDUs a read is an ordinary one");
        // The first read brings the header and the start of the payload, as a socket read does.
        ch.writeInbound(Unpooled.wrappedBuffer(header, Unpooled.wrappedBuffer(payload, 0, 1000)));
        ByteBuf socketRead = d.directReadTarget();
        assertEquals(payload.length - 1000, socketRead.capacity(), "the read takes the rest of the payload, no more");
        socketRead.writeBytes(payload, 1000, payload.length - 1000); // what the socket does with the target
        ch.writeInbound(socketRead);
        assertEquals(1000, dst.copied);
        assertEquals(payload.length - 1000, dst.placed);
        assertEquals(0, dst.ended, "the data digest is still to come");
        ch.writeInbound(digest);
        assertEquals(1, dst.ended);
        for (int i = 0; i < payload.length; i++) assertEquals(payload[i], dst.buf.getByte(i), "byte " + i);
        assertTrue(d.headerReadNext(), "after a large payload the next read is kept short");
        int others = 0;
        while (others <= PduDecoder.HEADER_READ) {
            ch.writeInbound(capsule(false, false, new byte[0]));
            ReferenceCountUtil.release(ch.readInbound());
            others += Pdu.CAPSULE_CMD_HLEN;
        }
        assertFalse(d.headerReadNext(), "a header read's worth of other PDUs ends the short reads");
        dst.buf.release();
        assertTrue(!ch.finish());
    }
}
