package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a queue holds comes back when its host dies: the in-flight budget of a Write whose data never
 * came, and the controller of a connection that sent Connect twice.
 */
class QueueResourcesTest {
    static final String NQN = "nqn.2024-01.io.jbof:resources";

    @TempDir
    Path dir;

    @Test
    void aHostThatVanishesAfterItsR2TGivesBackItsBudget() throws Exception {
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("a.img"));
        cfg.maxInflightBytes = "1M";
        try (TargetServer t = TestTargets.start(cfg)) {
            int port = TestTargets.port(t);
            for (int round = 0; round < 3; round++) {
                try (RawTcpHost admin = RawTcpHost.admin(port, NQN, 0);
                        RawTcpHost io = RawTcpHost.io(port, NQN, admin.cntlid(), 1, false)) {
                    ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_WRITE, 7);
                    RawTcpHost.command(sqe).nsid(1).slba(0).nlb(256); // 1 MiB of 4 KiB blocks: the whole budget
                    Sgl.write(sqe, 0, 0, 1 << 20, Sgl.ID_TCP_TRANSPORT);
                    io.sendCapsule(sqe, null, 0);
                    ByteBuf r2t = io.readPdu();
                    assertNotNull(r2t);
                    assertEquals(Pdu.R2T, Pdu.type(r2t, 0), "the target asks for the data");
                    assertEquals(
                            1 << 20, t.inflight().used(), "the Write holds the whole budget while its data is awaited");
                } // both sockets close without the data
            }
            // Another host's I/O must still run: it would wait for ever if the budget had leaked.
            try (NvmeController c = NvmeController.connect(ConnectOptions.builder()
                    .port(port)
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .build())) {
                Namespace ns = c.namespace(1);
                ns.write(c.ioQueues().get(0), 0, 256, Unpooled.wrappedBuffer(new byte[1 << 20]), false)
                        .get(30, TimeUnit.SECONDS);
                ns.read(c.ioQueues().get(0), 0, 256, Unpooled.buffer(1 << 20)).get(30, TimeUnit.SECONDS);
            }
            assertEquals(0, t.inflight().used(), "every byte came back to the budget");
        }
    }

    @Test
    void aHostThatStallsAfterItsR2TLosesItsConnectionAndTheBudgetComesBack() throws Exception {
        // The surefire configuration sets jbof.tcp.dataTimeoutMs to 5 s (default 30 s).
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("a.img"));
        cfg.maxInflightBytes = "1M";
        try (TargetServer t = TestTargets.start(cfg)) {
            int port = TestTargets.port(t);
            try (RawTcpHost admin = RawTcpHost.admin(port, NQN, 0); // KATO 0: keep-alive never ends it
                    RawTcpHost stalled = RawTcpHost.io(port, NQN, admin.cntlid(), 1, false);
                    NvmeController other = NvmeController.connect(ConnectOptions.builder()
                            .port(port)
                            .subsystemNqn(NQN)
                            .ioQueues(1)
                            .build())) {
                ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_WRITE, 7);
                RawTcpHost.command(sqe).nsid(1).slba(0).nlb(256);
                Sgl.write(sqe, 0, 0, 1 << 20, Sgl.ID_TCP_TRANSPORT);
                stalled.sendCapsule(sqe, null, 0);
                assertEquals(Pdu.R2T, Pdu.type(stalled.readPdu(), 0));
                // The whole budget is held; the other host's Write waits until the stalled connection is ended.
                other.namespace(1)
                        .write(other.ioQueues().get(0), 512, 256, Unpooled.wrappedBuffer(new byte[1 << 20]), false)
                        .get(60, TimeUnit.SECONDS);
                assertEquals(null, stalled.readPdu(), "the stalled connection was closed");
            }
            assertEquals(0, t.inflight().used(), "every byte came back to the budget");
        }
    }

    @Test
    void aSecondConnectOnTheSameQueueIsRefusedAndLeavesNoController() throws Exception {
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("a.img"));
        cfg.maxControllers = 8;
        try (TargetServer t = TestTargets.start(cfg)) {
            int port = TestTargets.port(t);
            for (int round = 0; round < 100; round++) {
                try (RawTcpHost h = RawTcpHost.open(port, false)) {
                    // Both Connects ask for their data by R2T, so the second arrives before the first is done.
                    h.connectCapsule(1, 0, 0xFFFF, NQN, 0, false);
                    h.connectCapsule(2, 0, 0xFFFF, NQN, 0, false);
                    int answered = 0, refused = 0;
                    while (answered < 2) {
                        ByteBuf p = h.readPdu();
                        assertNotNull(p, "the target answers both Connects");
                        if (Pdu.type(p, 0) == Pdu.R2T) {
                            int cid = p.getUnsignedShortLE(Pdu.COMMON_HEADER);
                            int ttag = p.getUnsignedShortLE(Pdu.COMMON_HEADER + 2);
                            byte[] data = new byte[1024];
                            io.jbof.nvme.Connect.data(
                                            java.util.UUID.nameUUIDFromBytes("raw-host".getBytes()),
                                            0xFFFF,
                                            NQN,
                                            RawTcpHost.hostNqn())
                                    .getBytes(0, data);
                            h.sendH2CData(cid, ttag, 0, data, false);
                        } else {
                            assertEquals(Pdu.CAPSULE_RESP, Pdu.type(p, 0));
                            answered++;
                            if (RawTcpHost.status(p) == Status.dnr(Status.COMMAND_SEQUENCE_ERROR)) refused++;
                        }
                    }
                    assertEquals(1, refused, "exactly one Connect per queue");
                }
            }
            // The sockets are closed; their controllers go with them (the close is handled on the target's loops).
            try (NvmeController c = NvmeController.connect(ConnectOptions.builder()
                    .port(port)
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .build())) {
                c.namespace(1).flushBlocking();
            }
            assertEquals(0, awaitLiveControllers(t), "no controller is left over");
        }
    }

    /** Controllers die on the target's event loops after the socket closes: wait for that, bounded. */
    static int awaitLiveControllers(TargetServer t) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int live;
        while ((live = t.controllers().live()) != 0 && System.nanoTime() < end)
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        return live;
    }
}
