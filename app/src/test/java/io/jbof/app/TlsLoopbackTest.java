package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.DiscoveryEntry;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.DiscoveryLog;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskKey;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NVMe/TCP over TLS 1.3 (PSK) between the jbof initiator and target on loopback: who gets in, and the data. */
class TlsLoopbackTest {
    static final String NQN = "nqn.2024-01.io.jbof:tls";
    static final String HOST = "nqn.2024-01.io.jbof:tls-host";
    static final String HOST384 = "nqn.2024-01.io.jbof:tls-host-384";
    static final String STRANGER = "nqn.2024-01.io.jbof:tls-stranger";
    static TlsPskKey key, key384;

    @TempDir
    static Path dir;

    static TargetServer required, optional;

    @BeforeAll
    static void start() throws Exception {
        key = TlsPskKey.generate(1);
        key384 = TlsPskKey.generate(2);
        Files.writeString(dir.resolve("host.key"), key.format() + "\n");
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("ns1.img"));
        cfg.subsystems.get(0).tlsKeys.put(HOST, "@" + dir.resolve("host.key"));
        cfg.subsystems.get(0).tlsKeys.put(HOST384, key384.format());
        required = TestTargets.start(cfg); // TLS required: keys given, no mode named

        TargetConfig opt = TestTargets.config(NQN, dir.resolve("ns2.img"));
        opt.tls = "optional";
        opt.subsystems.get(0).allowAnyHost = true;
        opt.subsystems.get(0).tlsKeys.put(HOST, key.format());
        optional = TestTargets.start(opt);
    }

    @AfterAll
    static void stop() {
        if (required != null) required.close();
        if (optional != null) optional.close();
    }

    static ConnectOptions.Builder options(TargetServer t, String host, TlsPskKey k) {
        return ConnectOptions.builder()
                .port(TestTargets.port(t))
                .subsystemNqn(NQN)
                .hostNqn(host)
                .ioQueues(2)
                .queueDepth(16)
                .connectTimeoutMillis(5000)
                .commandTimeoutMillis(10_000)
                .tlsKey(k == null ? null : k.format());
    }

    @Test
    void aHostWithItsKeyMovesDataOverTlsWithEitherIdentityVersionAndHash() throws Exception {
        for (int version = 0; version <= 1; version++) {
            try (NvmeController c = NvmeController.connect(
                    options(required, HOST, key).tlsIdentityVersion(version).build())) {
                roundTrip(c, 3 + version, 1);
            }
            try (NvmeController c = NvmeController.connect(options(required, HOST384, key384)
                    .tlsIdentityVersion(version)
                    .build())) {
                roundTrip(c, 7 + version, 9);
            }
        }
    }

    @Test
    void aSha384KeyBoundToSha256AsDebian13sTlshdDoesIsAccepted() throws Exception {
        // tlshd with gnutls before 3.8.10 binds a SHA-384 PSK to SHA-256; the target follows the binder's length.
        try (NvmeController c = NvmeController.connect(options(required, HOST384, key384)
                .tlsBinder(ConnectOptions.TlsBinder.SHA256)
                .build())) {
            roundTrip(c, 13, 40);
        }
    }

    @Test
    void rfc8446LabelsAreRecognisedByTheirDigest() throws Exception {
        // The target derives with the legacy labels; a version 1 identity tells it the host used RFC 8446's.
        try (NvmeController c = NvmeController.connect(options(required, HOST, key)
                .tlsLabels(TlsPskDerivation.Labels.RFC8446)
                .build())) {
            roundTrip(c, 11, 33);
        }
    }

    /** Writes 1 MiB of random bytes in 128 KiB commands at {@code block} and reads them back: many records each way. */
    private static void roundTrip(NvmeController c, long seed, long block) throws Exception {
        Namespace ns = c.namespace(1);
        int len = 1 << 20;
        byte[] pattern = new byte[len];
        new SplittableRandom(seed).nextBytes(pattern);
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(len);
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(len);
        try {
            out.writeBytes(pattern);
            ns.write(block, len / ns.blockSize(), out, false).join();
            ns.flush().join();
            ns.read(block, len / ns.blockSize(), in).join();
            byte[] back = new byte[len];
            in.getBytes(0, back);
            assertTrue(Arrays.equals(pattern, back), "1 MiB read back over TLS equals what was written");
        } finally {
            out.release();
            in.release();
        }
    }

    @Test
    void aPlainHostIsClosedAndToldAboutTheKey() {
        IOException e = assertThrows(
                IOException.class,
                () -> NvmeController.connect(options(required, HOST, null).build()));
        assertTrue(e.getMessage().contains("--tls-key"), e.getMessage());
    }

    @Test
    void aWrongKeyFailsTheHandshake() {
        IOException e = assertThrows(
                IOException.class,
                () -> NvmeController.connect(
                        options(required, HOST, TlsPskKey.generate(1)).build()));
        assertTrue(
                e.getMessage().contains("TLS handshake failed")
                        && e.getMessage().contains("unknown_psk_identity"),
                e.getMessage());
        // Version 0 identities carry no digest: the target finds the host's key, and the binder check fails.
        IOException e0 = assertThrows(
                IOException.class,
                () -> NvmeController.connect(options(required, HOST, TlsPskKey.generate(1))
                        .tlsIdentityVersion(0)
                        .build()));
        assertTrue(
                e0.getMessage().contains("TLS handshake failed")
                        && e0.getMessage().contains("decrypt_error"),
                e0.getMessage());
    }

    @Test
    void anotherHostsKeyDoesNotLetAStrangerIn() {
        // The identity names the host: the stranger's NQN has no key, whatever key it holds.
        IOException e = assertThrows(
                IOException.class,
                () -> NvmeController.connect(options(required, STRANGER, key).build()));
        assertTrue(e.getMessage().contains("TLS handshake failed"), e.getMessage());
    }

    @Test
    void aQueueSecuredForOneHostCannotConnectAsAnother() throws Exception {
        // The handshake uses HOST384's identity and key; the Connect then names HOST: Connect Invalid Host.
        TlsPskDerivation.Derived other =
                TlsPskDerivation.derive(key384, HOST384, NQN, 1, TlsPskDerivation.Labels.LEGACY);
        io.jbof.initiator.transport.tcp.TcpHostTransport tcp = new io.jbof.initiator.transport.tcp.TcpHostTransport(1);
        io.jbof.transport.HostTransport swapped = new io.jbof.transport.HostTransport() {
            @Override
            public io.jbof.transport.TransportType type() {
                return io.jbof.transport.TransportType.TCP;
            }

            @Override
            public java.util.concurrent.CompletableFuture<io.jbof.transport.HostConnection> connect(
                    io.jbof.transport.HostConnectionOptions o, io.jbof.transport.HostConnection.Listener l) {
                return tcp.connect(o.withTls(other, false), l);
            }

            @Override
            public void close() {
                tcp.close();
            }
        };
        io.jbof.nvme.NvmeException e = assertThrows(
                io.jbof.nvme.NvmeException.class,
                () -> NvmeController.connect(options(required, HOST, key).build(), swapped, true));
        assertTrue(e.getMessage().contains("Connect Invalid Host"), e.getMessage());
    }

    @Test
    void discoveryOverTlsSaysTheSubsystemRequiresTls13() throws Exception {
        try (NvmeController c = NvmeController.connect(options(required, HOST, key)
                .subsystemNqn(Nqn.DISCOVERY)
                .ioQueues(0)
                .build())) {
            List<DiscoveryEntry> entries = c.discoveryLog();
            assertEquals(1, entries.size());
            assertEquals(DiscoveryLog.TREQ_SECURE_REQUIRED, entries.get(0).treq() & 3);
            assertEquals("tls13", entries.get(0).sectype());
        }
    }

    @Test
    void anOptionalTargetServesPlainAndTlsHosts() throws Exception {
        try (NvmeController plain =
                        NvmeController.connect(options(optional, STRANGER, null).build());
                NvmeController tls =
                        NvmeController.connect(options(optional, HOST, key).build())) {
            roundTrip(plain, 21, 1);
            roundTrip(tls, 22, 300);
            List<DiscoveryEntry> entries;
            try (NvmeController d = NvmeController.connect(options(optional, STRANGER, null)
                    .subsystemNqn(Nqn.DISCOVERY)
                    .ioQueues(0)
                    .build())) {
                entries = d.discoveryLog();
            }
            assertEquals(DiscoveryLog.TREQ_SECURE_NOT_REQUIRED, entries.get(0).treq() & 3);
            assertEquals("tls13", entries.get(0).sectype());
        }
    }

    @Test
    void garbageThatLooksLikeTlsClosesOnlyThatSocket() throws Exception {
        try (NvmeController healthy =
                NvmeController.connect(options(required, HOST, key).build())) {
            SplittableRandom rnd = new SplittableRandom(5);
            for (int i = 0; i < 20; i++) {
                byte[] junk = new byte[rnd.nextInt(6, 4096)];
                rnd.nextBytes(junk);
                junk[0] = 0x16; // a handshake record header, then anything
                junk[1] = 3;
                junk[2] = (byte) rnd.nextInt(0, 5);
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", TestTargets.port(required)), 5000);
                    s.setSoTimeout(30_000);
                    s.getOutputStream().write(junk);
                    s.getOutputStream().flush();
                    s.shutdownOutput(); // a truncated record must not leave the target waiting forever
                    drainUntilClosed(s.getInputStream());
                }
                roundTrip(healthy, 100 + i, 500);
            }
        }
    }

    @Test
    void aPeerThatNeverHandshakesIsDropped() throws Exception {
        // The surefire configuration sets jbof.tls.handshakeTimeoutMs to 5 s.
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", TestTargets.port(required)), 5000);
            s.setSoTimeout(60_000);
            s.getOutputStream().write(new byte[] {0x16, 3, 1}); // the start of a record, and then nothing
            s.getOutputStream().flush();
            drainUntilClosed(s.getInputStream());
        }
    }

    /** Reads until the target closes (an alert may come first); fails on timeout. */
    private static void drainUntilClosed(InputStream in) throws IOException {
        byte[] buf = new byte[512];
        for (int total = 0; total < 1 << 20; ) {
            int n;
            try {
                n = in.read(buf);
            } catch (java.net.SocketException reset) {
                return;
            }
            if (n < 0) return;
            total += n;
        }
        throw new AssertionError("target kept sending");
    }
}
