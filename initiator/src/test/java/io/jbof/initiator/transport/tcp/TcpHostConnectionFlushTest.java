package io.jbof.initiator.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A burst of commands leaves in flushes of SEND_BUDGET capsules as it is written, not in one flush once the
 * whole burst is encoded: the target starts on the first ones meanwhile.
 */
class TcpHostConnectionFlushTest {

    @Test
    void aBurstOfCommandsLeavesInFlushesOfTheSendBudget() {
        int commands = 4 * TcpHostConnection.SEND_BUDGET;
        List<Integer> batches = new ArrayList<>();
        ChannelOutboundHandlerAdapter counter = new ChannelOutboundHandlerAdapter() {
            int pending;

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                ByteBuf b = (ByteBuf) msg;
                if (Pdu.type(b, b.readerIndex()) == Pdu.CAPSULE_CMD) pending++;
                b.release();
                promise.trySuccess();
            }

            @Override
            public void flush(ChannelHandlerContext ctx) {
                if (pending > 0) batches.add(pending);
                pending = 0;
            }
        };
        HostConnection.Listener listener = new HostConnection.Listener() {
            @Override
            public HostCommand lookup(int cid) {
                return null;
            }

            @Override
            public void onClosed(Throwable cause) {}
        };
        TcpHostConnection connection = new TcpHostConnection(
                listener, new PduDecoder(false, Pdu.IC_LENGTH), false, false, new CompletableFuture<>());
        EmbeddedChannel ch = new EmbeddedChannel(counter, connection);
        batches.clear(); // the ICReq

        for (int cid = 0; cid < commands; cid++) connection.send(new NoData(cid));

        assertEquals(Collections.nCopies(4, TcpHostConnection.SEND_BUDGET), batches);
        ch.finishAndReleaseAll();
    }

    /** A command that moves no data (a Flush). */
    private static final class NoData implements HostCommand {
        private final ByteBuf capsule = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);

        NoData(int cid) {
            capsule.setShortLE(2, cid);
        }

        @Override
        public ByteBuf capsule() {
            return capsule;
        }

        @Override
        public ByteBuf data() {
            return null;
        }

        @Override
        public int dataLength() {
            return 0;
        }

        @Override
        public boolean dataToController() {
            return false;
        }

        @Override
        public int transferred() {
            return 0;
        }

        @Override
        public void transferred(int bytes) {}

        @Override
        public void onCompletion(NvmeCompletion completion) {}
    }
}
