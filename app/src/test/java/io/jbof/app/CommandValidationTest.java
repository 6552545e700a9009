package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commands Linux's nvmet refuses with Invalid Field in Command are refused here too, before any data
 * moves; and a data digest error fails its command, not the connection.
 */
class CommandValidationTest {
    static final String NQN = "nqn.2024-01.io.jbof:validation";
    static final int INVALID_FIELD = Status.dnr(Status.INVALID_FIELD);

    @TempDir
    Path dir;

    TargetServer target;
    RawTcpHost admin;

    @BeforeEach
    void start() throws Exception {
        target = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
        admin = RawTcpHost.admin(TestTargets.port(target), NQN, 0);
    }

    @AfterEach
    void stop() throws Exception {
        admin.close();
        target.close();
    }

    private RawTcpHost io(boolean dataDigest) throws Exception {
        return RawTcpHost.io(TestTargets.port(target), NQN, admin.cntlid(), 1, dataDigest);
    }

    private static int send(RawTcpHost q, ByteBuf sqe) throws Exception {
        q.sendCapsule(sqe, null, 0);
        ByteBuf r = q.readPdu();
        assertNotNull(r, "answered, not closed");
        assertEquals(Pdu.CAPSULE_RESP, Pdu.type(r, 0), "a response, no data asked for or sent");
        return RawTcpHost.status(r);
    }

    @Test
    void fusedCommandsAndPrpsAreRefused() throws Exception {
        try (RawTcpHost q = io(false)) {
            ByteBuf fused = RawTcpHost.sqe(Opcodes.IO_FLUSH, 1);
            RawTcpHost.command(fused).nsid(1).flags(NvmeCommand.FLAGS_SGL | 0x1);
            assertEquals(INVALID_FIELD, send(q, fused), "FUSE = first command of a fused operation");
            ByteBuf prp = RawTcpHost.sqe(Opcodes.IO_FLUSH, 2);
            RawTcpHost.command(prp).nsid(1).flags(0);
            assertEquals(INVALID_FIELD, send(q, prp), "PSDT = 00b (PRPs)");
            ByteBuf ok = RawTcpHost.sqe(Opcodes.IO_FLUSH, 3);
            RawTcpHost.command(ok).nsid(1);
            assertEquals(0, send(q, ok), "the queue goes on");
        }
    }

    @Test
    void aReadWithInCapsuleDataIsRefused() throws Exception {
        try (RawTcpHost q = io(false)) {
            ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_READ, 1);
            RawTcpHost.command(sqe).nsid(1).slba(0).nlb(1);
            Sgl.write(sqe, 0, 0, 4096, Sgl.ID_IN_CAPSULE);
            q.sendCapsule(sqe, new byte[4096], 4096);
            assertEquals(INVALID_FIELD, RawTcpHost.status(q.readPdu()));
        }
    }

    @Test
    void dataLengthsBeyondMdtsAreRefusedWithoutAnR2T() throws Exception {
        try (RawTcpHost q = io(false)) {
            ByteBuf dsm = RawTcpHost.sqe(Opcodes.IO_DATASET_MANAGEMENT, 1);
            RawTcpHost.command(dsm).nsid(1).cdw(10, 0).cdw(11, 1 << 2);
            Sgl.write(dsm, 0, 0, 64 << 20, Sgl.ID_TCP_TRANSPORT);
            assertEquals(INVALID_FIELD, send(q, dsm), "a 16-byte DSM announcing 64 MiB");
        }
        for (int length : new int[] {0x80000000, 0xFFFFFFFF}) {
            ByteBuf id = RawTcpHost.sqe(Opcodes.ADMIN_IDENTIFY, 9);
            RawTcpHost.command(id).cdw(10, 1);
            Sgl.write(id, 0, 0, length, Sgl.ID_TCP_TRANSPORT);
            assertEquals(INVALID_FIELD, send(admin, id), "Identify with an SGL of 0x" + Integer.toHexString(length));
        }
    }

    @Test
    void aDataDigestErrorFailsTheCommandWithTransientTransportErrorAndTheQueueGoesOn() throws Exception {
        try (RawTcpHost q = io(true)) {
            byte[] data = new byte[4096];
            // In-capsule data with a wrong digest.
            ByteBuf w = RawTcpHost.sqe(Opcodes.IO_WRITE, 1);
            RawTcpHost.command(w).nsid(1).slba(0).nlb(1);
            Sgl.write(w, 0, 0, 4096, Sgl.ID_IN_CAPSULE);
            ByteBuf pdu = io.netty.buffer.Unpooled.buffer(Pdu.CAPSULE_CMD_HLEN + 4096 + 4);
            Pdu.writeCommonHeader(
                    pdu,
                    Pdu.CAPSULE_CMD,
                    Pdu.FLAG_DDGST,
                    Pdu.CAPSULE_CMD_HLEN,
                    Pdu.CAPSULE_CMD_HLEN,
                    Pdu.CAPSULE_CMD_HLEN + 4096 + 4);
            pdu.writeBytes(w, 0, 64).writeBytes(data).writeIntLE(0xBAD);
            q.write(pdu);
            assertEquals(
                    Status.TRANSIENT_TRANSPORT_ERROR,
                    RawTcpHost.status(q.readPdu()),
                    "in-capsule data with a bad digest");

            // H2CData with a wrong digest, after an R2T.
            ByteBuf big = RawTcpHost.sqe(Opcodes.IO_WRITE, 2);
            RawTcpHost.command(big).nsid(1).slba(0).nlb(8);
            Sgl.write(big, 0, 0, 8 * 4096, Sgl.ID_TCP_TRANSPORT);
            q.sendCapsule(big, null, 0);
            ByteBuf r2t = q.readPdu();
            assertEquals(Pdu.R2T, Pdu.type(r2t, 0));
            q.sendH2CData(2, r2t.getUnsignedShortLE(Pdu.COMMON_HEADER + 2), 0, new byte[8 * 4096], true);
            assertEquals(Status.TRANSIENT_TRANSPORT_ERROR, RawTcpHost.status(q.readPdu()), "H2CData with a bad digest");

            // The connection is still good: the same Write, sent again with the right digest, succeeds.
            q.sendCapsule(big, null, 0);
            r2t = q.readPdu();
            assertEquals(Pdu.R2T, Pdu.type(r2t, 0));
            q.sendH2CData(2, r2t.getUnsignedShortLE(Pdu.COMMON_HEADER + 2), 0, new byte[8 * 4096], false);
            assertEquals(0, RawTcpHost.status(q.readPdu()), "the retried Write");
        }
    }
}
