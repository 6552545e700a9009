package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.queue.QueuePair;
import io.jbof.target.TargetServer;
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

/**
 * Property-style end to end: random writes of random sizes at random LBAs over two namespaces and four
 * queues at depth 32; a byte-array model of each namespace decides what every block must read back as.
 */
class RandomIoAcrossQueuesTest {
    static final String NQN = "nqn.2024-01.io.jbof:random-io";
    static final int QUEUES = 4, DEPTH = 32, ROUNDS = 6;

    @TempDir
    Path dir;

    @Test
    void everyByteReadsBackAsTheModelSays() throws Exception {
        long seed = Long.getLong("jbof.test.seed", System.nanoTime());
        SplittableRandom rnd = new SplittableRandom(seed);
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img"), dir.resolve("b.img")))) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(TestTargets.port(t))
                    .subsystemNqn(NQN)
                    .ioQueues(QUEUES)
                    .queueDepth(DEPTH + 1)
                    .build();
            try (NvmeController c = NvmeController.connect(o)) {
                assertEquals(QUEUES, c.ioQueues().size());
                List<Namespace> nss = c.namespaces();
                assertEquals(2, nss.size());
                byte[][] model = new byte[2][];
                for (int i = 0; i < 2; i++) model[i] = new byte[(int) nss.get(i).sizeBytes()];
                for (int round = 0; round < ROUNDS; round++) {
                    // One batch: every queue gets DEPTH writes in flight at once. Ranges in a batch do not
                    // overlap (the spec gives no order among outstanding commands), so the model is exact.
                    List<CompletableFuture<Void>> inFlight = new ArrayList<>();
                    List<long[]> taken = new ArrayList<>();
                    for (int q = 0; q < QUEUES; q++) {
                        QueuePair queue = c.ioQueues().get(q);
                        for (int d = 0; d < DEPTH; d++) {
                            int n = rnd.nextInt(2);
                            Namespace ns = nss.get(n);
                            int blocks = rnd.nextInt(1, rnd.nextInt(8) == 0 ? 300 : 16);
                            long lba = rnd.nextLong(ns.blocks() - blocks);
                            if (overlaps(taken, n, lba, blocks)) continue;
                            taken.add(new long[] {n, lba, blocks});
                            byte[] data = new byte[blocks * ns.blockSize()];
                            rnd.nextBytes(data);
                            System.arraycopy(data, 0, model[n], (int) (lba * ns.blockSize()), data.length);
                            inFlight.add(
                                    ns.write(queue, lba, blocks, Unpooled.wrappedBuffer(data), rnd.nextInt(4) == 0));
                        }
                    }
                    CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new))
                            .get(60, TimeUnit.SECONDS);
                    if (round % 2 == 1) nss.get(rnd.nextInt(2)).flushBlocking();
                }
                for (int n = 0; n < 2; n++) {
                    Namespace ns = nss.get(n);
                    int chunk = 256 * ns.blockSize();
                    for (long off = 0; off < ns.sizeBytes(); off += chunk) {
                        ByteBuf got = Unpooled.buffer(chunk);
                        ns.read(
                                        c.ioQueues().get((int) (off / chunk) % QUEUES),
                                        off / ns.blockSize(),
                                        chunk / ns.blockSize(),
                                        got)
                                .get(60, TimeUnit.SECONDS);
                        byte[] expect = new byte[chunk];
                        System.arraycopy(model[n], (int) off, expect, 0, chunk);
                        byte[] actual = new byte[chunk];
                        got.readBytes(actual);
                        assertArrayEquals(
                                expect, actual, "ns" + ns.nsid() + " bytes at " + off + " (seed " + seed + ")");
                    }
                }
            }
            // The files themselves hold what the initiator wrote (no caching layer in between lied).
            assertEquals(16L << 20, Files.size(dir.resolve("a.img")));
        }
    }

    private static boolean overlaps(List<long[]> taken, int ns, long lba, int blocks) {
        for (long[] r : taken) if (r[0] == ns && lba < r[1] + r[2] && r[1] < lba + blocks) return true;
        return false;
    }
}
