package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --max-inflight-bytes: commands beyond the bound wait (never fail), in order, and the bound holds. */
class InflightBudgetTest {
    static final String NQN = "nqn.2024-01.io.jbof:inflight";

    @TempDir
    Path dir;

    @Test
    void commandsBeyondTheBoundWaitAndAllCompleteWithTheirData() throws Exception {
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("a.img"));
        // 128 KiB writes exceed the 16 KiB in-capsule size: their data comes later (R2T), so they stay in flight.
        cfg.maxInflightBytes = "256K";
        int bs = 128 * 1024, queues = 4, depth = 16;
        try (TargetServer t = TestTargets.start(cfg)) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(TestTargets.port(t))
                    .subsystemNqn(NQN)
                    .ioQueues(queues)
                    .queueDepth(depth + 1)
                    .build();
            try (NvmeController c = NvmeController.connect(o)) {
                Namespace ns = c.namespace(1);
                int blocks = bs / ns.blockSize();
                int commands = queues * depth;
                byte[][] data = new byte[commands][bs];
                SplittableRandom rnd = new SplittableRandom(42);
                List<CompletableFuture<Void>> writes = new ArrayList<>();
                for (int i = 0; i < commands; i++) {
                    rnd.nextBytes(data[i]);
                    writes.add(ns.write(
                            c.ioQueues().get(i % queues),
                            (long) i * blocks,
                            blocks,
                            Unpooled.wrappedBuffer(data[i]),
                            false));
                }
                CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
                        .get(60, TimeUnit.SECONDS);
                List<CompletableFuture<Void>> reads = new ArrayList<>();
                ByteBuf[] back = new ByteBuf[commands];
                for (int i = 0; i < commands; i++) {
                    back[i] = Unpooled.buffer(bs);
                    reads.add(ns.read(c.ioQueues().get(i % queues), (long) i * blocks, blocks, back[i]));
                }
                CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                for (int i = 0; i < commands; i++) {
                    byte[] got = new byte[bs];
                    back[i].readBytes(got);
                    assertArrayEquals(data[i], got, "block " + i);
                }
            }
            assertTrue(
                    t.inflight().peak() <= 256 * 1024,
                    "never more than 256 KiB in flight: " + t.inflight().peak());
            assertTrue(t.inflight().peak() >= bs, "commands did go through the budget");
            assertTrue(t.inflight().waits() > 0, "with 8 MiB submitted at once, queues had to wait");
            assertEquals(0, t.inflight().used(), "every byte came back to the budget");
        }
    }
}
