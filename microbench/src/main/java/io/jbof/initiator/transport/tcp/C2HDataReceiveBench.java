package io.jbof.initiator.transport.tcp;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.PduEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.CompletableFuture;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The host's receive path for a read: one C2HData PDU (with SUCCESS) arriving as socket reads of {@code segment}
 * bytes, through the PduDecoder and TcpHostConnection into the command's buffer. In this package because the
 * connection's constructor is the transport's own.
 */
@State(Scope.Thread)
public class C2HDataReceiveBench {
    @Param({"131072"})
    public int length;

    /** Bytes per socket read, as the adaptive receive buffer hands them over. */
    @Param({"65536"})
    public int segment;

    private EmbeddedChannel ch;
    private ByteBuf pdu;
    private Read read;

    @Setup
    public void setup() {
        read = new Read(PooledByteBufAllocator.DEFAULT.directBuffer(length).writeZero(length));
        HostConnection.Listener listener = new HostConnection.Listener() {
            @Override
            public HostCommand lookup(int cid) {
                return read;
            }

            @Override
            public void onClosed(Throwable cause) {}
        };
        PduDecoder decoder = new PduDecoder(false, Pdu.IC_LENGTH);
        ch = new EmbeddedChannel(
                decoder, new TcpHostConnection(listener, decoder, false, false, new CompletableFuture<>()));
        ch.releaseOutbound();
        PduEncoder controller = new PduEncoder();
        ch.writeInbound(controller.icResp(PooledByteBufAllocator.DEFAULT, 128 * 1024));
        ByteBuf header =
                controller.dataHeader(PooledByteBufAllocator.DEFAULT, Pdu.C2H_DATA, 0, 0, 0, length, true, true);
        pdu = PooledByteBufAllocator.DEFAULT.directBuffer(header.readableBytes() + length);
        pdu.writeBytes(header).writeZero(length);
        header.release();
    }

    @TearDown
    public void tearDown() {
        pdu.release();
        read.data.release();
        ch.finishAndReleaseAll();
    }

    @Benchmark
    public int receiveOneRead() {
        read.transferred = 0;
        read.status = -1;
        for (int at = 0; at < pdu.writerIndex(); at += segment) {
            ch.writeInbound(pdu.retainedSlice(at, Math.min(segment, pdu.writerIndex() - at)));
        }
        return read.status;
    }

    private static final class Read implements HostCommand {
        final ByteBuf capsule =
                PooledByteBufAllocator.DEFAULT.heapBuffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        final ByteBuf data;
        int transferred;
        int status;

        Read(ByteBuf data) {
            this.data = data;
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
            status = completion.status();
        }
    }
}
