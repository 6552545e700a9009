package io.jbof.initiator.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.PduEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * C2HData goes into the reading command's buffer as the socket delivers it, not once the whole PDU has been
 * gathered: the bytes are copied once, from the read buffer, and the decoder holds no PDU-sized cumulation.
 */
class TcpHostConnectionDataPlacementTest {
    private static final int LENGTH = 64 * 1024;
    private final Random random = new Random(7);

    @Test
    void aReadsDataLandsInItsBufferPieceByPieceAsItArrives() {
        Read read = new Read(LENGTH);
        Host host = new Host(read, false);
        byte[] payload = bytes(LENGTH);
        ByteBuf pdu = host.c2hData(payload, true);

        int piece = 1500; // a segment's worth at a time
        int fed = 0;
        while (pdu.isReadable()) {
            int n = Math.min(piece, pdu.readableBytes());
            host.ch.writeInbound(pdu.readRetainedSlice(n));
            fed += n;
            int placed = Math.max(0, Math.min(LENGTH, fed - Pdu.DATA_HLEN));
            // Every payload byte delivered so far is already in the command's buffer.
            for (int i = 0; i < placed; i++) assertEquals(payload[i], read.data.getByte(i), "byte " + i);
            if (pdu.isReadable()) assertNull(read.completed, "completed before its last byte");
        }
        pdu.release();
        assertEquals(0, read.completed);
        assertEquals(LENGTH, read.transferred);
        assertTrue(host.ch.isOpen());
        host.ch.finishAndReleaseAll();
    }

    @Test
    void aDataDigestOverThePiecesIsCheckedBeforeTheReadCompletes() {
        Read good = new Read(LENGTH);
        Host host = new Host(good, true);
        byte[] payload = bytes(LENGTH);
        ByteBuf pdu = host.c2hData(payload, true);
        while (pdu.isReadable()) host.ch.writeInbound(pdu.readRetainedSlice(Math.min(4000, pdu.readableBytes())));
        pdu.release();
        assertEquals(0, good.completed);

        Read bad = new Read(LENGTH);
        Host other = new Host(bad, true);
        ByteBuf corrupt = other.c2hData(payload, true);
        corrupt.setByte(Pdu.DATA_HLEN + Pdu.DIGEST + 12345, payload[12345] ^ 1); // after the header and its digest
        while (corrupt.isReadable()) {
            other.ch.writeInbound(corrupt.readRetainedSlice(Math.min(4000, corrupt.readableBytes())));
        }
        corrupt.release();
        assertNull(bad.completed, "a read whose data digest fails must not succeed");
        assertFalse(other.ch.isOpen(), "a data digest error is fatal on the host");
        assertInstanceOf(IOException.class, other.closedBy);
        other.ch.finishAndReleaseAll();
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** A connection past ICResp with one read of {@code read}'s length in flight as CID 0. */
    private static final class Host implements HostConnection.Listener {
        final EmbeddedChannel ch;
        final PduEncoder controller = new PduEncoder();
        final Read read;
        Throwable closedBy;

        Host(Read read, boolean digests) {
            this.read = read;
            PduDecoder decoder = new PduDecoder(false, Pdu.IC_LENGTH);
            TcpHostConnection connection =
                    new TcpHostConnection(this, decoder, digests, digests, new CompletableFuture<>());
            ch = new EmbeddedChannel(decoder, connection);
            ch.releaseOutbound(); // the ICReq
            controller.negotiated(digests, digests);
            ch.writeInbound(controller.icResp(ByteBufAllocator.DEFAULT, 128 * 1024));
        }

        /** One C2HData PDU carrying all of {@code payload} at offset 0, with SUCCESS. */
        ByteBuf c2hData(byte[] payload, boolean success) {
            ByteBuf data = Unpooled.wrappedBuffer(payload);
            ByteBuf pdu = Unpooled.buffer();
            ByteBuf header = controller.dataHeader(
                    ByteBufAllocator.DEFAULT, Pdu.C2H_DATA, 0, 0, 0, payload.length, true, success);
            pdu.writeBytes(header);
            header.release();
            pdu.writeBytes(payload);
            if ((Pdu.flags(pdu, 0) & Pdu.FLAG_DDGST) != 0) {
                ByteBuf digest = controller.dataDigest(ByteBufAllocator.DEFAULT, data, 0, payload.length);
                pdu.writeBytes(digest);
                digest.release();
            }
            return pdu;
        }

        @Override
        public HostCommand lookup(int cid) {
            return cid == 0 && read.completed == null ? read : null;
        }

        @Override
        public void onClosed(Throwable cause) {
            closedBy = cause;
        }
    }

    /** A read of {@code length} bytes into its own buffer. */
    private static final class Read implements HostCommand {
        final ByteBuf capsule = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        final ByteBuf data;
        int transferred;
        Integer completed;

        Read(int length) {
            data = Unpooled.buffer(length).writeZero(length);
        }

        @Override
        public ByteBuf capsule() {
            return capsule;
        }

        @Override
        public ByteBuf data() {
            return data;
        }

        @Override
        public int dataLength() {
            return data.readableBytes();
        }

        @Override
        public boolean dataToController() {
            return false;
        }

        @Override
        public int transferred() {
            return transferred;
        }

        @Override
        public void transferred(int bytes) {
            transferred = bytes;
        }

        @Override
        public void onCompletion(NvmeCompletion completion) {
            completed = completion.status();
        }
    }
}
