package io.jbof.microbench;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * NVMe/TCP framing on the target side: a CapsuleCmd PDU (with or without 4 KiB of in-capsule data and
 * digests) through the PduDecoder of a channel pipeline, out as one frame.
 */
@State(Scope.Thread)
public class PduDecodeBench {
    @Param({"0", "4096"})
    public int inCapsule;

    @Param({"false", "true"})
    public boolean digests;

    private EmbeddedChannel ch;
    private ByteBuf pdu;

    @Setup
    public void setup() {
        PduDecoder d = new PduDecoder(true, 1 << 20);
        d.negotiated(digests, digests, 1 << 20);
        ch = new EmbeddedChannel(d);
        int hd = digests ? Pdu.DIGEST : 0;
        int dd = digests && inCapsule > 0 ? Pdu.DIGEST : 0;
        int pdo = inCapsule > 0 ? Pdu.CAPSULE_CMD_HLEN + hd : 0;
        int plen = Pdu.CAPSULE_CMD_HLEN + hd + inCapsule + dd;
        pdu = PooledByteBufAllocator.DEFAULT.directBuffer(plen);
        Pdu.writeCommonHeader(
                pdu,
                Pdu.CAPSULE_CMD,
                (digests ? Pdu.FLAG_HDGST : 0) | (dd != 0 ? Pdu.FLAG_DDGST : 0),
                Pdu.CAPSULE_CMD_HLEN,
                pdo,
                plen);
        int sqe = pdu.writerIndex();
        pdu.writeZero(NvmeCommand.SIZE);
        new NvmeCommand()
                .wrap(pdu, sqe)
                .opcode(Opcodes.IO_WRITE)
                .flags(NvmeCommand.FLAGS_SGL)
                .cid(1)
                .nsid(1)
                .cdw(12, 0);
        Sgl.write(pdu, sqe, 0, Math.max(inCapsule, 4096), inCapsule > 0 ? Sgl.ID_IN_CAPSULE : Sgl.ID_TCP_TRANSPORT);
        CRC32C crc = new CRC32C();
        if (digests) pdu.writeIntLE(Pdu.crc32c(crc, pdu, 0, Pdu.CAPSULE_CMD_HLEN));
        int data = pdu.writerIndex();
        pdu.writeZero(inCapsule);
        if (dd != 0) pdu.writeIntLE(Pdu.crc32c(crc, pdu, data, inCapsule));
    }

    @TearDown
    public void tearDown() {
        pdu.release();
        ch.finishAndReleaseAll();
    }

    @Benchmark
    public int decodeOneCapsule() {
        // The pooled buffer itself, as a socket read hands it over (a duplicate would cost a view per call).
        ch.writeInbound(pdu.retain().readerIndex(0));
        ByteBuf frame = ch.readInbound();
        int n = frame.readableBytes();
        frame.release();
        return n;
    }
}
