package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.Connect;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.nvme.auth.AuthMessages;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DH-HMAC-CHAP between the jbof initiator and target on loopback: who gets in, who does not, and why. */
class DhchapAuthenticationTest {
    static final String NQN = "nqn.2024-01.io.jbof:auth";
    static final String HOST = "nqn.2024-01.io.jbof:host-with-secret";
    static final String OPEN_HOST = "nqn.2024-01.io.jbof:host-without-secret";
    static String hostSecret, ctrlSecret, otherSecret;

    @TempDir
    static Path dir;

    static TargetServer target;
    static int port;

    static String newSecret(int hashId, int len) {
        byte[] k = new byte[len];
        new SecureRandom().nextBytes(k);
        return DhchapKey.format(k, hashId);
    }

    @BeforeAll
    static void start() throws Exception {
        hostSecret = newSecret(1, 32);
        ctrlSecret = newSecret(3, 64);
        otherSecret = newSecret(1, 32);
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("ns1.img"));
        TargetConfig.SubsystemConfig s = cfg.subsystems.get(0);
        s.allowAnyHost = true; // hosts without a secret get in unauthenticated; HOST must authenticate
        Files.writeString(dir.resolve("host.key"), hostSecret + "\n");
        s.dhchapSecrets.put(HOST, "@" + dir.resolve("host.key"));
        s.dhchapCtrlSecrets.put(HOST, ctrlSecret);
        target = TestTargets.start(cfg);
        port = TestTargets.port(target);
    }

    @AfterAll
    static void stop() {
        if (target != null) target.close();
    }

    static ConnectOptions.Builder options(String host) {
        return ConnectOptions.builder()
                .port(port)
                .subsystemNqn(NQN)
                .hostNqn(host)
                .ioQueues(2)
                .queueDepth(16)
                .connectTimeoutMillis(5000)
                .commandTimeoutMillis(10_000);
    }

    @Test
    void aHostWithItsSecretAuthenticatesEveryQueueAndDoesIo() throws Exception {
        try (NvmeController c =
                NvmeController.connect(options(HOST).dhchapSecret(hostSecret).build())) {
            roundTrip(c);
        }
        // Bidirectional: the host checks the controller's response with the controller secret.
        try (NvmeController c = NvmeController.connect(options(HOST)
                .dhchapSecret(hostSecret)
                .dhchapCtrlSecret(ctrlSecret)
                .build())) {
            roundTrip(c);
        }
    }

    private static void roundTrip(NvmeController c) throws Exception {
        Namespace ns = c.namespace(1);
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(8192);
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(8192);
        try {
            byte[] pattern = new byte[8192];
            new SecureRandom().nextBytes(pattern);
            out.writeBytes(pattern);
            ns.write(8, 2, out, false).join();
            ns.read(8, 2, in).join();
            byte[] back = new byte[8192];
            in.getBytes(0, back);
            assertTrue(java.util.Arrays.equals(pattern, back), "data read back over authenticated queues");
        } finally {
            out.release();
            in.release();
        }
    }

    @Test
    void aHostWithoutItsSecretIsToldToGiveOne() {
        IOException e = assertThrows(
                IOException.class, () -> NvmeController.connect(options(HOST).build()));
        assertTrue(
                e.getMessage().contains("requires DH-HMAC-CHAP")
                        && e.getMessage().contains("--dhchap-secret"),
                e.getMessage());
    }

    @Test
    void aWrongSecretIsRefusedWithAuthenticationFailed() {
        IOException e = assertThrows(
                IOException.class,
                () -> NvmeController.connect(
                        options(HOST).dhchapSecret(otherSecret).build()));
        assertTrue(
                e.getMessage().contains("DH-HMAC-CHAP refused")
                        && e.getMessage().contains("authentication failed"),
                e.getMessage());
    }

    @Test
    void aControllerThatDoesNotKnowTheControllerSecretFailsTheHostsCheck() {
        IOException e = assertThrows(
                IOException.class,
                () -> NvmeController.connect(options(HOST)
                        .dhchapSecret(hostSecret)
                        .dhchapCtrlSecret(otherSecret)
                        .build()));
        assertTrue(e.getMessage().contains("the controller failed authentication"), e.getMessage());
    }

    /**
     * Linux nvmet ends the association when it gets AUTH_Failure2 on the admin queue, and may close the
     * connection before it completes that Authentication Send. The host must still report why it gave up.
     */
    @Test
    void aControllerThatClosesOnFailure2StillGetsTheFailedCheckReported() throws Exception {
        try (ServerSocket relay = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Boolean> dropped =
                    CompletableFuture.supplyAsync(() -> relayUntil(relay, new Predicate<>() {
                        @Override
                        public boolean test(ByteBuf pdu) {
                            return authMessageId(pdu) == AuthMessages.FAILURE2;
                        }
                    }));
            IOException e = assertThrows(
                    IOException.class,
                    () -> NvmeController.connect(options(HOST)
                            .port(relay.getLocalPort())
                            .dhchapSecret(hostSecret)
                            .dhchapCtrlSecret(otherSecret)
                            .build()));
            assertTrue(
                    dropped.get(30, TimeUnit.SECONDS),
                    "the relay saw the host's Failure2 and closed instead of forwarding it");
            assertTrue(e.getMessage().contains("the controller failed authentication"), e.getMessage());
        }
    }

    /**
     * Linux nvmet also ends the association right after queueing a Failure1 for a wrong response, and the
     * connection may close before the Failure1 arrives: the host still says what most likely went wrong.
     */
    @Test
    void aControllerThatClosesInsteadOfSendingFailure1PointsAtTheHostSecret() throws Exception {
        try (ServerSocket relay = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Boolean> dropped =
                    CompletableFuture.supplyAsync(() -> relayUntil(relay, new Predicate<>() {
                        private boolean replied;

                        @Override
                        public boolean test(ByteBuf pdu) {
                            if (authMessageId(pdu) == AuthMessages.REPLY) replied = true;
                            return replied && isCommand(pdu, Opcodes.FCTYPE_AUTH_RECEIVE);
                        }
                    }));
            IOException e = assertThrows(
                    IOException.class,
                    () -> NvmeController.connect(options(HOST)
                            .port(relay.getLocalPort())
                            .dhchapSecret(otherSecret)
                            .build()));
            assertTrue(
                    dropped.get(30, TimeUnit.SECONDS),
                    "the relay closed at the Authentication Receive that follows the host's reply");
            assertTrue(
                    e.getMessage().contains("DH-HMAC-CHAP failed after our response")
                            && e.getMessage().contains("--dhchap-secret"),
                    e.getMessage());
        }
    }

    private static boolean isCommand(ByteBuf pdu, int fctype) {
        return Pdu.type(pdu, 0) == Pdu.CAPSULE_CMD
                && pdu.getUnsignedByte(Pdu.COMMON_HEADER) == Opcodes.FABRICS
                && pdu.getUnsignedByte(Pdu.COMMON_HEADER + 4) == fctype;
    }

    /** The message ID of an Authentication Send carrying its message in the capsule, else -1. */
    private static int authMessageId(ByteBuf pdu) {
        int pdo = pdu.getUnsignedByte(3);
        return isCommand(pdu, Opcodes.FCTYPE_AUTH_SEND) && pdo > 0 ? pdu.getUnsignedByte(pdo + 1) : -1;
    }

    /**
     * Relays one host connection to the target until a PDU from the host matches {@code dropHere}, then
     * closes both sides without forwarding it; false if the host went away first.
     */
    private static boolean relayUntil(ServerSocket relay, Predicate<ByteBuf> dropHere) {
        try (Socket host = relay.accept();
                Socket tgt = new Socket(InetAddress.getLoopbackAddress(), port)) {
            Thread back = new Thread(() -> {
                try {
                    tgt.getInputStream().transferTo(host.getOutputStream());
                } catch (IOException closed) {
                    // the other direction closed both sockets
                }
            });
            back.start();
            DataInputStream in = new DataInputStream(host.getInputStream());
            while (true) {
                ByteBuf pdu = readPdu(in);
                if (dropHere.test(pdu)) return true; // try-with-resources closes both sockets
                tgt.getOutputStream().write(pdu.array(), 0, pdu.readableBytes());
            }
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void hostsWithoutASecretConfiguredConnectWithoutAuthentication() throws Exception {
        try (NvmeController c = NvmeController.connect(options(OPEN_HOST).build())) {
            roundTrip(c);
        }
    }

    @Test
    void beforeAuthenticatingAQueueTakesNoCommandButGetsAuthenticationRequired() throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            ByteBuf ic = Unpooled.buffer(Pdu.IC_LENGTH);
            Pdu.writeCommonHeader(ic, Pdu.IC_REQ, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
            ic.writeZero(Pdu.IC_LENGTH - ic.writerIndex());
            s.getOutputStream().write(ic.array(), 0, Pdu.IC_LENGTH);
            in.readFully(new byte[Pdu.IC_LENGTH]);
            ByteBuf data = Connect.data(UUID.randomUUID(), Connect.CNTLID_DYNAMIC, NQN, HOST);
            ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
            new NvmeCommand()
                    .wrap(sqe, 0)
                    .opcode(Opcodes.FABRICS)
                    .flags(NvmeCommand.FLAGS_SGL)
                    .cid(1)
                    .fctype(Opcodes.FCTYPE_CONNECT)
                    .cdw(10, 0)
                    .cdw(11, 31)
                    .cdw(12, 30_000);
            Sgl.write(sqe, 0, 0, Connect.DATA_SIZE, Sgl.ID_IN_CAPSULE);
            send(s, sqe, data.array(), Connect.DATA_SIZE);
            ByteBuf r = readPdu(in);
            assertEquals(Status.SUCCESS, status(r));
            assertTrue(
                    (r.getIntLE(Pdu.COMMON_HEADER) & AuthMessages.CONNECT_AUTHREQ_ATR) != 0,
                    "Connect's DW0 asks for authentication (ATR)");

            ByteBuf identify = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
            new NvmeCommand()
                    .wrap(identify, 0)
                    .opcode(Opcodes.ADMIN_IDENTIFY)
                    .flags(NvmeCommand.FLAGS_SGL)
                    .cid(2)
                    .cdw(10, 1);
            Sgl.write(identify, 0, 0, 4096, Sgl.ID_TCP_TRANSPORT);
            send(s, identify, new byte[0], 0);
            assertEquals(Status.AUTHENTICATION_REQUIRED, status(readPdu(in)) & 0x7FF);

            ByteBuf get = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
            new NvmeCommand()
                    .wrap(get, 0)
                    .opcode(Opcodes.FABRICS)
                    .flags(NvmeCommand.FLAGS_SGL)
                    .cid(3)
                    .fctype(Opcodes.FCTYPE_PROPERTY_GET);
            send(s, get, new byte[0], 0);
            assertEquals(Status.AUTHENTICATION_REQUIRED, status(readPdu(in)) & 0x7FF);
        }
    }

    private static int status(ByteBuf capsuleResp) {
        assertEquals(Pdu.CAPSULE_RESP, Pdu.type(capsuleResp, 0));
        return capsuleResp.getUnsignedShortLE(Pdu.COMMON_HEADER + 14) >>> 1;
    }

    private static void send(Socket s, ByteBuf sqe, byte[] data, int len) throws IOException {
        ByteBuf pdu = RawTcpHost.capsule(sqe, data, len, false);
        s.getOutputStream().write(pdu.array(), 0, pdu.writerIndex());
    }

    private static ByteBuf readPdu(DataInputStream in) throws IOException {
        ByteBuf pdu = RawTcpHost.readPdu(in);
        if (pdu == null) throw new java.io.EOFException("the target closed the connection");
        return pdu;
    }
}
