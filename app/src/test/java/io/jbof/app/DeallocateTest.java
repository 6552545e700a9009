package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deallocate gives space back to the file system (a punched hole), and neither it nor Write Zeroes
 * writes zeroes: a small command cannot make the target write gigabytes.
 */
class DeallocateTest {
    static final String NQN = "nqn.2024-01.io.jbof:dealloc";

    @TempDir
    Path dir;

    @Test
    void deallocateReturnsTheSpaceAndReadsZeroes() throws Exception {
        Path file = dir.resolve("a.img");
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, file));
                NvmeController c = NvmeController.connect(ConnectOptions.builder()
                        .port(TestTargets.port(t))
                        .subsystemNqn(NQN)
                        .ioQueues(1)
                        .build())) {
            Namespace ns = c.namespace(1);
            byte[] data = new byte[1 << 20];
            new SplittableRandom(3).nextBytes(data);
            int blocks = data.length / ns.blockSize();
            for (long lba = 0; lba < ns.blocks(); lba += blocks)
                ns.writeBlocking(lba, blocks, Unpooled.wrappedBuffer(data), false);
            ns.flushBlocking();
            assertTrue(
                    allocatedBytes(file) >= ns.sizeBytes(), "the whole namespace is written: " + allocatedBytes(file));

            ns.deallocate(0, ns.blocks()).get(30, TimeUnit.SECONDS);
            assertTrue(
                    allocatedBytes(file) < (1 << 20),
                    "the file system took the space back: " + allocatedBytes(file) + " bytes allocated");
            assertEquals(ns.sizeBytes(), Files.size(file), "the file keeps its size");
            ByteBuf back = Unpooled.buffer(data.length);
            ns.readBlocking(blocks, blocks, back);
            assertArrayEquals(
                    new byte[data.length],
                    Arrays.copyOf(back.array(), data.length),
                    "deallocated blocks read as zeroes");

            ns.writeBlocking(0, blocks, Unpooled.wrappedBuffer(data), false);
            ns.writeZeroes(0, blocks).get(30, TimeUnit.SECONDS);
            back.clear();
            ns.readBlocking(0, blocks, back);
            assertArrayEquals(new byte[data.length], Arrays.copyOf(back.array(), data.length), "Write Zeroes zeroes");
        }
    }

    @Test
    void wholeNamespaceDatasetManagementWritesNothing() throws Exception {
        Path file = dir.resolve("big.img");
        TargetConfig cfg = TargetConfig.loopback(NQN, "1G", file);
        cfg.ioThreads = 2;
        try (TargetServer t = TestTargets.start(cfg);
                RawTcpHost admin = RawTcpHost.admin(TestTargets.port(t), NQN, 0);
                RawTcpHost io = RawTcpHost.io(TestTargets.port(t), NQN, admin.cntlid(), 1, false);
                NvmeController other = NvmeController.connect(ConnectOptions.builder()
                        .port(TestTargets.port(t))
                        .subsystemNqn(NQN)
                        .ioQueues(1)
                        .build())) {
            long blocks = (1L << 30) / 4096;
            // Two commands of 256 ranges each, every range the whole namespace: 512 GiB of "zeroes" asked for.
            byte[] ranges = new byte[256 * 16];
            ByteBuf r = Unpooled.wrappedBuffer(ranges).clear();
            for (int i = 0; i < 256; i++)
                r.writeIntLE(0).writeIntLE((int) blocks).writeLongLE(0);
            for (int cid = 1; cid <= 2; cid++) {
                ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_DATASET_MANAGEMENT, cid);
                RawTcpHost.command(sqe).nsid(1).cdw(10, 255).cdw(11, 1 << 2);
                Sgl.write(sqe, 0, 0, ranges.length, Sgl.ID_IN_CAPSULE);
                io.sendCapsule(sqe, ranges, ranges.length);
            }
            long start = System.nanoTime();
            other.namespace(1).flushBlocking();
            long flushMicros = (System.nanoTime() - start) / 1000;
            for (int i = 0; i < 2; i++) assertEquals(0, RawTcpHost.status(io.readResponse()), "DSM " + i);
            // A figure for the notes, not a threshold: how long another host's Flush took meanwhile.
            System.out.println(
                    "DeallocateTest: another host's Flush during two whole-namespace DSMs took " + flushMicros + " us");
            assertTrue(
                    allocatedBytes(file) < (1 << 20),
                    "no zeroes were written: " + allocatedBytes(file) + " bytes allocated");
        }
    }

    /** Bytes the file system has allocated to the file (stat's block count, in 512-byte units). */
    static long allocatedBytes(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("stat", "-c", "%b", file.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertEquals(0, p.waitFor(), out);
        return Long.parseLong(out) * 512;
    }
}
