package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.cli.DurabilityModel;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the target in the middle of random writes, Flushes and FUA writes, many times in a row.
 * After every restart each block must hold the last version made durable (acknowledged before a
 * completed Flush, or a FUA write), or a version written after it, and be whole: every block carries
 * its index, version and a CRC32C, so a torn or misplaced block fails. (Process death keeps the page
 * cache; scripts/interop power-loss cuts a guest's power instead.)
 */
class CrashLoopTest {
    static final String NQN = "nqn.2024-01.io.jbof:crash-loop";
    static final int BS = 4096;
    static final int BLOCKS = 4096; // 16 MiB

    @TempDir
    Path dir;

    private final DurabilityModel model = new DurabilityModel(1, 0, BLOCKS, BS);

    @Test
    void acknowledgedAndFlushedBlocksSurviveRepeatedKill9AndNoBlockIsTorn() throws Exception {
        int iterations = Integer.getInteger("jbof.crash.iterations", 20);
        long seed = Long.getLong("jbof.test.seed", System.nanoTime());
        SplittableRandom rnd = new SplittableRandom(seed);
        String[] args = {"--listen", "127.0.0.1:0", "--nqn", NQN, "--namespace", dir.resolve("vol.img") + ":16M"};
        long checked = 0;
        for (int it = 0; it < iterations; it++) {
            try (DaemonProcess t = DaemonProcess.java(args)) {
                NvmeController c = NvmeController.connect(options(t.port));
                try {
                    if (it > 0) checked += verifyAndRebase(c.namespace(1), "iteration " + it + " (seed " + seed + ")");
                    runUntilKilled(c.namespace(1), rnd, t);
                } finally {
                    c.close();
                }
            }
        }
        try (DaemonProcess t = DaemonProcess.java(args);
                NvmeController c = NvmeController.connect(options(t.port))) {
            checked += verifyAndRebase(c.namespace(1), "after the last kill (seed " + seed + ")");
        }
        System.out.printf(
                "crash loop: %d kill -9 restarts, %d writes acknowledged, %d flushes, %d FUA writes, %d blocks verified%n",
                iterations, model.acknowledged(), model.flushes(), model.fuaWrites(), checked);
        assertTrue(model.flushes() > 0 && model.fuaWrites() > 0, "the run exercised Flush and FUA");
    }

    /** Random writes (1..16 blocks, QD up to 16 over 2 queues), Flushes and FUA writes; SIGKILL at a random point. */
    private void runUntilKilled(Namespace ns, SplittableRandom rnd, DaemonProcess target) throws Exception {
        int ops = 50 + rnd.nextInt(400);
        Semaphore depth = new Semaphore(16);
        for (int i = 0; i < ops; i++) {
            depth.acquire();
            int kind = rnd.nextInt(100);
            if (kind < 5) {
                long[] snapshot = model.flushSnapshot();
                ns.flush().whenComplete((v, e) -> {
                    if (e == null) model.flushDone(snapshot);
                    depth.release();
                });
                continue;
            }
            boolean fua = kind < 15;
            int n = 1 + rnd.nextInt(16);
            long[] claim = model.startWrite(rnd, n);
            if (claim == null) {
                depth.release();
                continue;
            }
            int first = (int) claim[0];
            long v = claim[1];
            ByteBuf data = Unpooled.directBuffer(n * BS);
            for (int b = 0; b < n; b++) model.fill(data, b * BS, first + b, v);
            data.writerIndex(n * BS);
            ns.write(first, n, data, fua).whenComplete((x, e) -> {
                data.release();
                model.endWrite(first, n, v, fua, e == null);
                depth.release();
            });
        }
        target.kill9(); // with writes and flushes still in flight
    }

    /** Reads every block, checks it against the model, and takes what is there as the new durable state. */
    private long verifyAndRebase(Namespace ns, String when) throws Exception {
        ByteBuf all = Unpooled.directBuffer(BLOCKS * BS);
        try {
            ns.readBlocking(0, BLOCKS, all);
            model.verifyAndRebase(all, when);
            return BLOCKS;
        } finally {
            all.release();
        }
    }

    private static ConnectOptions options(int port) {
        return ConnectOptions.builder()
                .port(port)
                .subsystemNqn(NQN)
                .ioQueues(2)
                .queueDepth(32)
                .commandTimeoutMillis(10_000)
                .build();
    }
}
