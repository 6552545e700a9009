package io.jbof.target.namespace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.nvme.IdentifyNamespace;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.transport.loop.LoopHost;
import io.jbof.target.transport.loop.LoopRequest;
import io.jbof.transport.TransportType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Block devices (Linux loop devices over files here) exported as namespaces, driven over in-process loop queues. */
class BlockDeviceNamespaceTest {
    static final String NQN = "nqn.2024-01.io.jbof:bdev-test";
    static final UUID HOST = UUID.nameUUIDFromBytes("bdev-test".getBytes());
    static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    @BeforeEach
    void needsLoopDevices() {
        assumeTrue(LoopDevice.available(), "needs root and losetup (CI runs as root)");
    }

    @Test
    void aLoopDeviceIsExportedWithTheDevicesSizeAndItsWritesLandOnTheDevice() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16));
                TargetServer target = TargetServer.start(config(dev.path(), ns -> {}))) {
            TargetNamespace ns = target.subsystem(NQN).namespace(1);
            assertTrue(ns.blockDevice());
            assertEquals(16L * MIB / 4096, ns.blocks());
            LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
            byte[] data = pattern(8192, 3);
            assertEquals(Status.SUCCESS, write(host, 100, data));
            assertEquals(Status.SUCCESS, flush(host));
            assertArrayEquals(data, read(host, 100, data.length));
            try (FileChannel raw = FileChannel.open(dev.path(), StandardOpenOption.READ)) {
                ByteBuffer b = ByteBuffer.allocate(data.length);
                raw.read(b, 100L * 4096);
                assertArrayEquals(data, b.array());
            }
        }
    }

    @Test
    void deallocateDiscardsTheRangeAndTheBackingFileGetsItsSpaceBack() throws Exception {
        Path file = backing(64);
        try (LoopDevice dev = LoopDevice.attach(file);
                TargetServer target = TargetServer.start(config(dev.path(), ns -> {}))) {
            LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
            byte[] chunk = pattern(16384, 5);
            for (int i = 0; i < 8 * MIB / chunk.length; i++) assertEquals(Status.SUCCESS, write(host, i * 4L, chunk));
            assertEquals(Status.SUCCESS, flush(host));
            long before = allocatedBytes(file);
            assertTrue(before >= 8L * MIB, "8 MiB written, " + before + " bytes allocated");

            ByteBuf range = Unpooled.wrappedBuffer(new byte[16])
                    .clear()
                    .writeIntLE(0)
                    .writeIntLE(8 * MIB / 4096)
                    .writeLongLE(0);
            try (LoopRequest dsm = host.ioRequest(null)) {
                dsm.reset(Opcodes.IO_DATASET_MANAGEMENT, 16).nsid(1).cdw(10, 0).cdw(11, 1 << 2);
                dsm.payload(range);
                host.io.onCommand(dsm);
                assertEquals(Status.SUCCESS, dsm.await(30, TimeUnit.SECONDS));
            }
            long after = allocatedBytes(file);
            assertTrue(after <= before - 7L * MIB, "allocated before discard " + before + ", after " + after);
        }
    }

    @Test
    void writeZeroesZeroesTheRangeOnTheDevice() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16));
                TargetServer target = TargetServer.start(config(dev.path(), ns -> {}))) {
            LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
            assertEquals(Status.SUCCESS, write(host, 10, pattern(16384, 9)));
            try (LoopRequest wz = host.ioRequest(null)) {
                wz.reset(Opcodes.IO_WRITE_ZEROES, 0).nsid(1).cdw(10, 11).cdw(12, 1); // blocks 11 and 12
                host.io.onCommand(wz);
                assertEquals(Status.SUCCESS, wz.await(30, TimeUnit.SECONDS));
            }
            byte[] back = read(host, 10, 16384);
            assertArrayEquals(Arrays.copyOfRange(pattern(16384, 9), 0, 4096), Arrays.copyOfRange(back, 0, 4096));
            assertArrayEquals(new byte[8192], Arrays.copyOfRange(back, 4096, 12288));
            assertArrayEquals(
                    Arrays.copyOfRange(pattern(16384, 9), 12288, 16384), Arrays.copyOfRange(back, 12288, 16384));
        }
    }

    @Test
    void aDeviceAnotherTargetExportsIsRefusedAsInUseUnlessForced() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16));
                TargetServer first = TargetServer.start(config(dev.path(), ns -> {}))) {
            IOException e = assertThrows(
                    IOException.class,
                    () -> TargetServer.start(config(dev.path(), ns -> {})).close());
            assertTrue(e.getMessage().contains("in use") && e.getMessage().contains(",force"), e.getMessage());
            try (TargetServer forced = TargetServer.start(config(dev.path(), ns -> ns.force = true))) {
                assertTrue(forced.subsystem(NQN).namespace(1).blockDevice());
            }
        }
    }

    @Test
    void aMountedDeviceIsRefused() throws Exception {
        assumeTrue(LoopDevice.run("mkfs.ext4", "-V").exitOk(), "needs mkfs.ext4");
        Path mnt = Files.createDirectory(dir.resolve("mnt"));
        try (LoopDevice dev = LoopDevice.attach(backing(16))) {
            assertTrue(LoopDevice.run("mkfs.ext4", "-q", "-F", dev.path().toString())
                    .exitOk());
            LoopDevice.Result mount = LoopDevice.run("mount", dev.path().toString(), mnt.toString());
            assertTrue(mount.exitOk(), mount.output());
            try {
                IOException e = assertThrows(
                        IOException.class,
                        () -> TargetServer.start(config(dev.path(), ns -> {})).close());
                assertTrue(e.getMessage().contains("in use"), e.getMessage());
            } finally {
                LoopDevice.run("umount", mnt.toString());
            }
        }
    }

    @Test
    void aReadOnlyDeviceIsExportedReadOnlyAndRefusesWrites() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16), "--read-only");
                TargetServer target = TargetServer.start(config(dev.path(), ns -> {}))) {
            assertTrue(target.subsystem(NQN).namespace(1).readOnly());
            LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
            assertEquals(Status.dnr(Status.NAMESPACE_WRITE_PROTECTED), write(host, 0, new byte[4096]));
            ByteBuf id = identifyNamespace(host);
            assertEquals(IdentifyNamespace.NSATTR_WRITE_PROTECTED, id.getByte(IdentifyNamespace.NSATTR));
        }
    }

    @Test
    void aBlockSizeBelowTheDevicesLogicalBlockIsRefused() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16), "--sector-size", "4096")) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> TargetServer.start(config(dev.path(), ns -> ns.blockSize = 512))
                            .close());
            assertTrue(e.getMessage().contains("4096-byte logical blocks"), e.getMessage());
        }
    }

    @Test
    void identifyReportsTheDevicesPhysicalBlockAndThatDiscardedBlocksAreNotPromisedZero() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16), "--sector-size", "4096");
                TargetServer target = TargetServer.start(config(dev.path(), ns -> {}))) {
            ByteBuf id = identifyNamespace(LoopHost.connect(target, NQN, HOST, TransportType.TCP));
            assertEquals(0, id.getByte(IdentifyNamespace.DLFEAT) & 0x7, "DLFEAT read behaviour");
            assertEquals(12, id.getByte(IdentifyNamespace.LBAF0 + 2), "LBADS: 4096-byte blocks");
        }
    }

    @Test
    void aDirectNamespaceOnADeviceRoundTripsWithoutFillingThePageCache() throws Exception {
        try (LoopDevice dev = LoopDevice.attach(backing(16));
                TargetServer target = TargetServer.start(config(dev.path(), ns -> ns.direct = true))) {
            TargetNamespace ns = target.subsystem(NQN).namespace(1);
            assertTrue(ns.direct());
            LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
            byte[] data = pattern(16384, 11);
            for (int i = 0; i < 64; i++) assertEquals(Status.SUCCESS, write(host, 1000 + i * 4L, data));
            assertArrayEquals(data, read(host, 1000 + 63 * 4L, data.length));
        }
    }

    @Test
    void aDirectFileNamespaceLeavesTheFileOutOfThePageCache() throws Exception {
        assumeTrue(LoopDevice.run("fincore", "--version").exitOk(), "needs fincore (util-linux)");
        Path file = dir.resolve("direct.img");
        TargetConfig cfg = TargetConfig.loopback(NQN, "64M", file);
        cfg.subsystems.get(0).namespaces.get(0).direct = true;
        try (TargetServer target = TargetServer.start(cfg)) {
            LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
            byte[] data = pattern(16384, 13);
            for (int i = 0; i < 256; i++) assertEquals(Status.SUCCESS, write(host, i * 4L, data)); // 4 MiB
            for (int i = 0; i < 256; i++) assertArrayEquals(data, read(host, i * 4L, data.length));
            long cachedPages = cachedPages(file);
            // Buffered, these 4 MiB would be 1024 cached pages; direct leaves at most the page of the sparse file's
            // last byte.
            assertTrue(cachedPages <= 2, cachedPages + " pages of " + file + " in the page cache");
        }
    }

    private Path backing(int mib) throws IOException {
        Path f = Files.createTempFile(dir, "dev", ".img");
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.setLength((long) mib * MIB);
        }
        return f;
    }

    private static TargetConfig config(Path device, Consumer<TargetConfig.NamespaceConfig> adjust) {
        TargetConfig cfg = TargetConfig.loopback(NQN, null, device);
        adjust.accept(cfg.subsystems.get(0).namespaces.get(0));
        return cfg;
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (i * 31 + seed);
        return b;
    }

    private static int write(LoopHost host, long slba, byte[] data) throws Exception {
        try (LoopRequest w = host.ioRequest(null)) {
            w.reset(Opcodes.IO_WRITE, data.length)
                    .nsid(1)
                    .cdw(10, (int) slba)
                    .cdw(11, (int) (slba >>> 32))
                    .cdw(12, data.length / 4096 - 1);
            w.payload(Unpooled.wrappedBuffer(data));
            host.io.onCommand(w);
            return w.await(30, TimeUnit.SECONDS);
        }
    }

    private static byte[] read(LoopHost host, long slba, int n) throws Exception {
        ByteBuf back = Unpooled.wrappedBuffer(new byte[n]).clear();
        try (LoopRequest r = host.ioRequest(back)) {
            r.reset(Opcodes.IO_READ, n)
                    .nsid(1)
                    .cdw(10, (int) slba)
                    .cdw(11, (int) (slba >>> 32))
                    .cdw(12, n / 4096 - 1);
            host.io.onCommand(r);
            assertEquals(Status.SUCCESS, r.await(30, TimeUnit.SECONDS));
            return ByteBufUtil.getBytes(back);
        }
    }

    private static int flush(LoopHost host) throws Exception {
        try (LoopRequest f = host.ioRequest(null)) {
            f.reset(Opcodes.IO_FLUSH, 0).nsid(1);
            host.io.onCommand(f);
            return f.await(30, TimeUnit.SECONDS);
        }
    }

    private static ByteBuf identifyNamespace(LoopHost host) throws Exception {
        ByteBuf id = Unpooled.wrappedBuffer(new byte[4096]).clear();
        try (LoopRequest r = host.adminRequest(id)) {
            r.reset(Opcodes.ADMIN_IDENTIFY, 4096).nsid(1).cdw(10, 0);
            host.admin.onCommand(r);
            assertEquals(Status.SUCCESS, r.await(10, TimeUnit.SECONDS));
            return id;
        }
    }

    /** Bytes the file system has allocated to {@code file} (st_blocks × 512). */
    private static long allocatedBytes(Path file) {
        LoopDevice.Result r = LoopDevice.run("stat", "-c", "%b", file.toString());
        assertTrue(r.exitOk(), r.output());
        return Long.parseLong(r.output().trim()) * 512;
    }

    private static long cachedPages(Path file) {
        LoopDevice.Result r =
                LoopDevice.run("fincore", "--bytes", "--noheadings", "--output", "PAGES", file.toString());
        assertTrue(r.exitOk(), r.output());
        return Long.parseLong(r.output().trim());
    }
}
