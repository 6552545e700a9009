package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.VerifyBlock;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.transport.tcp.TcpBackPressure;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Soak: hosts doing verified I/O on one namespace while, beside them on another, hosts connect and
 * vanish mid-transfer (closed after an R2T, kill -9 of a bench process, half-open sockets that fall
 * silent, hosts that never read, double Connects, junk), at random, under --max-inflight-bytes. At
 * the end every verified byte matched, and the target is back to idle: no controller, no connection,
 * no in-flight byte, no paused connection, its buffer memory back. {@code -Djbof.soak.seconds}
 * (default 30; {@code scripts/soak MINUTES} runs it longer), {@code -Djbof.test.seed} repeats a run.
 */
class SoakTest {
    static final String NQN = "nqn.2024-01.io.jbof:soak";
    static final int SLOT = 256 * 1024;
    static final int SLOTS_PER_WORKER = 48;
    static final int WORKERS = 4; // 2 controllers x 2 queues

    @TempDir
    Path dir;

    enum Chaos {
        VANISH_AFTER_R2T,
        HALF_OPEN,
        NEVER_READS,
        KILL_9,
        DOUBLE_CONNECT,
        GARBAGE
    }

    @Test
    void hostsThatVanishNeverHurtTheOthersAndTheTargetReturnsToIdle() throws Exception {
        long seconds = Long.getLong("jbof.soak.seconds", 30);
        long seed = Long.getLong("jbof.test.seed", System.nanoTime());
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("verified.img"), dir.resolve("chaos.img"));
        cfg.subsystems.get(0).namespaces.forEach(n -> n.size = "64M");
        cfg.maxInflightBytes = "1M";
        try (TargetServer t = TestTargets.start(cfg)) {
            int port = TestTargets.port(t);
            TcpBackPressure bp = t.tcpBackPressure();
            long directBefore = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            long rssBefore = rssBytes();
            long heapBefore = heapAfterGc();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);

            List<NvmeController> verified = new ArrayList<>();
            for (int h = 0; h < 2; h++) {
                verified.add(NvmeController.connect(ConnectOptions.builder()
                        .port(port)
                        .subsystemNqn(NQN)
                        .ioQueues(2)
                        .build()));
            }
            AtomicLong verifiedBytes = new AtomicLong();
            List<String> mismatches = new CopyOnWriteArrayList<>();
            Map<Long, long[]> lastWritten = new ConcurrentHashMap<>(); // slot offset -> {length, seed}
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                NvmeController c = verified.get(w / 2);
                int queue = w % 2;
                int worker = w;
                Thread th = new Thread(
                        () -> verifiedIo(c, queue, worker, seed, deadline, verifiedBytes, mismatches, lastWritten),
                        "soak-verified-" + w);
                th.start();
                workers.add(th);
            }

            Map<Chaos, Integer> counts = new EnumMap<>(Chaos.class);
            List<AutoCloseable> lingering = new ArrayList<>();
            SplittableRandom rnd = new SplittableRandom(seed);
            long peakRss = rssBefore;
            while (System.nanoTime() < deadline) {
                Chaos how = Chaos.values()[rnd.nextInt(Chaos.values().length)];
                misbehave(how, port, rnd, lingering);
                counts.merge(how, 1, Integer::sum);
                if (lingering.size() > 6) closeQuietly(lingering.remove(rnd.nextInt(lingering.size())));
                peakRss = Math.max(peakRss, rssBytes());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(rnd.nextInt(200))); // pacing, not synchronisation
            }
            for (Thread th : workers) th.join(TimeUnit.SECONDS.toMillis(120));
            for (AutoCloseable a : lingering) closeQuietly(a);

            // Every slot holds the last block written to it: nothing a misbehaving host did reached it.
            try (NvmeController check = NvmeController.connect(ConnectOptions.builder()
                    .port(port)
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .build())) {
                Namespace ns = check.namespace(1);
                VerifyBlock vb = new VerifyBlock();
                ByteBuf b = Unpooled.directBuffer(SLOT);
                for (Map.Entry<Long, long[]> e : lastWritten.entrySet()) {
                    int len = (int) e.getValue()[0];
                    b.clear();
                    ns.readBlocking(e.getKey() / 4096, len / 4096, b);
                    String bad = vb.check(b, len, 1, e.getKey());
                    if (bad == null && VerifyBlock.seed(b) != e.getValue()[1])
                        bad = "holds an older write (seed " + VerifyBlock.seed(b) + ")";
                    if (bad != null) mismatches.add("final check of offset " + e.getKey() + ": " + bad);
                    verifiedBytes.addAndGet(len);
                }
                b.release();
            }
            for (NvmeController c : verified) c.close();

            boolean idle = await(() -> t.controllers().live() == 0
                    && bp.openConnections() == 0
                    && t.inflight().used() == 0
                    && bp.pausedConnections() == 0);
            long heapAfter = heapAfterGc();
            long directAfter = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            long rssAfter = rssBytes();
            System.out.printf(
                    "soak: %d s, seed %d: %d MiB verified, %d mismatches; misbehaving hosts %s; after: %d controllers, "
                            + "%d connections, %d bytes in flight, %d paused (%d pauses in all, peak unsent %d KiB); "
                            + "Netty direct memory %d -> %d MiB; heap after GC %d -> %d MiB; RSS of this JVM (target and test hosts) "
                            + "%d MiB before, %d MiB peak, %d MiB after%n",
                    seconds,
                    seed,
                    verifiedBytes.get() >> 20,
                    mismatches.size(),
                    counts,
                    t.controllers().live(),
                    bp.openConnections(),
                    t.inflight().used(),
                    bp.pausedConnections(),
                    bp.pauses(),
                    bp.peakUnsentBytes() >> 10,
                    directBefore >> 20,
                    directAfter >> 20,
                    heapBefore >> 20,
                    heapAfter >> 20,
                    rssBefore >> 20,
                    peakRss >> 20,
                    rssAfter >> 20);
            assertTrue(
                    mismatches.isEmpty(),
                    "verified I/O failed (seed " + seed + "): "
                            + mismatches.subList(0, Math.min(5, mismatches.size())));
            assertTrue(verifiedBytes.get() > 0, "the verified hosts moved data");
            assertTrue(idle, "the target is back to idle");
            assertEquals(0, t.inflight().used(), "in-flight budget");
            assertTrue(
                    directAfter - directBefore <= (64L << 20),
                    "buffer memory came back: " + (directAfter - directBefore) + " bytes more");
            // RSS is printed, not bounded here: the test's own hosts share this JVM, whose heap the GC keeps once
            // grown.
            // What the target holds is bounded: its buffers (above) and the objects it keeps alive.
            assertTrue(
                    heapAfter - heapBefore <= (128L << 20),
                    "heap in use after GC within 128 MiB of where it started: " + ((heapAfter - heapBefore) >> 20)
                            + " MiB more");
        }
    }

    /** One worker: random-sized verified writes into its own slots, each read back and checked at once. */
    private static void verifiedIo(
            NvmeController c,
            int queue,
            int worker,
            long seed,
            long deadline,
            AtomicLong bytes,
            List<String> mismatches,
            Map<Long, long[]> lastWritten) {
        SplittableRandom rnd = new SplittableRandom(seed ^ (worker * 0x9E3779B97F4A7C15L));
        VerifyBlock vb = new VerifyBlock();
        Namespace ns = c.namespace(1);
        ByteBuf w = Unpooled.directBuffer(SLOT), r = Unpooled.directBuffer(SLOT);
        long n = 0;
        try {
            while (System.nanoTime() < deadline && mismatches.isEmpty()) {
                long offset = ((long) worker * SLOTS_PER_WORKER + rnd.nextInt(SLOTS_PER_WORKER)) * SLOT;
                int len = 4096 * (1 + rnd.nextInt(SLOT / 4096));
                long s = ((long) worker << 48) | ++n;
                w.clear();
                vb.fill(w, len, 1, offset, s);
                w.writerIndex(len);
                ns.write(c.ioQueues().get(queue), offset / 4096, len / 4096, w, rnd.nextInt(8) == 0)
                        .get(60, TimeUnit.SECONDS);
                lastWritten.put(offset, new long[] {len, s});
                r.clear();
                ns.read(c.ioQueues().get(queue), offset / 4096, len / 4096, r).get(60, TimeUnit.SECONDS);
                String bad = vb.check(r, len, 1, offset);
                if (bad == null && VerifyBlock.seed(r) != s) bad = "holds seed " + VerifyBlock.seed(r) + ", wrote " + s;
                if (bad != null) mismatches.add("worker " + worker + " offset " + offset + ": " + bad);
                bytes.addAndGet(len);
            }
        } catch (Exception e) {
            mismatches.add("worker " + worker + " failed: " + e);
        } finally {
            w.release();
            r.release();
        }
    }

    private void misbehave(Chaos how, int port, SplittableRandom rnd, List<AutoCloseable> lingering) throws Exception {
        switch (how) {
            case VANISH_AFTER_R2T: {
                try (RawTcpHost admin = RawTcpHost.admin(port, NQN, 0);
                        RawTcpHost io = RawTcpHost.io(port, NQN, admin.cntlid(), 1, false)) {
                    sendWrite(io, 1, 64 + rnd.nextInt(192));
                    io.readPdu(); // the R2T; then both sockets close without the data
                }
                break;
            }
            case HALF_OPEN: {
                // The host falls silent holding an R2T: its keep-alive (3 s) ends it, and its budget comes back.
                RawTcpHost admin = RawTcpHost.admin(port, NQN, 3000);
                RawTcpHost io = RawTcpHost.io(port, NQN, admin.cntlid(), 1, false);
                sendWrite(io, 1, 64 + rnd.nextInt(192));
                lingering.add(io);
                lingering.add(admin);
                break;
            }
            case NEVER_READS: {
                RawTcpHost admin = RawTcpHost.admin(port, NQN, 0);
                RawTcpHost io = RawTcpHost.io(port, NQN, admin.cntlid(), 1, false);
                OutputStream out = new BufferedOutputStream(io.socket.getOutputStream(), 1 << 16);
                for (int i = 0; i < 2000; i++) {
                    ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_READ, i % 128);
                    RawTcpHost.command(sqe).nsid(2).slba(rnd.nextInt(16000)).nlb(3);
                    Sgl.write(sqe, 0, 0, 3 * 4096, Sgl.ID_TCP_TRANSPORT);
                    ByteBuf pdu = Unpooled.buffer(Pdu.CAPSULE_CMD_HLEN);
                    Pdu.writeCommonHeader(pdu, Pdu.CAPSULE_CMD, 0, Pdu.CAPSULE_CMD_HLEN, 0, Pdu.CAPSULE_CMD_HLEN);
                    pdu.writeBytes(sqe, 0, 64);
                    out.write(pdu.array(), 0, Pdu.CAPSULE_CMD_HLEN);
                }
                out.flush();
                lingering.add(io);
                lingering.add(admin);
                break;
            }
            case KILL_9: {
                List<String> cmd = new ArrayList<>(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx256m",
                        "-cp",
                        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                        "io.jbof.app.JbofMain",
                        "bench",
                        "-a",
                        "127.0.0.1",
                        "-s",
                        String.valueOf(port),
                        "-n",
                        NQN,
                        "-N",
                        "2",
                        "--rw",
                        "randrw",
                        "--bs",
                        "128k",
                        "--iodepth",
                        "16",
                        "--numjobs",
                        "2",
                        "--runtime",
                        "60s"));
                try (DaemonProcess p = DaemonProcess.start(cmd, Pattern.compile("jbof bench: starting"))) {
                    LockSupport.parkNanos(
                            TimeUnit.MILLISECONDS.toNanos(rnd.nextInt(1000))); // mid-I/O, at a random point
                    p.kill9();
                }
                break;
            }
            case DOUBLE_CONNECT: {
                try (RawTcpHost h = RawTcpHost.open(port, false)) {
                    h.connectCapsule(1, 0, 0xFFFF, NQN, 0, false);
                    h.connectCapsule(2, 0, 0xFFFF, NQN, 0, false);
                    h.readPdu();
                }
                break;
            }
            case GARBAGE: {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                    byte[] junk = new byte[1 + rnd.nextInt(4096)];
                    rnd.nextBytes(junk);
                    s.getOutputStream().write(junk);
                }
                break;
            }
        }
    }

    /** A Write of {@code blocks} 4 KiB blocks to namespace 2 whose data the target must ask for (R2T). */
    private static void sendWrite(RawTcpHost io, int cid, int blocks) throws IOException {
        ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_WRITE, cid);
        RawTcpHost.command(sqe).nsid(2).slba(0).nlb(blocks);
        Sgl.write(sqe, 0, 0, blocks * 4096, Sgl.ID_TCP_TRANSPORT);
        io.sendCapsule(sqe, null, 0);
    }

    private static boolean await(BooleanSupplier condition) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) return false;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return true;
    }

    private static void closeQuietly(AutoCloseable a) {
        try {
            a.close();
        } catch (Exception ignored) {
            // already gone
        }
    }

    private static long heapAfterGc() {
        System.gc();
        return java.lang.management.ManagementFactory.getMemoryMXBean()
                .getHeapMemoryUsage()
                .getUsed();
    }

    /** This process's resident set (the target runs in it), from /proc. */
    static long rssBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
        return 0;
    }
}
