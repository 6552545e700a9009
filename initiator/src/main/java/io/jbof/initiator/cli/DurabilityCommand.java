package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A crash-consistency check across target crashes and power cuts, in the manner of diskchecker: one run
 * verifies what the previous run left (every block holds its last durable version or a newer one, whole),
 * then writes random versioned blocks with Flushes and FUA writes until the connection is lost (crash the
 * target or cut its power meanwhile) or the time is up, and saves the model for the next run.
 */
@Command(
        name = "durability",
        description = {
            "Crash-consistency check: verify what the last run left, then write with Flush and FUA until the target is lost.",
            "Run it, crash or power-cut the target while it writes, restart the target, run it again with the same --model."
        })
public final class DurabilityCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Spec
    CommandSpec spec;

    @Option(
            names = {"-N", "--namespace-id"},
            paramLabel = "NSID",
            defaultValue = "1",
            description = "Namespace ID (default 1).")
    int nsid;

    @Option(
            names = "--model",
            paramLabel = "FILE",
            required = true,
            description =
                    "Where the model of durable versions is kept between runs (keep it off the target's machine).")
    Path model;

    @Option(
            names = "--blocks",
            paramLabel = "N",
            defaultValue = "4096",
            description = "Blocks in the region, from LBA 0 (default 4096; first run only).")
    int blocks;

    @Option(
            names = "--max-seconds",
            paramLabel = "S",
            defaultValue = "60",
            description = "Stop writing after this long if the target is not lost first (default 60).")
    int maxSeconds;

    @Option(names = "--seed", paramLabel = "N", description = "Random seed (printed).")
    Long seed;

    @Option(
            names = "--destroy-data",
            required = true,
            description = "Required: confirms the region's contents may be overwritten.")
    boolean destroy;

    @Override
    public Integer call() throws Exception {
        long s = seed != null ? seed : System.nanoTime();
        boolean first = !Files.exists(model);
        PrintWriter out = spec.commandLine().getOut();
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 2))) {
            Namespace ns = c.namespace(nsid);
            DurabilityModel m = first
                    ? new DurabilityModel(nsid, 0, (int) Math.min(blocks, ns.blocks()), ns.blockSize())
                    : DurabilityModel.load(model);
            if (m.blockSize() != ns.blockSize() || m.blocks() > ns.blocks()) {
                throw new IllegalArgumentException(model + " describes " + m.blocks() + " blocks of " + m.blockSize()
                        + " bytes; namespace " + nsid + " has " + ns.blocks() + " of " + ns.blockSize());
            }
            if (!first) {
                try {
                    verify(ns, m);
                } catch (IllegalStateException violation) {
                    spec.commandLine().getErr().println("jbof durability: " + violation.getMessage());
                    return 1;
                }
                out.printf("verified %d blocks: each holds its durable version or a newer one, whole%n", m.blocks());
            }
            m.save(model);
            out.printf("writing (seed %d) until the target is lost or %d s pass%n", s, maxSeconds);
            out.flush();
            boolean lost = writeUntilLost(ns, m, new SplittableRandom(s));
            m.save(model);
            out.printf(
                    "%s: %d writes acknowledged, %d flushes, %d FUA writes; model saved to %s%n",
                    lost ? "target lost" : "time is up", m.acknowledged(), m.flushes(), m.fuaWrites(), model);
            out.flush();
            return 0;
        }
    }

    private static void verify(Namespace ns, DurabilityModel m) throws Exception {
        ByteBuf all = PooledByteBufAllocator.DEFAULT.directBuffer(m.blocks() * m.blockSize());
        try {
            ns.readBlocking(m.base(), m.blocks(), all);
            m.verifyAndRebase(all, "after the crash");
        } finally {
            all.release();
        }
    }

    /** Random writes of 1..16 blocks, 16 in flight, 5% Flushes and 10% FUA writes; true when the target was lost. */
    private boolean writeUntilLost(Namespace ns, DurabilityModel m, SplittableRandom rnd) throws InterruptedException {
        final int depth = 16;
        Semaphore slots = new Semaphore(depth);
        AtomicBoolean lost = new AtomicBoolean();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(maxSeconds);
        int bs = m.blockSize();
        while (!lost.get() && System.nanoTime() < end) {
            if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) continue;
            int kind = rnd.nextInt(100);
            if (kind < 5) {
                long[] snapshot = m.flushSnapshot();
                ns.flush().whenComplete((v, e) -> {
                    if (e == null) m.flushDone(snapshot);
                    else lost.set(true);
                    slots.release();
                });
                continue;
            }
            boolean fua = kind < 15;
            int n = 1 + rnd.nextInt(Math.min(16, m.blocks()));
            long[] claim = m.startWrite(rnd, n);
            if (claim == null) {
                slots.release();
                continue;
            }
            int firstBlock = (int) claim[0];
            long v = claim[1];
            ByteBuf data = PooledByteBufAllocator.DEFAULT.directBuffer(n * bs);
            for (int b = 0; b < n; b++) m.fill(data, b * bs, m.base() + firstBlock + b, v);
            data.writerIndex(n * bs);
            ns.write(m.base() + firstBlock, n, data, fua).whenComplete((x, e) -> {
                data.release();
                m.endWrite(firstBlock, n, v, fua, e == null);
                if (e != null) lost.set(true);
                slots.release();
            });
        }
        // Every write ends, acknowledged or failed, before the model is saved (bounded by the command timeout).
        slots.acquire(depth);
        return lost.get();
    }
}
