package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Garbage on one socket ends only that connection; a healthy queue beside it keeps moving data. */
class HostileSocketTest {
    static final String NQN = "nqn.2024-01.io.jbof:hostile";

    @TempDir
    Path dir;

    @Test
    void garbageInsteadOfICReqClosesOnlyThatSocket() throws Exception {
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                NvmeController healthy = NvmeController.connect(options(t))) {
            roundTrip(healthy, 1);
            SplittableRandom rnd = new SplittableRandom(7);
            for (int i = 0; i < 20; i++) {
                byte[] junk = new byte[rnd.nextInt(1, 4096)];
                rnd.nextBytes(junk);
                try (Socket s = connect(t)) {
                    s.getOutputStream().write(junk);
                    s.getOutputStream().flush();
                    assertClosedAfterOptionalTermReq(s.getInputStream());
                }
                roundTrip(healthy, i + 2);
            }
        }
    }

    @Test
    void malformedPduAfterHandshakeGetsC2HTermReq() throws Exception {
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                NvmeController healthy = NvmeController.connect(options(t))) {
            try (Socket s = connect(t)) {
                OutputStream out = s.getOutputStream();
                DataInputStream in = new DataInputStream(s.getInputStream());
                ByteBuf ic = Unpooled.buffer(Pdu.IC_LENGTH);
                Pdu.writeCommonHeader(ic, Pdu.IC_REQ, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
                ic.writeZero(Pdu.IC_LENGTH - ic.writerIndex());
                out.write(ic.array(), 0, Pdu.IC_LENGTH);
                byte[] resp = new byte[Pdu.IC_LENGTH];
                in.readFully(resp);
                assertEquals(Pdu.IC_RESP, resp[0]);
                // A CapsuleCmd whose HLEN is wrong: an invalid PDU header per NVMe/TCP 3.6.2.
                ByteBuf bad = Unpooled.buffer(Pdu.CAPSULE_CMD_HLEN);
                Pdu.writeCommonHeader(bad, Pdu.CAPSULE_CMD, 0, 40, 0, Pdu.CAPSULE_CMD_HLEN);
                bad.writeZero(Pdu.CAPSULE_CMD_HLEN - bad.writerIndex());
                out.write(bad.array(), 0, Pdu.CAPSULE_CMD_HLEN);
                byte[] head = new byte[Pdu.TERM_REQ_HLEN];
                in.readFully(head);
                ByteBuf h = Unpooled.wrappedBuffer(head);
                assertEquals(Pdu.C2H_TERM_REQ, Pdu.type(h, 0));
                assertEquals(Pdu.FES_INVALID_PDU_HEADER, h.getUnsignedShortLE(Pdu.TERM_OFF_FES));
                assertEquals(2, h.getIntLE(Pdu.TERM_OFF_FEI), "FEI names the byte offset of the bad field (HLEN)");
                in.skipNBytes(Pdu.plen(h, 0) - Pdu.TERM_REQ_HLEN);
                assertEquals(-1, in.read(), "the target closes the connection after its TermReq");
            }
            roundTrip(healthy, 99);
        }
    }

    @Test
    void aSocketThatNeverBecomesAQueueIsClosed() throws Exception {
        // The surefire configuration sets jbof.tcp.connectTimeoutMs to 5 s (default 30 s).
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                NvmeController healthy = NvmeController.connect(options(t))) {
            try (Socket silent = connect(t);
                    Socket noConnect = connect(t)) {
                ByteBuf ic = Unpooled.buffer(Pdu.IC_LENGTH);
                Pdu.writeCommonHeader(ic, Pdu.IC_REQ, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
                ic.writeZero(Pdu.IC_LENGTH - ic.writerIndex());
                noConnect.getOutputStream().write(ic.array(), 0, Pdu.IC_LENGTH); // an ICReq, then no Connect
                assertClosedAfterOptionalTermReq(silent.getInputStream());
                assertClosedAfterOptionalTermReq(noConnect.getInputStream());
            }
            roundTrip(healthy, 99); // a connected queue is not subject to it
        }
    }

    private static void assertClosedAfterOptionalTermReq(InputStream in) throws IOException {
        // The target may answer with a C2HTermReq (or, if the junk happened to frame an ICReq, an ICResp)
        // but must then close; reading is bounded by the socket timeout.
        byte[] buf = new byte[8192];
        long total = 0;
        while (true) {
            int n;
            try {
                n = in.read(buf);
            } catch (java.net.SocketException e) {
                return; // reset by the target: closed
            }
            if (n < 0) return;
            total += n;
            assertTrue(
                    total <= 2 * Pdu.TERM_REQ_MAX_PLEN + Pdu.IC_LENGTH,
                    "the target answered junk with " + total + " bytes");
        }
    }

    private static Socket connect(TargetServer t) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", TestTargets.port(t)), 10_000);
        s.setSoTimeout(30_000); // a target that neither answers nor closes fails the test instead of hanging it
        return s;
    }

    private static void roundTrip(NvmeController c, int seed) throws Exception {
        Namespace ns = c.namespace(1);
        byte[] data = new byte[3 * 4096];
        new SplittableRandom(seed).nextBytes(data);
        ns.writeBlocking(seed, 3, Unpooled.wrappedBuffer(data), false);
        ByteBuf r = Unpooled.buffer(data.length);
        ns.readBlocking(seed, 3, r);
        assertEquals(Unpooled.wrappedBuffer(data), r);
    }

    private static ConnectOptions options(TargetServer t) {
        return ConnectOptions.builder()
                .port(TestTargets.port(t))
                .subsystemNqn(NQN)
                .ioQueues(1)
                .build();
    }
}
