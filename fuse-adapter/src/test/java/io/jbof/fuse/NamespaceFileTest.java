package io.jbof.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Byte-addressed I/O over a real namespace on a loopback target, without FUSE in between. */
class NamespaceFileTest {
    @TempDir
    Path dir;

    private final long seed = Long.getLong("jbof.test.seed", System.nanoTime());

    private TargetServer target(String size, int blockSize) throws Exception {
        TargetConfig cfg = TargetConfig.loopback(MountedTarget.NQN, size, dir.resolve("ns1.img"));
        cfg.subsystems.get(0).namespaces.get(0).blockSize = blockSize;
        return TargetServer.start(cfg);
    }

    /**
     * Adjacent segments of random length, written by 8 threads in random order: neighbours that share
     * a block are read-modified-written at the same time, and none may write back stale bytes.
     */
    @Test
    void concurrentUnalignedWritesToNeighbouringBytesLoseNothing() throws Exception {
        int size = 4 << 20;
        try (TargetServer t = target("4M", 4096);
                NvmeController c = NvmeController.connect(MountedTarget.options(t))) {
            NamespaceFile f = new NamespaceFile(c.namespace(1));
            SplittableRandom rnd = new SplittableRandom(seed);
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            List<int[]> segments = new ArrayList<>();
            for (int at = 0; at < size; ) {
                int n = Math.min(size - at, 1 + rnd.nextInt(6000));
                segments.add(new int[] {at, n});
                at += n;
            }
            Collections.shuffle(segments, new java.util.Random(seed));
            ByteBuf src = Unpooled.wrappedBuffer(data);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int th = 0; th < 8; th++) {
                    int me = th;
                    done.add(pool.submit(() -> {
                        for (int i = me; i < segments.size(); i += 8) {
                            int[] s = segments.get(i);
                            f.write(s[0], s[1], src.slice(s[0], s[1]), false);
                        }
                        return null;
                    }));
                }
                for (Future<?> d : done) d.get();
            } finally {
                pool.shutdown();
            }
            f.flush();
            ByteBuf back = Unpooled.directBuffer(size);
            f.read(0, size, back.writerIndex(size));
            byte[] got = new byte[size];
            back.getBytes(0, got);
            back.release();
            f.close();
            assertArrayEquals(data, got, "read back through the namespace file (seed " + seed + ")");
            assertArrayEquals(data, Files.readAllBytes(dir.resolve("ns1.img")), "the backing file (seed " + seed + ")");
        }
    }

    @Test
    void unalignedReadsReturnExactlyTheRequestedBytes() throws Exception {
        try (TargetServer t = target("1M", 512);
                NvmeController c = NvmeController.connect(MountedTarget.options(t))) {
            byte[] data = new byte[1 << 20];
            new SplittableRandom(seed).nextBytes(data);
            Files.write(dir.resolve("ns1.img"), data);
            NamespaceFile f = new NamespaceFile(c.namespace(1));
            SplittableRandom rnd = new SplittableRandom(seed + 1);
            for (int i = 0; i < 200; i++) {
                int off = rnd.nextInt(data.length);
                int len = 1 + rnd.nextInt(Math.min(200_000, data.length - off));
                ByteBuf b = Unpooled.buffer(len).writerIndex(len);
                f.read(off, len, b);
                byte[] want = java.util.Arrays.copyOfRange(data, off, off + len);
                byte[] got = new byte[len];
                b.getBytes(0, got);
                assertArrayEquals(want, got, "read of " + len + " bytes at " + off);
            }
            f.close();
        }
    }
}
