package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.fuse.FuseMount;
import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The initiator's reconnect policy (--ctrl-loss-tmo, --reconnect-delay): a target restart is an outage, not an error. */
class ReconnectTest {
    static final String NQN = "nqn.2024-01.io.jbof:reconnect";

    @TempDir
    Path dir;

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private String[] target(int port) {
        return new String[] {
            "--listen", "127.0.0.1:" + port, "--nqn", NQN, "--namespace", dir.resolve("vol.img") + ":16M"
        };
    }

    private static ConnectOptions.Builder options(int port) {
        return ConnectOptions.builder()
                .port(port)
                .subsystemNqn(NQN)
                .ioQueues(2)
                .commandTimeoutMillis(10_000)
                .reconnectDelayMillis(100);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test
    @Timeout(120)
    void ioSubmittedWhileTheTargetIsDownCompletesAfterItRestarts() throws Exception {
        int port = freePort();
        byte[] before = random(8192, 1);
        byte[] during = random(8192, 2);
        try (NvmeController c = connectAfterStart(port)) {
            Namespace ns = c.namespace(1);
            DaemonProcess first = running;
            ns.writeBlocking(10, 2, Unpooled.wrappedBuffer(before), false);
            ns.flushBlocking();
            first.kill9();
            // Issued while no target is listening: held by the queues, not failed.
            CompletableFuture<Void> write = ns.write(20, 2, Unpooled.wrappedBuffer(during), false);
            ByteBuf readBack = Unpooled.buffer(8192);
            CompletableFuture<Void> read = ns.read(10, 2, readBack);
            try (DaemonProcess second = DaemonProcess.java(target(port))) {
                write.get(60, TimeUnit.SECONDS);
                read.get(60, TimeUnit.SECONDS);
                assertArrayEquals(before, bytes(readBack), "the held read, served by the restarted target");
                ByteBuf b = Unpooled.buffer(8192);
                ns.readBlocking(20, 2, b);
                assertArrayEquals(during, bytes(b), "the held write landed");
                ns.flushBlocking();
            }
        }
    }

    @Test
    @Timeout(120)
    void heldIoFailsOnceTheControllerLossTimeoutPasses() throws Exception {
        int port = freePort();
        try (DaemonProcess t = DaemonProcess.java(target(port));
                NvmeController c = NvmeController.connect(
                        options(port).ctrlLossTimeoutMillis(1000).build())) {
            Namespace ns = c.namespace(1);
            ns.flushBlocking();
            t.kill9();
            ExecutionException e = assertThrows(
                    ExecutionException.class,
                    () -> ns.read(0, 1, Unpooled.buffer(4096)).get(60, TimeUnit.SECONDS));
            assertTrue(
                    e.getCause() instanceof IOException
                            && e.getCause().getMessage().contains("no reconnect within 1000 ms"),
                    String.valueOf(e.getCause()));
            assertThrows(
                    ExecutionException.class,
                    () -> ns.read(0, 1, Unpooled.buffer(4096)).get(60, TimeUnit.SECONDS),
                    "and new I/O fails at once");
        }
    }

    @Test
    @Timeout(120)
    void aFuseMountRidesOutATargetRestart() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        int port = freePort();
        byte[] data = random(100_000, 3);
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        try (NvmeController c = connectAfterStart(port)) {
            FuseMount m = FuseMount.mount(c, mnt, FuseMount.Options.defaults().withDirectIo(true));
            try (FileChannel ch =
                    FileChannel.open(mnt.resolve("ns1"), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(data), 5000);
                ch.force(false);
                running.kill9();
                CompletableFuture<byte[]> reader = CompletableFuture.supplyAsync(() -> {
                    ByteBuffer b = ByteBuffer.allocate(data.length);
                    try {
                        while (b.hasRemaining()) ch.read(b, 5000 + b.position());
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                    return b.array();
                });
                try (DaemonProcess second = DaemonProcess.java(target(port))) {
                    assertArrayEquals(
                            data, reader.get(60, TimeUnit.SECONDS), "a read issued during the outage returns the data");
                }
            } finally {
                m.close();
            }
        }
    }

    private DaemonProcess running;

    private NvmeController connectAfterStart(int port) throws Exception {
        running = DaemonProcess.java(target(port));
        return NvmeController.connect(
                options(port).ctrlLossTimeoutMillis(60_000).build());
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        return out;
    }
}
