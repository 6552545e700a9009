package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A write acknowledged and then flushed survives kill -9 of the target process. */
class FlushSurvivesKillTest {
    static final String NQN = "nqn.2024-01.io.jbof:crash";

    @TempDir
    Path dir;

    @Test
    void flushedBlocksReadBackAfterKill9AndRestart() throws Exception {
        Path file = dir.resolve("vol.img");
        String[] args = {"--listen", "127.0.0.1:0", "--nqn", NQN, "--namespace", file + ":32M"};
        SplittableRandom rnd = new SplittableRandom(42);
        byte[][] written = new byte[3][];
        long[] lbas = {0, 1000, 8189}; // the last one ends at the last block
        try (DaemonProcess t = DaemonProcess.java(args)) {
            try (NvmeController c = NvmeController.connect(options(t.port))) {
                Namespace ns = c.namespace(1);
                for (int i = 0; i < lbas.length; i++) {
                    written[i] = new byte[(i + 1) * 4096];
                    rnd.nextBytes(written[i]);
                    ns.writeBlocking(lbas[i], i + 1, Unpooled.wrappedBuffer(written[i]), false);
                }
                ns.flushBlocking();
                t.kill9(); // while the initiator is still connected: no Disconnect, no shutdown
            }
        }
        try (DaemonProcess t = DaemonProcess.java(args);
                NvmeController c = NvmeController.connect(options(t.port))) {
            Namespace ns = c.namespace(1);
            assertEquals(32L << 20, ns.sizeBytes(), "the restarted target keeps the existing file's size");
            for (int i = 0; i < lbas.length; i++) {
                ByteBuf r = Unpooled.buffer(written[i].length);
                ns.readBlocking(lbas[i], i + 1, r);
                assertEquals(Unpooled.wrappedBuffer(written[i]), r, "blocks at LBA " + lbas[i]);
            }
        }
    }

    private static ConnectOptions options(int port) {
        return ConnectOptions.builder()
                .port(port)
                .subsystemNqn(NQN)
                .ioQueues(2)
                .commandTimeoutMillis(10_000)
                .build();
    }
}
