package io.jbof.transport.tcp.tls;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskKey;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;

/**
 * Coverage-guided fuzzing of the target's TLS stage (the ClientHello peek and BouncyCastle's handshake
 * behind it): any byte stream, cut into any chunks, never throws out of the pipeline, and never lets a
 * byte through to the NVMe/TCP stages without a completed handshake. Some inputs start with a real
 * ClientHello prefix so the fuzzer reaches the extension parsing. `mvn test` replays; JAZZER_FUZZ=1 fuzzes.
 */
class TlsServerFuzzTest {
    static final TlsPskKey KEY = TlsPskKey.of(new byte[32], 1);

    @FuzzTest(maxDuration = "30s")
    void anyBytesBeforeAHandshakeNeverReachTheNvmeStages(FuzzedDataProvider d) {
        boolean[] reached = new boolean[1];
        TlsPskServerPeer peer = new TlsPskServerPeer(id -> TlsPskDerivation.derive(
                KEY, id.hostNqn(), id.subsysNqn(), id.version(), TlsPskDerivation.Labels.LEGACY));
        EmbeddedChannel ch = new EmbeddedChannel(
                TlsPskHandler.server(d.consumeBoolean() ? TlsMode.REQUIRED : TlsMode.OPTIONAL, peer),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        reached[0] = true;
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        reached[0] = true;
                        ReferenceCountUtil.release(msg);
                    }
                });
        try {
            boolean first = true;
            while (d.remainingBytes() > 0 && ch.isActive()) {
                byte[] chunk = d.consumeBytes(d.consumeInt(1, 4096));
                if (first && chunk.length > 0) {
                    chunk[0] = 0x16; // a handshake record: the TLS path, not the plain-NVMe/TCP hand-over
                    if (chunk.length > 5) chunk[5] = 1; // a ClientHello
                }
                first = false;
                ch.writeInbound(Unpooled.wrappedBuffer(chunk));
                ch.runPendingTasks();
            }
            assertFalse(reached[0], "nothing passes the TLS stage before a handshake with a key");
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
