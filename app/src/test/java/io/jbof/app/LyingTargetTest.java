package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.ControllerDataException;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The initiator treats what a target sends as input: a real jbof target behind a relay that rewrites
 * its PDUs (Identify fields no host can use; a Read reported successful after half its data).
 */
class LyingTargetTest {
    static final String NQN = "nqn.2024-01.io.jbof:lying";

    @TempDir
    Path dir;

    @Test
    void anIdentifyControllerWithAnAbsurdMdtsIsRefusedNamingTheField() throws Exception {
        ControllerDataException e = connectThrough(pdu -> {
            int at = identifyControllerData(pdu);
            if (at >= 0) pdu.setByte(at + 77, 51); // MDTS = 51: 2^51 pages
            return pdu;
        });
        assertEquals("MDTS", e.field());
        assertTrue(e.getMessage().contains("MDTS = 51"), e.getMessage());
    }

    @Test
    void anIdentifyNamespaceWithAnAbsurdBlockSizeIsRefusedNamingTheField() throws Exception {
        ControllerDataException e = connectThrough(pdu -> {
            int at = dataOf(pdu, 4096);
            if (at >= 0 && identifyControllerData(pdu) < 0 && pdu.getLongLE(at) != 0)
                pdu.setByte(at + 128 + 2, 60); // LBAF0.LBADS
            return pdu;
        });
        assertTrue(e.field().startsWith("LBADS"), e.field());
    }

    @Test
    void aReadReportedSuccessfulAfterHalfItsDataFails() throws Exception {
        Set<Integer> truncated = new HashSet<>();
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                Relay relay = new Relay(TestTargets.port(t), pdu -> {
                    int type = Pdu.type(pdu, 0);
                    int cid = pdu.getUnsignedShortLE(
                            type == Pdu.CAPSULE_RESP ? Pdu.COMMON_HEADER + 12 : Pdu.COMMON_HEADER);
                    if (dataOf(pdu, 8192) >= 0) {
                        // Half the data, flagged SUCCESS: no CapsuleResp is to follow.
                        truncated.add(cid);
                        ByteBuf half = Unpooled.buffer(Pdu.DATA_HLEN + 4096);
                        half.writeBytes(pdu, 0, Pdu.DATA_HLEN).writeBytes(pdu, Pdu.DATA_HLEN, 4096);
                        half.setByte(1, Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS);
                        half.setIntLE(4, Pdu.DATA_HLEN + 4096);
                        half.setIntLE(Pdu.COMMON_HEADER + 8, 4096);
                        return half;
                    }
                    if (type == Pdu.CAPSULE_RESP && truncated.remove(cid)) return null;
                    return pdu;
                });
                NvmeController c = NvmeController.connect(ConnectOptions.builder()
                        .port(relay.port())
                        .subsystemNqn(NQN)
                        .ioQueues(1)
                        .build())) {
            ByteBuf dst = Unpooled.buffer(8192);
            ExecutionException e = assertThrows(
                    ExecutionException.class,
                    () -> c.namespace(1).read(0, 2, dst).get(30, TimeUnit.SECONDS));
            assertTrue(
                    String.valueOf(e.getCause().getMessage()).toLowerCase().contains("data transfer"),
                    String.valueOf(e.getCause()));
            c.namespace(1).flushBlocking(); // the queue goes on
        }
    }

    private ControllerDataException connectThrough(UnaryOperator<ByteBuf> lie) throws Exception {
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                Relay relay = new Relay(TestTargets.port(t), lie)) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(relay.port())
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .build();
            Exception e = assertThrows(
                    Exception.class, () -> NvmeController.connect(o).close());
            Throwable c = e;
            while (!(c instanceof ControllerDataException) && c.getCause() != null) c = c.getCause();
            return assertInstanceOf(ControllerDataException.class, c, String.valueOf(e));
        }
    }

    /** Offset of the payload of a C2HData PDU carrying exactly {@code length} bytes, or -1. */
    static int dataOf(ByteBuf pdu, int length) {
        if (Pdu.type(pdu, 0) != Pdu.C2H_DATA || pdu.getIntLE(Pdu.COMMON_HEADER + 8) != length) return -1;
        return Pdu.pdo(pdu, 0);
    }

    /** Identify Controller data carries the subsystem NQN at byte 768. */
    static int identifyControllerData(ByteBuf pdu) {
        int at = dataOf(pdu, 4096);
        if (at < 0) return -1;
        return pdu.toString(at + 768, 4, StandardCharsets.US_ASCII).equals("nqn.") ? at : -1;
    }

    /** Relays every connection to the target; the target's PDUs pass through {@code lie} (null drops one). */
    static final class Relay implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        private final Set<Socket> sockets = java.util.concurrent.ConcurrentHashMap.newKeySet();

        Relay(int targetPort, UnaryOperator<ByteBuf> lie) throws IOException {
            Thread accept = new Thread(() -> {
                try {
                    while (true) {
                        Socket host = server.accept();
                        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                        sockets.add(host);
                        sockets.add(target);
                        daemon(() -> copy(host, target));
                        daemon(() -> rewrite(target, host, lie));
                    }
                } catch (IOException closed) {
                    // the relay is closed
                }
            });
            accept.setDaemon(true);
            accept.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private static void daemon(Runnable r) {
            Thread t = new Thread(r);
            t.setDaemon(true);
            t.start();
        }

        private static void copy(Socket from, Socket to) {
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException ignored) {
                // either side closed
            } finally {
                closeQuietly(to);
            }
        }

        private static void rewrite(Socket from, Socket to, UnaryOperator<ByteBuf> lie) {
            try {
                DataInputStream in = new DataInputStream(from.getInputStream());
                OutputStream out = to.getOutputStream();
                ByteBuf next;
                while ((next = RawTcpHost.readPdu(in)) != null) {
                    ByteBuf pdu = lie.apply(next);
                    if (pdu != null) out.write(pdu.array(), pdu.arrayOffset(), pdu.writerIndex());
                }
            } catch (IOException ignored) {
                // either side closed
            } finally {
                closeQuietly(to);
            }
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) closeQuietly(s);
        }
    }
}
