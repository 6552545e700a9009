package io.jbof.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.fuse.kernel.FuseSession;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real FUSE mounts of a real target on loopback, used by real tools. */
class FuseMountTest {
    @TempDir
    Path dir;

    private final long seed = Long.getLong("jbof.test.seed", System.nanoTime());

    @Test
    void filesAreNamedByNsidSizedByCapacityAndReadOnlyWhereTheNamespaceIs() throws Exception {
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "16M", "4096", "ro:8M", "512")) {
            try (var list = Files.list(m.mount.mountPoint())) {
                assertEquals(
                        List.of("ns1", "ns2"),
                        list.map(p -> p.getFileName().toString()).sorted().toList());
            }
            assertEquals(16L << 20, Files.size(m.file(1)));
            assertEquals(8L << 20, Files.size(m.file(2)));
            assertTrue(Files.isWritable(m.file(1)));
            assertEquals(
                    "r--r--r--",
                    java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(m.file(2))));
            IOException e = assertThrows(
                    IOException.class,
                    () -> FileChannel.open(m.file(2), StandardOpenOption.WRITE).close());
            assertTrue(e.getMessage().contains("Read-only file system"), e.getMessage());
            String stat = Shell.ok(
                    "stat", "-f", "-c", "%S %b %f", m.mount.mountPoint().toString());
            assertEquals(
                    "512 " + ((24L << 20) / 512) + " 0",
                    stat.trim(),
                    "statfs: block size, total blocks of both files, none free");
        }
    }

    @Test
    void ddAndUnalignedWritesFromSeveralThreadsReadBackIdenticallyThroughMountLibraryAndBackingFile() throws Exception {
        // direct_io: every syscall reaches the adapter as issued, so the unaligned edges really are patched.
        FuseMount.Options o = FuseMount.Options.defaults().withDirectIo(true);
        int size = 8 << 20;
        try (MountedTarget m = MountedTarget.start(dir, o, "8M", "4096")) {
            byte[] model = new byte[size];
            SplittableRandom rnd = new SplittableRandom(seed);
            // dd from a file at a byte offset that is not block aligned.
            byte[] pattern = new byte[300_001];
            rnd.nextBytes(pattern);
            Path src = Files.write(dir.resolve("pattern"), pattern);
            Shell.ok(
                    "dd",
                    "if=" + src,
                    "of=" + m.file(1),
                    "bs=65536",
                    "seek=12345",
                    "oflag=seek_bytes",
                    "conv=notrunc,fsync",
                    "status=none");
            System.arraycopy(pattern, 0, model, 12345, pattern.length);

            // Adjacent segments of random length written by 4 threads in random order. The kernel holds the
            // inode lock per write syscall, so these reach the adapter one at a time; NamespaceFileTest
            // checks the adapter's own locking under real concurrency.
            List<long[]> segments = new ArrayList<>();
            for (long at = 0; at < size; ) {
                long n = Math.min(size - at, 1 + rnd.nextInt(20_000));
                segments.add(new long[] {at, n});
                at += n;
            }
            Collections.shuffle(segments, new Random(seed));
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try (FileChannel ch = FileChannel.open(m.file(1), StandardOpenOption.WRITE)) {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int me = t;
                    done.add(pool.submit(() -> {
                        for (int i = me; i < segments.size(); i += 4) {
                            long[] s = segments.get(i);
                            ByteBuffer b = ByteBuffer.wrap(data, (int) s[0], (int) s[1]);
                            long pos = s[0];
                            while (b.hasRemaining()) pos += ch.write(b, pos);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) f.get();
                ch.force(false);
            } finally {
                pool.shutdown();
            }
            System.arraycopy(data, 0, model, 0, size);

            byte[] viaMount = Files.readAllBytes(m.file(1));
            assertArrayEquals(model, viaMount, "read through the mount (seed " + seed + ")");
            try (NvmeController c = NvmeController.connect(MountedTarget.options(m.target))) {
                Namespace ns = c.namespace(1);
                ByteBuf b = Unpooled.directBuffer(size);
                ns.readBlocking(0, size / 4096, b);
                byte[] viaLibrary = new byte[size];
                b.getBytes(0, viaLibrary);
                b.release();
                assertArrayEquals(model, viaLibrary, "read through the initiator library (seed " + seed + ")");
            }
            assertArrayEquals(model, Files.readAllBytes(m.backingFile(1)), "the target's backing file");
        }
    }

    @Test
    void fioRandomWritesVerifyWithCrc32cOnTheMount() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Shell.has("fio"), "fio is not installed (apt-get install -y fio)");
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "64M", "4096", "32M", "4096")) {
            String out = Shell.ok(
                    "fio",
                    "--name=rw4k",
                    "--filename=" + m.file(1),
                    "--rw=randwrite",
                    "--bs=4k",
                    "--iodepth=16",
                    "--ioengine=libaio",
                    "--direct=1",
                    "--size=32M",
                    "--verify=crc32c",
                    "--do_verify=1",
                    "--verify_fatal=1",
                    "--verify_state_save=0",
                    "--minimal");
            assertFalse(out.contains("verify:"), out);
            // Sizes that are not multiples of the block size: the adapter's read-modify-write under libaio concurrency.
            out = Shell.ok(
                    "fio",
                    "--name=mixed",
                    "--filename=" + m.file(2),
                    "--rw=randwrite",
                    "--bsrange=512-64k",
                    "--iodepth=8",
                    "--ioengine=libaio",
                    "--direct=1",
                    "--size=16M",
                    "--verify=crc32c",
                    "--do_verify=1",
                    "--verify_fatal=1",
                    "--verify_state_save=0",
                    "--minimal");
            assertFalse(out.contains("verify:"), out);
        }
    }

    @Test
    void fioVerifiesOnMountsOfLoopDevicesExportedBufferedAndDirect() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Shell.has("fio") && Shell.has("losetup"), "needs fio and losetup");
        MountedTarget.assumeFuse();
        List<String> devices = new ArrayList<>();
        try {
            TargetConfig cfg = TargetConfig.loopback(MountedTarget.NQN, null);
            for (int i = 1; i <= 2; i++) {
                Path backing = dir.resolve("dev" + i + ".img");
                try (var f = new RandomAccessFile(backing.toFile(), "rw")) {
                    f.setLength(64L << 20);
                }
                devices.add(Shell.ok("losetup", "--find", "--show", backing.toString())
                        .trim());
                TargetConfig.NamespaceConfig n = new TargetConfig.NamespaceConfig();
                n.path = devices.get(i - 1);
                n.direct = i == 2;
                cfg.subsystems.get(0).namespaces.add(n);
            }
            try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), cfg)) {
                for (int nsid = 1; nsid <= 2; nsid++) {
                    String out = Shell.ok(
                            "fio",
                            "--name=dev" + nsid,
                            "--filename=" + m.file(nsid),
                            "--rw=randwrite",
                            "--bsrange=4k-128k",
                            "--iodepth=16",
                            "--ioengine=libaio",
                            "--direct=1",
                            "--size=32M",
                            "--verify=crc32c",
                            "--do_verify=1",
                            "--verify_fatal=1",
                            "--verify_state_save=0",
                            "--minimal");
                    assertFalse(out.contains("verify:"), out);
                }
                // What the mount wrote is on the device, and the library reads the same bytes.
                byte[] data = new byte[65536];
                new Random(seed).nextBytes(data);
                try (FileChannel ch = FileChannel.open(m.file(2), StandardOpenOption.WRITE)) {
                    ch.write(ByteBuffer.wrap(data), 40L << 20);
                    ch.force(false);
                }
                ByteBuffer onDevice = ByteBuffer.allocate(data.length);
                try (FileChannel raw = FileChannel.open(Path.of(devices.get(1)), StandardOpenOption.READ)) {
                    raw.read(onDevice, 40L << 20);
                }
                assertArrayEquals(data, onDevice.array());
                ByteBuf viaLibrary = Unpooled.directBuffer(data.length);
                try {
                    m.controller
                            .namespace(2)
                            .read((40L << 20) / 4096, data.length / 4096, viaLibrary)
                            .get();
                    byte[] got = new byte[data.length];
                    viaLibrary.getBytes(0, got);
                    assertArrayEquals(data, got);
                } finally {
                    viaLibrary.release();
                }
            }
        } finally {
            for (String d : devices) Shell.run("losetup", "--detach", d);
        }
    }

    @Test
    void fourFioJobsAtDepth32VerifyAndTheirDepthReachesTheInitiator() throws Exception {
        try (MountedTarget m = fourFioJobsVerify(FuseMount.Options.defaults())) {
            // Read by the initiator's loops (run to completion), one per I/O queue's loop, not by threads.
            int loops = m.controller.ioQueueLoops().size();
            assertTrue(loops > 0);
            assertEquals(loops, m.mount.session().loopReaders());
        }
    }

    @Test
    void fourFioJobsAtDepth32VerifyWithReaderThreads() throws Exception {
        FuseMount.Options d = FuseMount.Options.defaults();
        FuseSession.Config threads = new FuseSession.Config(2, 64, 1 << 20, false, false);
        FuseMount.Options o = new FuseMount.Options(d.directIo(), false, false, false, d.readaheadKib(), threads);
        try (MountedTarget m = fourFioJobsVerify(o)) {
            assertEquals(0, m.mount.session().loopReaders());
        }
    }

    /** Four fio jobs verify their random writes at depth 32 on a mount of {@code o}; returns the mount, still up. */
    private MountedTarget fourFioJobsVerify(FuseMount.Options o) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Shell.has("fio"), "fio is not installed (apt-get install -y fio)");
        MountedTarget m = MountedTarget.start(dir, o, "64M", "4096");
        try {
            // Each job its own 16 MiB quarter: verify=crc32c checks what that job wrote.
            String out = Shell.ok(
                    "fio",
                    "--name=rw",
                    "--filename=" + m.file(1),
                    "--rw=randrw",
                    "--bs=4k",
                    "--iodepth=32",
                    "--numjobs=4",
                    "--offset_increment=16M",
                    "--size=16M",
                    "--ioengine=libaio",
                    "--direct=1",
                    "--verify=crc32c",
                    "--do_verify=1",
                    "--verify_fatal=1",
                    "--verify_state_save=0",
                    "--minimal");
            assertFalse(out.contains("verify:"), out);
            // libfuse 2 handed the adapter one direct I/O per open file at a time: at most 4 here.
            int peak = m.mount.session().peakInFlight();
            assertTrue(peak > 4, "requests in flight at once on the adapter: " + peak);
            return m;
        } catch (Exception | AssertionError e) {
            try {
                m.close();
            } catch (IOException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    @Test
    void unalignedWritersInSeveralProcessesShareBlocksWithoutLosingBytes() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Shell.has("fio"), "fio is not installed (apt-get install -y fio)");
        // direct_io with parallel direct writes: 1000-byte writes from 4 processes land in the same 4 KiB blocks at
        // once, so every write is a read-modify-write racing its neighbours' on the adapter.
        try (MountedTarget m =
                MountedTarget.start(dir, FuseMount.Options.defaults().withDirectIo(true), "8M", "4096")) {
            List<String> cmd = new ArrayList<>(List.of(
                    "fio",
                    "--rw=write:3000",
                    "--bs=1000",
                    "--size=4000000",
                    "--ioengine=psync",
                    "--filename=" + m.file(1),
                    "--fallocate=none",
                    "--minimal"));
            for (int k = 0; k < 4; k++) {
                cmd.addAll(List.of(
                        "--name=w" + k, "--offset=" + (k * 1000), "--buffer_pattern=0x" + (k + 1) + "" + (k + 1)));
            }
            Shell.ok(cmd.toArray(new String[0]));
            byte[] back = Files.readAllBytes(m.file(1));
            for (int p = 0; p < 4_000_000; p++) {
                byte want = (byte) (0x11 * ((p % 4000) / 1000 + 1));
                if (back[p] != want) {
                    throw new AssertionError(
                            "byte " + p + ": " + back[p] + ", written by job " + ((p % 4000) / 1000) + " as " + want);
                }
            }
        }
    }

    @Test
    void withTheWritebackCacheFsyncPutsBufferedWritesOnTheTarget() throws Exception {
        FuseMount.Options o = FuseMount.Options.defaults();
        o = new FuseMount.Options(false, false, false, true, o.readaheadKib(), o.server());
        try (MountedTarget m = MountedTarget.start(dir, o, "8M", "4096")) {
            assertTrue(
                    (m.mount.session().grantedFlags() & io.jbof.fuse.kernel.FuseAbi.WRITEBACK_CACHE) != 0,
                    "the kernel granted the cache");
            byte[] model = new byte[8 << 20];
            byte[] data = new byte[1_000_003];
            new SplittableRandom(seed).nextBytes(data);
            try (FileChannel ch = FileChannel.open(m.file(1), StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(data), 777);
                ch.force(false); // fsync: the kernel writes the cached pages back, then jbof sends NVMe Flush
                System.arraycopy(data, 0, model, 777, data.length);
                assertArrayEquals(
                        model, Files.readAllBytes(m.backingFile(1)), "on the target after fsync, before close");
            }
        }
    }

    @Test
    void ext4OnALoopDeviceOverTheMountKeepsFilesAcrossRemounts() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.exists(Path.of("/dev/loop-control")) && Shell.has("losetup") && Shell.has("mkfs.ext4"),
                "no loop devices or e2fsprogs on this machine");
        Path fs = Files.createDirectories(dir.resolve("ext4"));
        SplittableRandom rnd = new SplittableRandom(seed);
        List<byte[]> contents = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            byte[] b = new byte[1 + rnd.nextInt(3 << 20)];
            rnd.nextBytes(b);
            contents.add(b);
        }
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "96M", "4096")) {
            String loop =
                    Shell.ok("losetup", "-f", "--show", m.file(1).toString()).trim();
            try {
                Shell.ok("mkfs.ext4", "-q", "-F", loop);
                Shell.ok("mount", loop, fs.toString());
                for (int i = 0; i < contents.size(); i++) Files.write(fs.resolve("file" + i), contents.get(i));
                Shell.ok("umount", fs.toString());
            } finally {
                Shell.run("umount", fs.toString());
                Shell.run("losetup", "-d", loop);
            }
        }
        // A new target process over the same backing file, a new FUSE mount, a new loop device.
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "96M", "4096")) {
            String loop =
                    Shell.ok("losetup", "-f", "--show", m.file(1).toString()).trim();
            try {
                Shell.ok("mount", loop, fs.toString());
                for (int i = 0; i < contents.size(); i++) {
                    assertArrayEquals(contents.get(i), Files.readAllBytes(fs.resolve("file" + i)), "file" + i);
                }
                Shell.ok("umount", fs.toString());
                Shell.ok("e2fsck", "-f", "-n", loop);
            } finally {
                Shell.run("umount", fs.toString());
                Shell.run("losetup", "-d", loop);
            }
        }
    }

    @Test
    void punchHoleAndZeroRangeReadAsZeroesAndLeaveNeighboursAlone() throws Exception {
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "4M", "4096")) {
            byte[] model = new byte[4 << 20];
            new SplittableRandom(seed).nextBytes(model);
            Files.write(m.file(1), model, StandardOpenOption.WRITE);
            Shell.ok(
                    "fallocate",
                    "--punch-hole",
                    "--keep-size",
                    "--offset",
                    "1000",
                    "--length",
                    "70000",
                    m.file(1).toString());
            Arrays.fill(model, 1000, 71000, (byte) 0);
            Shell.ok(
                    "fallocate",
                    "--zero-range",
                    "--keep-size",
                    "--offset",
                    "200000",
                    "--length",
                    "300001",
                    m.file(1).toString());
            Arrays.fill(model, 200000, 500001, (byte) 0);
            Shell.ok("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches");
            assertArrayEquals(model, Files.readAllBytes(m.file(1)), "through the mount");
            assertArrayEquals(model, Files.readAllBytes(m.backingFile(1)), "the backing file");
        }
    }

    @Test
    void truncateToAnotherSizeIsRefusedAndTheSizeStays() throws Exception {
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "4M", "4096")) {
            Shell.Result r = Shell.run("truncate", "-s", "1M", m.file(1).toString());
            assertNotEquals(0, r.exit());
            assertTrue(r.output().contains("Operation not permitted"), r.output());
            assertEquals(4L << 20, Files.size(m.file(1)));
            Shell.ok("truncate", "-s", "4M", m.file(1).toString()); // its own size: nothing to do
        }
    }

    @Test
    void writesPastTheEndGetNoSpaceAndShortWritesAtTheEdge() throws Exception {
        try (MountedTarget m = MountedTarget.start(dir, FuseMount.Options.defaults(), "1M", "512")) {
            try (FileChannel ch = FileChannel.open(m.file(1), StandardOpenOption.WRITE)) {
                IOException e = assertThrows(IOException.class, () -> ch.write(ByteBuffer.allocate(10), 1 << 20));
                assertTrue(e.getMessage().contains("No space left"), e.getMessage());
                assertEquals(
                        100,
                        ch.write(ByteBuffer.wrap(new byte[1000]), (1 << 20) - 100),
                        "only the bytes inside the namespace");
            }
        }
    }
}
