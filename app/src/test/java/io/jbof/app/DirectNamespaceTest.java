package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.namespace.DirectIoRing;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A direct (O_DIRECT) namespace over NVMe/TCP: its reads and writes go through the event loops' io_uring. */
class DirectNamespaceTest {
    static final String NQN = "nqn.2024-01.io.jbof:direct";

    @TempDir
    Path dir;

    @Test
    void concurrentWritesAndReadsOfADirectNamespaceGoThroughTheRingAndReadBackWhatWasWritten() throws Exception {
        assumeTrue(DirectIoRing.available(), "io_uring is unavailable on this kernel");
        Path file = dir.resolve("d.img");
        TargetConfig cfg = TestTargets.config(NQN, file);
        cfg.subsystems.get(0).namespaces.get(0).direct = true;
        long before = DirectIoRing.completions();
        try (TargetServer t = TestTargets.start(cfg);
                NvmeController c = NvmeController.connect(ConnectOptions.builder()
                        .port(TestTargets.port(t))
                        .subsystemNqn(NQN)
                        .ioQueues(2)
                        .build())) {
            Namespace ns = c.namespace(1);
            int blocks = 32; // 128 KiB per command, so the data comes in several PDUs
            int commands = 64; // all in flight at once, over both queues
            byte[] data = new byte[commands * blocks * ns.blockSize()];
            new SplittableRandom(7).nextBytes(data);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < commands; i++) {
                ByteBuf src = Unpooled.wrappedBuffer(data, i * blocks * ns.blockSize(), blocks * ns.blockSize());
                writes.add(ns.write((long) i * blocks, blocks, src, i % 2 == 0)); // every other one FUA
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

            ByteBuf back = Unpooled.buffer(data.length, data.length);
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int i = 0; i < commands; i++) {
                ByteBuf dst = back.slice(i * blocks * ns.blockSize(), blocks * ns.blockSize());
                dst.clear();
                reads.add(ns.read((long) i * blocks, blocks, dst));
            }
            CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertArrayEquals(data, back.array(), "what was read is what was written");

            byte[] onDisk = new byte[data.length];
            System.arraycopy(Files.readAllBytes(file), 0, onDisk, 0, data.length);
            assertArrayEquals(data, onDisk, "the file holds the writes");
            assertTrue(
                    DirectIoRing.completions() - before >= 2L * commands,
                    "the ring completed the reads and writes: " + (DirectIoRing.completions() - before));
            assertEquals(ns.sizeBytes(), Files.size(file));
        }
    }

    @Test
    void theTargetsStartLineSaysItsDirectNamespacesRunThroughIoUring() throws Exception {
        assumeTrue(DirectIoRing.available(), "io_uring is unavailable on this kernel");
        Path file = dir.resolve("line.img");
        Files.write(file, new byte[1 << 20]);
        try (DaemonProcess t = DaemonProcess.java(
                "--listen", "127.0.0.1:0", "--nqn", NQN, "--rpc-socket", "none", "--namespace", file + ",direct")) {
            String line = t.output.stream()
                    .filter(l -> l.contains("listening on"))
                    .findFirst()
                    .orElseThrow();
            assertTrue(line.contains(",direct)") && line.endsWith(" | direct I/O: io_uring per event loop"), line);
        }
    }
}
