package io.jbof.target.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Status;
import io.jbof.transport.TargetQueueHandler;
import io.jbof.transport.TargetRequest;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.PduEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.Collections;
import org.junit.jupiter.api.Test;

/**
 * Commands that arrive in one read are answered in flushes of SEND_BUDGET responses, not in one flush at
 * the end of the read: the host works on the first responses while the target handles the rest.
 */
class TcpTargetConnectionFlushTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    @Test
    void commandsOfOneReadAreAnsweredInFlushesOfTheSendBudget() {
        int commands = 4 * TcpTargetConnection.SEND_BUDGET;
        FlushCounter counter = new FlushCounter(Pdu.CAPSULE_RESP);
        TcpTargetOptions options = TcpTargetOptions.defaults();
        PduDecoder decoder = new PduDecoder(true, Pdu.IC_LENGTH);
        TargetQueueHandler completesAtOnce = new TargetQueueHandler() {
            @Override
            public void onCommand(TargetRequest r) {
                r.complete(Status.SUCCESS, 0);
            }

            @Override
            public void onClosed() {}
        };
        EmbeddedChannel ch = new EmbeddedChannel(
                counter,
                decoder,
                new TcpTargetConnection(q -> completesAtOnce, options, decoder, new TcpBackPressure()));
        ch.writeInbound(PduEncoder.icReq(ALLOC, false, false));
        ReferenceCountUtil.release(ch.readOutbound()); // ICResp

        // Every command of the burst in one buffer: one socket read.
        PduEncoder encoder = new PduEncoder();
        CompositeByteBuf burst = Unpooled.compositeBuffer(commands);
        for (int cid = 0; cid < commands; cid++) {
            ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
            sqe.setShortLE(2, cid);
            burst.addComponent(true, encoder.capsuleCmd(ALLOC, sqe, 0, 0));
            sqe.release();
        }
        ch.writeInbound(burst);

        assertEquals(Collections.nCopies(4, TcpTargetConnection.SEND_BUDGET), counter.batches);
        int responses = 0;
        for (Object o; (o = ch.readOutbound()) != null; ReferenceCountUtil.release(o)) {
            if (Pdu.type((ByteBuf) o, 0) == Pdu.CAPSULE_RESP) responses++;
        }
        assertEquals(commands, responses);
        ch.finishAndReleaseAll();
    }
}
