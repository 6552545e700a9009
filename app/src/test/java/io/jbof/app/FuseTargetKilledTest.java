package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.fuse.FuseMount;
import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A FUSE mount whose target process is killed with SIGKILL: callers get EIO (no hang), the mount
 * unmounts, and what was fsync'ed through the mount before the kill is on the restarted target.
 */
class FuseTargetKilledTest {
    static final String NQN = "nqn.2024-01.io.jbof:fuse-kill";

    @TempDir
    Path dir;

    @Test
    void callersGetEioUnmountSucceedsAndFsyncedDataSurvives() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        Path vol = dir.resolve("vol.img");
        String[] args = {"--listen", "127.0.0.1:0", "--nqn", NQN, "--namespace", vol + ":16M"};
        byte[] data = new byte[1_000_003];
        new SplittableRandom(11).nextBytes(data);
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        try (DaemonProcess t = DaemonProcess.java(args)) {
            NvmeController c = NvmeController.connect(options(t.port));
            FuseMount m = FuseMount.mount(c, mnt, FuseMount.Options.defaults().withDirectIo(true));
            try {
                try (FileChannel ch = FileChannel.open(mnt.resolve("ns1"), StandardOpenOption.WRITE)) {
                    ByteBuffer b = ByteBuffer.wrap(data);
                    long pos = 777;
                    while (b.hasRemaining()) pos += ch.write(b, pos);
                    ch.force(false); // FUSE fsync -> NVMe Flush
                }
                t.kill9();
                try (FileChannel ch = FileChannel.open(mnt.resolve("ns1"), StandardOpenOption.READ)) {
                    IOException e = assertThrows(IOException.class, () -> ch.read(ByteBuffer.allocate(4096), 0));
                    assertTrue(e.getMessage().contains("Input/output error"), e.getMessage());
                    e = assertThrows(IOException.class, () -> ch.read(ByteBuffer.allocate(100), 5000));
                    assertTrue(
                            e.getMessage().contains("Input/output error"), "still EIO, not a hang: " + e.getMessage());
                }
            } finally {
                m.close();
                c.close();
            }
            assertFalse(m.isMounted(), "the FUSE loop ended");
            assertFalse(
                    Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()), "no longer in /proc/mounts");
        }
        try (DaemonProcess t = DaemonProcess.java(args);
                NvmeController c = NvmeController.connect(options(t.port))) {
            ByteBuf b = Unpooled.buffer(2 << 20);
            c.namespace(1).readBlocking(0, 512, b);
            byte[] got = new byte[data.length];
            b.getBytes(777, got);
            assertArrayEquals(data, got, "the bytes written and fsync'ed through the mount before SIGKILL");
        }
    }

    private static ConnectOptions options(int port) {
        return ConnectOptions.builder()
                .port(port)
                .subsystemNqn(NQN)
                .ioQueues(2)
                .commandTimeoutMillis(5_000)
                .build();
    }
}
