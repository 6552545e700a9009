package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.Connect;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Properties;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;

/**
 * Coverage-guided fuzzing of the target's command handling through a real socket: after a valid
 * handshake (ICReq, Connect, CC.EN, and an I/O queue Connect half the time), fuzzed 64-byte command
 * capsules with fuzzed in-capsule data. The target must answer each (a response, an R2T, data, or a
 * TermReq and close) within 5 s, never touch bytes outside the namespace (the file keeps its size),
 * and keep serving a healthy controller beside it.
 */
class TargetCommandFuzzTest {
    static final String NQN = "nqn.2024-01.io.jbof:fuzz";
    static final long SIZE = 16L << 20;
    private static Path dir;
    private static TargetServer target;
    private static NvmeController healthy;
    private static long inputs;

    private static synchronized void start() throws Exception {
        if (target != null) return;
        dir = Files.createTempDirectory("jbof-fuzz");
        target = TestTargets.start(TestTargets.config(NQN, dir.resolve("ns1.img"), dir.resolve("ns2.img")));
        healthy = NvmeController.connect(ConnectOptions.builder()
                .port(TestTargets.port(target))
                .subsystemNqn(NQN)
                .ioQueues(1)
                .build());
    }

    @AfterAll
    static void stop() throws IOException {
        if (healthy != null) healthy.close();
        if (target != null) target.close();
        if (dir != null) {
            try (var s = Files.list(dir)) {
                for (Path p : (Iterable<Path>) s::iterator) Files.deleteIfExists(p);
            }
            Files.deleteIfExists(dir);
        }
    }

    @FuzzTest(maxDuration = "30s")
    void fuzzedCommandsAreAnsweredAndStayInsideTheNamespace(FuzzedDataProvider d) throws Exception {
        // Jazzer's SSRF detector stops any connection; this test talks to its own target on loopback only.
        try (var ignored = BugDetectors.allowNetworkConnections(
                (host, port) -> host.equals("localhost") || host.startsWith("127.") || host.equals("::1"))) {
            fuzzOneInput(d);
        }
    }

    private void fuzzOneInput(FuzzedDataProvider d) throws Exception {
        start();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", TestTargets.port(target)), 5000);
            s.setSoTimeout(5000);
            s.setTcpNoDelay(true);
            DataInputStream in = new DataInputStream(s.getInputStream());
            handshake(s, in, 0, 0xFFFF);
            int cntlid = lastCntlid;
            propertySet(s, in, Properties.CC, Properties.CC_EN | (6 << 16) | (4 << 20));
            Socket io = null;
            try {
                Socket q = s;
                DataInputStream qin = in;
                if (d.consumeBoolean()) {
                    io = new Socket();
                    io.connect(new InetSocketAddress("127.0.0.1", TestTargets.port(target)), 5000);
                    io.setSoTimeout(5000);
                    qin = new DataInputStream(io.getInputStream());
                    handshake(io, qin, 1, cntlid);
                    q = io;
                }
                int commands = d.consumeInt(1, 4);
                for (int i = 0; i < commands && d.remainingBytes() > 0; i++) {
                    if (!sendFuzzedCommand(q, d, 100 + i)) break;
                    if (!answered(qin)) break; // a TermReq and close: the connection is over
                }
            } finally {
                if (io != null) io.close();
            }
        }
        assertEquals(SIZE, Files.size(dir.resolve("ns1.img")), "ns1 file size");
        assertEquals(SIZE, Files.size(dir.resolve("ns2.img")), "ns2 file size");
        if (++inputs % 50 == 0) healthy.namespace(1).flushBlocking(); // the daemon still serves others
    }

    private static int lastCntlid;

    private static void handshake(Socket s, DataInputStream in, int qid, int cntlid) throws IOException {
        ByteBuf ic = Unpooled.buffer(Pdu.IC_LENGTH);
        Pdu.writeCommonHeader(ic, Pdu.IC_REQ, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
        ic.writeZero(Pdu.IC_LENGTH - ic.writerIndex());
        s.getOutputStream().write(ic.array(), 0, Pdu.IC_LENGTH);
        byte[] resp = new byte[Pdu.IC_LENGTH];
        in.readFully(resp);
        UUID id = UUID.nameUUIDFromBytes("fuzz".getBytes());
        ByteBuf data = Connect.data(id, cntlid, NQN, "nqn.2014-08.org.nvmexpress:uuid:" + id);
        ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        new NvmeCommand()
                .wrap(sqe, 0)
                .opcode(Opcodes.FABRICS)
                .flags(NvmeCommand.FLAGS_SGL)
                .cid(1)
                .fctype(Opcodes.FCTYPE_CONNECT)
                .cdw(10, qid << 16)
                .cdw(11, 31)
                .cdw(12, qid == 0 ? 30_000 : 0);
        Sgl.write(sqe, 0, 0, Connect.DATA_SIZE, Sgl.ID_IN_CAPSULE);
        writeCapsule(s, sqe, data.array(), Connect.DATA_SIZE);
        ByteBuf r = readPdu(in);
        if (r == null || Pdu.type(r, 0) != Pdu.CAPSULE_RESP)
            fail("Connect (queue " + qid + ") was not answered with a CapsuleResp");
        if ((r.getUnsignedShortLE(Pdu.COMMON_HEADER + 14) >>> 1) != 0) fail("Connect (queue " + qid + ") failed");
        lastCntlid = r.getUnsignedShortLE(Pdu.COMMON_HEADER);
    }

    private static void propertySet(Socket s, DataInputStream in, int offset, int value) throws IOException {
        ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        new NvmeCommand()
                .wrap(sqe, 0)
                .opcode(Opcodes.FABRICS)
                .flags(NvmeCommand.FLAGS_SGL)
                .cid(2)
                .fctype(Opcodes.FCTYPE_PROPERTY_SET)
                .cdw(11, offset)
                .cdw(12, value);
        writeCapsule(s, sqe, new byte[0], 0);
        ByteBuf r = readPdu(in);
        if (r == null || Pdu.type(r, 0) != Pdu.CAPSULE_RESP) fail("Property Set was not answered");
    }

    /** A command of fuzzed bytes; the CID is fixed and Asynchronous Event Request (answered only on events) is avoided. */
    private static boolean sendFuzzedCommand(Socket s, FuzzedDataProvider d, int cid) throws IOException {
        byte[] raw = d.consumeBytes(NvmeCommand.SIZE);
        ByteBuf sqe =
                Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE).setBytes(0, raw);
        NvmeCommand c = new NvmeCommand().wrap(sqe, 0);
        int[] likely = {
            Opcodes.IO_READ,
            Opcodes.IO_WRITE,
            Opcodes.IO_FLUSH,
            Opcodes.IO_WRITE_ZEROES,
            Opcodes.IO_DATASET_MANAGEMENT,
            Opcodes.ADMIN_IDENTIFY,
            Opcodes.ADMIN_GET_LOG_PAGE,
            Opcodes.ADMIN_SET_FEATURES,
            Opcodes.ADMIN_GET_FEATURES,
            Opcodes.ADMIN_KEEP_ALIVE,
            Opcodes.FABRICS,
            c.opcode()
        };
        c.opcode(likely[d.consumeInt(0, likely.length - 1)]);
        if (c.opcode() == Opcodes.ADMIN_ASYNC_EVENT_REQUEST) c.opcode(Opcodes.ADMIN_KEEP_ALIVE);
        c.cid(cid);
        if (d.consumeBoolean()) c.nsid(d.consumeInt(0, 3));
        int dataLen = d.consumeBoolean() ? d.consumeInt(0, 20_000) : 0;
        byte[] data = d.consumeBytes(dataLen);
        if (d.consumeBoolean()) {
            // A well-formed descriptor, so the fuzzer reaches the command logic rather than only the SGL checks.
            if (data.length > 0) Sgl.write(sqe, 0, 0, data.length, Sgl.ID_IN_CAPSULE);
            else Sgl.write(sqe, 0, 0, d.consumeInt(0, 1 << 21), Sgl.ID_TCP_TRANSPORT);
        }
        if (data.length > 0 && d.consumeBoolean()) c.flags(NvmeCommand.FLAGS_SGL);
        writeCapsule(s, sqe, data, data.length);
        return true;
    }

    private static void writeCapsule(Socket s, ByteBuf sqe, byte[] data, int len) throws IOException {
        ByteBuf pdu = RawTcpHost.capsule(sqe, data, len, false);
        try {
            s.getOutputStream().write(pdu.array(), 0, pdu.writerIndex());
        } catch (SocketException closed) {
            // the target already ended this connection (after a TermReq): fine
        }
    }

    /** True when the target answered and the connection goes on; false when it terminated it. Fails on silence. */
    private static boolean answered(DataInputStream in) throws IOException {
        try {
            ByteBuf r = readPdu(in);
            if (r == null) return false;
            int type = Pdu.type(r, 0);
            if (type == Pdu.C2H_TERM_REQ) return false;
            while (type == Pdu.C2H_DATA
                    && (Pdu.flags(r, 0) & Pdu.FLAG_SUCCESS) == 0
                    && (Pdu.flags(r, 0) & Pdu.FLAG_LAST_PDU) == 0) {
                r = readPdu(in);
                if (r == null) return false;
                type = Pdu.type(r, 0);
            }
            if (type == Pdu.C2H_DATA && (Pdu.flags(r, 0) & Pdu.FLAG_SUCCESS) == 0) {
                r = readPdu(in); // the CapsuleResp after the data
                if (r == null) return false;
            }
            if (Pdu.type(r, 0) == Pdu.CAPSULE_RESP
                    && ((r.getUnsignedShortLE(Pdu.COMMON_HEADER + 14) >>> 1) & 0x7FF) == Status.INTERNAL_ERROR) {
                fail(
                        "the target answered with Internal Error: an unhandled case in its command handling (see its log)");
            }
            return Pdu.type(r, 0) != Pdu.R2T; // after an R2T the target waits for data we do not send: start over
        } catch (SocketTimeoutException e) {
            fail("the target neither answered a command nor closed the connection within 5 s");
            return false;
        }
    }

    private static ByteBuf readPdu(DataInputStream in) throws IOException {
        return RawTcpHost.readPdu(in);
    }
}
