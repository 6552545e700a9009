package io.jbof.app;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.queue.QueuePair;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.util.Sizes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The embedded default: a target on 127.0.0.1 with a file-backed namespace in a temp folder, the
 * initiator connected over NVMe/TCP with several I/O queues, a verified write/flush/read round trip.
 */
@Command(
        name = "demo",
        description =
                "Start a target on loopback with a temp volume, write, flush, read back and verify over NVMe/TCP, clean up.")
public final class DemoCommand implements Callable<Integer> {
    static final String NQN = "nqn.2024-01.io.jbof:demo";

    @Option(
            names = "--data",
            paramLabel = "SIZE",
            defaultValue = "32M",
            description = "Bytes to write and verify (default 32M).")
    String data;

    @Option(
            names = "--bs",
            paramLabel = "SIZE",
            defaultValue = "128K",
            description = "Bytes per command (default 128K).")
    String blockSize;

    @Option(
            names = {"-i", "--nr-io-queues"},
            paramLabel = "N",
            defaultValue = "4",
            description = "I/O queues (default 4).")
    int queues;

    @Option(
            names = "--iodepth",
            paramLabel = "N",
            defaultValue = "16",
            description = "Commands in flight per queue (default 16).")
    int depth;

    @Option(names = "--keep", description = "Keep the temp folder (its path is printed).")
    boolean keep;

    @Option(
            names = {"-v", "--verbose"},
            description = "Log protocol detail to stderr.")
    boolean verbose;

    @Override
    public Integer call() throws Exception {
        long total = Sizes.parse(data);
        int chunk = (int) Sizes.parse(blockSize);
        if (chunk % 4096 != 0 || chunk <= 0)
            throw new IllegalArgumentException("--bs must be a multiple of 4K, not " + blockSize);
        if (total % chunk != 0 || total <= 0) throw new IllegalArgumentException("--data must be a multiple of --bs");
        if (queues < 1 || depth < 1)
            throw new IllegalArgumentException("--nr-io-queues and --iodepth must be at least 1");
        Path dir = Files.createTempDirectory("jbof-demo-");
        Path file = dir.resolve("ns1.img");
        try {
            long size = Math.max(64L << 20, total);
            TargetConfig cfg = TargetConfig.loopback(NQN, Long.toString(size), file);
            cfg.maxIoQueues = Math.max(queues, cfg.maxIoQueues);
            try (TargetServer target = TargetServer.start(cfg)) {
                int port = target.boundAddresses().get(0).getPort();
                say(
                        "target listening on tcp://127.0.0.1:%d, subsystem %s, ns1 = %s (%s, 4096-byte blocks)",
                        port, NQN, file, Sizes.format(size));
                ConnectOptions o = ConnectOptions.builder()
                        .port(port)
                        .subsystemNqn(NQN)
                        .ioQueues(queues)
                        .queueDepth(Math.max(32, depth + 1))
                        .build();
                try (NvmeController c = NvmeController.connect(o)) {
                    Namespace ns = c.namespace(1);
                    say(
                            "initiator connected: controller %d, %d I/O queues, depth %d, MDTS %s",
                            c.controllerId(),
                            c.ioQueues().size(),
                            o.queueDepth,
                            Sizes.format(c.info().maxTransferBytes()));
                    int chunks = (int) (total / chunk);
                    long t0 = System.nanoTime();
                    run(ns, c, chunks, chunk, true);
                    ns.flushBlocking();
                    long t1 = System.nanoTime();
                    say(
                            "wrote %s in %d commands of %s across %d queues, then Flush",
                            Sizes.format(total),
                            chunks,
                            Sizes.format(chunk),
                            c.ioQueues().size());
                    long mismatches = run(ns, c, chunks, chunk, false);
                    long t2 = System.nanoTime();
                    if (mismatches != 0) {
                        say("VERIFY FAILED: %d of %d chunks differ from what was written", mismatches, chunks);
                        return 1;
                    }
                    say("read back %s and verified every byte: OK", Sizes.format(total));
                    say(
                            "throughput: write+flush %s, read+verify %s (%s, %d queues x depth %d, loopback TCP)",
                            rate(total, t1 - t0),
                            rate(total, t2 - t1),
                            Sizes.format(chunk),
                            c.ioQueues().size(),
                            depth);
                }
            }
            return 0;
        } finally {
            if (keep) {
                say("kept %s", dir);
            } else {
                deleteTree(dir);
                say("cleaned up %s", dir);
            }
        }
    }

    /** Writes (or reads and compares) every chunk, keeping {@code depth} commands in flight per queue. */
    private long run(Namespace ns, NvmeController c, int chunks, int chunk, boolean write) throws Exception {
        int nq = c.ioQueues().size();
        Semaphore window = new Semaphore(nq * depth);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong bad = new AtomicLong();
        int blocks = chunk / ns.blockSize();
        PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        for (int i = 0; i < chunks && failure.get() == null; i++) {
            window.acquire();
            QueuePair q = c.ioQueues().get(i % nq);
            ByteBuf buf = alloc.directBuffer(chunk, chunk);
            long lba = (long) i * blocks;
            int index = i;
            CompletableFuture<Void> f;
            if (write) {
                fill(buf, index, chunk);
                f = ns.write(q, lba, blocks, buf, false);
            } else {
                f = ns.read(q, lba, blocks, buf);
            }
            f.whenComplete((v, e) -> {
                try {
                    if (e != null) failure.compareAndSet(null, e);
                    else if (!write && !matches(buf, index, chunk)) bad.incrementAndGet();
                } finally {
                    buf.release();
                    window.release();
                }
            });
        }
        if (!window.tryAcquire(nq * depth, 120, TimeUnit.SECONDS))
            throw new IOException("commands still outstanding after 120 s");
        if (failure.get() != null)
            throw new IOException(
                    (write ? "write" : "read") + " failed: " + failure.get().getMessage(), failure.get());
        return bad.get();
    }

    private static void fill(ByteBuf buf, int index, int len) {
        SplittableRandom r = new SplittableRandom(index * 0x9E3779B97F4A7C15L);
        for (int i = 0; i < len; i += 8) buf.writeLong(r.nextLong());
    }

    private static boolean matches(ByteBuf buf, int index, int len) {
        if (buf.readableBytes() != len) return false;
        SplittableRandom r = new SplittableRandom(index * 0x9E3779B97F4A7C15L);
        for (int i = 0; i < len; i += 8) if (buf.getLong(i) != r.nextLong()) return false;
        return true;
    }

    private static String rate(long bytes, long nanos) {
        return String.format(Locale.ROOT, "%.1f MB/s", bytes / 1e6 / (nanos / 1e9));
    }

    private static void say(String fmt, Object... args) {
        System.out.println("jbof demo: " + String.format(Locale.ROOT, fmt, args));
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
