package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.queue.QueuePair;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The end-to-end data test against any target: random writes of random sizes at random LBAs across
 * every I/O queue (many in flight), Flush, then a full read-back compared with an in-memory model.
 */
@Command(
        name = "verify",
        description =
                "Write random data of random sizes at random LBAs across all queues, flush, read back and compare. DESTROYS the data in the region.")
public final class VerifyCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Option(
            names = {"-N", "--namespace-id"},
            paramLabel = "NSID",
            defaultValue = "1",
            description = "Namespace ID (default 1).")
    int nsid;

    @Option(
            names = "--offset",
            paramLabel = "BYTES",
            defaultValue = "0",
            description = "Start of the region (block aligned; default 0).")
    String offset;

    @Option(
            names = "--size",
            paramLabel = "BYTES",
            defaultValue = "32M",
            description = "Size of the region (default 32M, at most 1G).")
    String size;

    @Option(
            names = "--iodepth",
            paramLabel = "N",
            defaultValue = "16",
            description = "Writes in flight per queue (default 16).")
    int depth;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "8", description = "Batches of writes (default 8).")
    int rounds;

    @Option(names = "--seed", paramLabel = "N", description = "Random seed (printed; give it to replay a run).")
    Long seed;

    @Option(
            names = "--destroy-data",
            required = true,
            description = "Required: confirms the region's contents may be overwritten.")
    boolean destroy;

    @Override
    public Integer call() throws Exception {
        long s = seed != null ? seed : System.nanoTime();
        SplittableRandom rnd = new SplittableRandom(s);
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 4))) {
            Namespace ns = c.namespace(nsid);
            int bs = ns.blockSize();
            long off = ByteRanges.parse(offset, "--offset");
            long len = Math.min(ByteRanges.parse(size, "--size"), ns.sizeBytes() - off);
            if (off % bs != 0 || len <= 0 || len > (1L << 30))
                throw new IllegalArgumentException(
                        "--offset must be block aligned and --size 1 block..1G inside the namespace");
            long regionBlocks = len / bs;
            long base = off / bs;
            byte[] model = new byte[(int) (regionBlocks * bs)];
            // Start from a known state: the region read as it is now.
            readInto(c, ns, base, regionBlocks, model, null);
            List<QueuePair> queues = c.ioQueues();
            int maxBlocks =
                    Math.max(1, Math.min(ns.maxBlocksPerCommand(), (int) Math.min(regionBlocks, 2 * 65536 / bs * 4)));
            long writes = 0, bytes = 0;
            long t0 = System.nanoTime();
            for (int round = 0; round < rounds; round++) {
                List<CompletableFuture<Void>> inFlight = new ArrayList<>();
                List<long[]> taken = new ArrayList<>();
                for (QueuePair q : queues) {
                    for (int d = 0; d < depth; d++) {
                        int blocks = (int) Math.min(
                                regionBlocks,
                                rnd.nextInt(1, rnd.nextInt(8) == 0 ? maxBlocks + 1 : Math.min(maxBlocks, 16) + 1));
                        long lba = rnd.nextLong(regionBlocks - blocks + 1);
                        if (overlaps(taken, lba, blocks)) continue; // no order among outstanding commands
                        taken.add(new long[] {lba, blocks});
                        byte[] data = new byte[blocks * bs];
                        rnd.nextBytes(data);
                        System.arraycopy(data, 0, model, (int) (lba * bs), data.length);
                        ByteBuf b = PooledByteBufAllocator.DEFAULT
                                .directBuffer(data.length)
                                .writeBytes(data);
                        inFlight.add(ns.write(q, base + lba, blocks, b, rnd.nextInt(8) == 0)
                                .whenComplete((v, e) -> b.release()));
                        writes++;
                        bytes += data.length;
                    }
                }
                CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new))
                        .get(conn.timeoutMillis * 2L, TimeUnit.MILLISECONDS);
            }
            ns.flushBlocking();
            long t1 = System.nanoTime();
            long[] bad = new long[] {-1};
            readInto(c, ns, base, regionBlocks, model, bad);
            long t2 = System.nanoTime();
            System.out.printf(
                    Locale.ROOT,
                    "verify: seed %d, %d writes (%.1f MiB, 1..%d blocks of %d B) across %d queues, Flush, read back %.1f MiB: %s%n",
                    s,
                    writes,
                    bytes / 1048576.0,
                    maxBlocks,
                    bs,
                    queues.size(),
                    len / 1048576.0,
                    bad[0] < 0 ? "all bytes match" : "MISMATCH at byte " + (off + bad[0]));
            System.out.printf(
                    Locale.ROOT,
                    "verify: write %.1f MB/s, read %.1f MB/s%n",
                    bytes / 1e6 / ((t1 - t0) / 1e9),
                    len / 1e6 / ((t2 - t1) / 1e9));
            return bad[0] < 0 ? 0 : 1;
        }
    }

    /** Reads the region; fills {@code model} when {@code firstBad} is null, else compares and records the first mismatch. */
    private void readInto(NvmeController c, Namespace ns, long base, long regionBlocks, byte[] model, long[] firstBad)
            throws Exception {
        int bs = ns.blockSize();
        int chunk = Math.min(ns.maxBlocksPerCommand(), 256);
        List<QueuePair> queues = c.ioQueues();
        for (long done = 0; done < regionBlocks; ) {
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            List<ByteBuf> bufs = new ArrayList<>();
            List<Long> at = new ArrayList<>();
            for (int i = 0; i < queues.size() * 4 && done < regionBlocks; i++) {
                int n = (int) Math.min(chunk, regionBlocks - done);
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n * bs);
                bufs.add(b);
                at.add(done);
                fs.add(ns.read(queues.get(i % queues.size()), base + done, n, b));
                done += n;
            }
            try {
                CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new))
                        .get(conn.timeoutMillis * 2L, TimeUnit.MILLISECONDS);
                for (int i = 0; i < bufs.size(); i++) {
                    ByteBuf b = bufs.get(i);
                    int pos = (int) (at.get(i) * bs);
                    if (firstBad == null) {
                        b.getBytes(0, model, pos, b.readableBytes());
                    } else if (firstBad[0] < 0) {
                        for (int k = 0; k < b.readableBytes(); k++) {
                            if (b.getByte(k) != model[pos + k]) {
                                firstBad[0] = pos + k;
                                break;
                            }
                        }
                    }
                }
            } finally {
                for (ByteBuf b : bufs) b.release();
            }
        }
        if (firstBad == null && model.length != regionBlocks * bs) throw new IOException("short region read");
    }

    private static boolean overlaps(List<long[]> taken, long lba, int blocks) {
        for (long[] r : taken) if (lba < r[0] + r[1] && r[0] < lba + blocks) return true;
        return false;
    }
}
