package io.jbof.app;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * kill -9 of the target in the middle of random writes, Flushes and FUA writes, many times in a row.
 * After every restart each block must hold the last version made durable (acknowledged before a
 * completed Flush, or a FUA write), or a version written after it, and be whole: every block carries
 * its index, version and a CRC32C, so a torn or misplaced block fails. (Process death keeps the page
 * cache; power loss needs the VM harness.)
 */
class CrashLoopTest {
    static final String NQN = "nqn.2024-01.io.jbof:crash-loop";
    static final int BS = 4096;
    static final int BLOCKS = 4096; // 16 MiB
    @TempDir Path dir;

    /** Per block: the durable version, and versions written since (any of them may be on disk after a crash). */
    private final long[] durable = new long[BLOCKS];
    private final long[] lastAcked = new long[BLOCKS];
    private final List<List<Long>> since = new ArrayList<>();
    private final boolean[] inFlight = new boolean[BLOCKS];
    private long version;
    private long acknowledged;
    private long flushes;
    private long fuaWrites;

    @Test
    void acknowledgedAndFlushedBlocksSurviveRepeatedKill9AndNoBlockIsTorn() throws Exception {
        int iterations = Integer.getInteger("jbof.crash.iterations", 20);
        long seed = Long.getLong("jbof.test.seed", System.nanoTime());
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int b = 0; b < BLOCKS; b++) since.add(new ArrayList<>());
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
        try (DaemonProcess t = DaemonProcess.java(args); NvmeController c = NvmeController.connect(options(t.port))) {
            checked += verifyAndRebase(c.namespace(1), "after the last kill (seed " + seed + ")");
        }
        System.out.printf("crash loop: %d kill -9 restarts, %d writes acknowledged, %d flushes, %d FUA writes, %d blocks verified%n",
                iterations, acknowledged, flushes, fuaWrites, checked);
        assertTrue(flushes > 0 && fuaWrites > 0, "the run exercised Flush and FUA");
    }

    /** Random writes (1..16 blocks, QD up to 16 over 2 queues), Flushes and FUA writes; SIGKILL at a random point. */
    private void runUntilKilled(Namespace ns, SplittableRandom rnd, DaemonProcess target) throws Exception {
        int ops = 50 + rnd.nextInt(400);
        Semaphore depth = new Semaphore(16);
        for (int i = 0; i < ops; i++) {
            depth.acquire();
            int kind = rnd.nextInt(100);
            if (kind < 5) {
                long[] snapshot;
                synchronized (this) { snapshot = lastAcked.clone(); }
                ns.flush().whenComplete((v, e) -> {
                    if (e == null) {
                        synchronized (this) {
                            flushes++;
                            for (int b = 0; b < BLOCKS; b++) makeDurable(b, snapshot[b]);
                        }
                    }
                    depth.release();
                });
                continue;
            }
            boolean fua = kind < 15;
            int n = 1 + rnd.nextInt(16);
            int lba;
            long v;
            synchronized (this) {
                lba = pickFreeRange(rnd, n);
                if (lba < 0) { depth.release(); continue; }
                v = ++version;
                for (int b = lba; b < lba + n; b++) {
                    inFlight[b] = true;
                    since.get(b).add(v);
                }
            }
            ByteBuf data = Unpooled.directBuffer(n * BS);
            for (int b = 0; b < n; b++) fill(data, b * BS, lba + b, v);
            data.writerIndex(n * BS);
            int first = lba;
            int count = n;
            CompletableFuture<Void> f = ns.write(lba, n, data, fua);
            f.whenComplete((x, e) -> {
                data.release();
                synchronized (this) {
                    for (int b = first; b < first + count; b++) {
                        inFlight[b] = false;
                        if (e == null) {
                            lastAcked[b] = v;
                            if (fua) makeDurable(b, v);
                        }
                    }
                    if (e == null) {
                        acknowledged++;
                        if (fua) fuaWrites++;
                    }
                }
                depth.release();
            });
        }
        target.kill9(); // with writes and flushes still in flight
    }

    private int pickFreeRange(SplittableRandom rnd, int n) {
        for (int attempt = 0; attempt < 20; attempt++) {
            int lba = rnd.nextInt(BLOCKS - n + 1);
            boolean free = true;
            for (int b = lba; b < lba + n && free; b++) free = !inFlight[b];
            if (free) return lba;
        }
        return -1;
    }

    /** Version {@code v} of block {@code b} is durable: nothing older can come back. */
    private void makeDurable(int b, long v) {
        if (v <= durable[b]) return;
        durable[b] = v;
        since.get(b).removeIf(x -> x < v);
    }

    /** Reads every block, checks it against the model, and takes what is there as the new durable state. */
    private long verifyAndRebase(Namespace ns, String when) throws Exception {
        ByteBuf all = Unpooled.directBuffer(BLOCKS * BS);
        try {
            ns.readBlocking(0, BLOCKS, all);
            for (int b = 0; b < BLOCKS; b++) {
                long v = check(all, b * BS, b, when);
                if (v != durable[b] && !since.get(b).contains(v)) {
                    fail(when + ": block " + b + " holds version " + v + "; durable was " + durable[b] + ", written since " + since.get(b));
                }
                durable[b] = v;
                lastAcked[b] = v;
                since.get(b).clear();
            }
            return BLOCKS;
        } finally {
            all.release();
        }
    }

    // Block layout: [0..8) block index, [8..16) version, [16..20) CRC32C of [20..4096), then pseudo-random bytes.
    private static void fill(ByteBuf buf, int at, long block, long v) {
        buf.setLongLE(at, block);
        buf.setLongLE(at + 8, v);
        long x = (block * 0x9E3779B97F4A7C15L) ^ v ^ 0x5DEECE66DL;
        for (int i = 20; i + 8 <= BS; i += 8) {
            x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
            buf.setLongLE(at + i, x);
        }
        buf.setIntLE(at + BS - 4, (int) x); // the loop above stops 4 bytes short of the end
        buf.setIntLE(at + 16, crc(buf, at));
    }

    /** The version a block holds (0: never written), failing on a torn or misplaced block. */
    private static long check(ByteBuf buf, int at, int block, String when) {
        long v = buf.getLongLE(at + 8);
        if (v == 0 && buf.getLongLE(at) == 0 && buf.getIntLE(at + 16) == 0) {
            for (int i = 0; i < BS; i += 8) if (buf.getLongLE(at + i) != 0) fail(when + ": block " + block + " is partly zero");
            return 0;
        }
        assertEquals(block, buf.getLongLE(at), when + ": block " + block + " holds another block's data");
        assertEquals(crc(buf, at), buf.getIntLE(at + 16), when + ": block " + block + " version " + v + " is torn (CRC32C mismatch)");
        return v;
    }

    private static int crc(ByteBuf buf, int at) {
        CRC32C c = new CRC32C();
        c.update(buf.nioBuffer(at + 20, BS - 20));
        return (int) c.getValue();
    }

    private static ConnectOptions options(int port) {
        return ConnectOptions.builder().port(port).subsystemNqn(NQN).ioQueues(2).queueDepth(32).commandTimeoutMillis(10_000).build();
    }
}
