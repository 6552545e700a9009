package io.jbof.target.controller;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.jbof.nvme.Connect;
import io.jbof.nvme.IdentifyController;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.transport.loop.LoopHost;
import io.jbof.target.transport.loop.LoopQueue;
import io.jbof.target.transport.loop.LoopRequest;
import io.jbof.transport.TransportType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The target's command handling driven over in-process loop queues: no socket, no initiator. */
class LoopQueueCommandsTest {
    static final String NQN = "nqn.2024-01.io.jbof:loop-test";
    static final UUID HOST = UUID.nameUUIDFromBytes("loop-test".getBytes());

    @TempDir
    Path dir;

    TargetServer target;

    @BeforeEach
    void start() throws Exception {
        target = TargetServer.start(TargetConfig.loopback(NQN, "1M", dir.resolve("ns1.img")));
    }

    @AfterEach
    void stop() throws Exception {
        target.close();
    }

    @Test
    void aWriteIsReadBackByteForByte() throws Exception {
        LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
        byte[] data = new byte[4096];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 31 + 7);
        LoopRequest w = host.ioRequest(null);
        w.reset(Opcodes.IO_WRITE, 4096).nsid(1).cdw(10, 5).cdw(12, 0);
        w.payload(Unpooled.wrappedBuffer(data));
        host.io.onCommand(w);
        assertEquals(Status.SUCCESS, w.await(10, TimeUnit.SECONDS));
        w.close();

        ByteBuf back = Unpooled.buffer(4096);
        LoopRequest r = host.ioRequest(back);
        r.reset(Opcodes.IO_READ, 4096).nsid(1).cdw(10, 5).cdw(12, 0);
        host.io.onCommand(r);
        assertEquals(Status.SUCCESS, r.await(10, TimeUnit.SECONDS));
        assertArrayEquals(data, ByteBufUtil.getBytes(back));
        r.close();
        back.release();
    }

    @Test
    void aReadEndingPastTheLastBlockIsRefusedWithLbaOutOfRange() throws Exception {
        LoopHost host = LoopHost.connect(target, NQN, HOST, TransportType.TCP);
        ByteBuf back = Unpooled.buffer(8192);
        LoopRequest r = host.ioRequest(back);
        long blocks = (1 << 20) / 512;
        r.reset(Opcodes.IO_READ, 1024)
                .nsid(1)
                .cdw(10, (int) (blocks - 1))
                .cdw(12, 1); // two blocks, the last one past the end
        host.io.onCommand(r);
        assertEquals(Status.dnr(Status.LBA_OUT_OF_RANGE), r.await(10, TimeUnit.SECONDS));
        r.close();
        back.release();
    }

    @Test
    void identifyControllerAdvertisesKeyedSglsOnlyToRdmaQueues() throws Exception {
        assertEquals(0, sgls(TransportType.TCP) & IdentifyController.SGLS_KEYED);
        assertEquals(IdentifyController.SGLS_KEYED, sgls(TransportType.RDMA) & IdentifyController.SGLS_KEYED);
    }

    @Test
    void mdtsIsTheSmallerOfTheTargetsLimitAndWhatTheTransportCarries() throws Exception {
        assertEquals(8, mdts(Long.MAX_VALUE), "the target's 1 MiB: 2^8 pages");
        assertEquals(6, mdts(256 * 1024), "a transport that carries 256 KiB");
        assertEquals(6, mdts(300 * 1024), "rounded down to a power of two of pages");
    }

    @Test
    void aReadAboveWhatTheTransportCarriesIsRefusedWithInvalidField() throws Exception {
        LoopHost host = LoopHost.connect(target, new InflightBudget(0), NQN, HOST, TransportType.RDMA, 256 * 1024);
        ByteBuf back = Unpooled.buffer(512 * 1024);
        LoopRequest r = host.ioRequest(back);
        r.reset(Opcodes.IO_READ, 512 * 1024).nsid(1).cdw(10, 0).cdw(12, 127);
        host.io.onCommand(r);
        assertEquals(Status.dnr(Status.INVALID_FIELD), r.await(10, TimeUnit.SECONDS));
        r.reset(Opcodes.IO_READ, 256 * 1024).nsid(1).cdw(10, 0).cdw(12, 63);
        host.io.onCommand(r);
        assertEquals(Status.SUCCESS, r.await(10, TimeUnit.SECONDS), "what MDTS allows goes through");
        r.close();
        back.release();
    }

    private int mdts(long transportMax) throws Exception {
        LoopHost host = LoopHost.connect(target, new InflightBudget(0), NQN, HOST, TransportType.RDMA, transportMax);
        ByteBuf id = Unpooled.buffer(4096);
        LoopRequest r = host.adminRequest(id);
        r.reset(Opcodes.ADMIN_IDENTIFY, 4096).cdw(10, 1);
        host.admin.onCommand(r);
        assertEquals(Status.SUCCESS, r.await(10, TimeUnit.SECONDS));
        r.close();
        int mdts = id.getUnsignedByte(IdentifyController.MDTS);
        id.release();
        return mdts;
    }

    private int sgls(TransportType as) throws Exception {
        LoopHost host = LoopHost.connect(target, NQN, HOST, as);
        ByteBuf id = Unpooled.buffer(4096);
        LoopRequest r = host.adminRequest(id);
        r.reset(Opcodes.ADMIN_IDENTIFY, 4096).cdw(10, 1);
        host.admin.onCommand(r);
        assertEquals(Status.SUCCESS, r.await(10, TimeUnit.SECONDS));
        assertEquals(4096, id.readableBytes());
        r.close();
        int sgls = id.getIntLE(IdentifyController.SGLS);
        id.release();
        return sgls;
    }

    @Test
    void aSecondConnectOnTheSameQueueIsACommandSequenceError() throws Exception {
        LoopQueue q = new LoopQueue(TransportType.TCP, 8192);
        QueueSession admin = new QueueSession(q, new CommandSet(target));
        LoopRequest r = new LoopRequest(q, null);
        for (int attempt = 0; attempt < 2; attempt++) {
            ByteBuf data = Connect.data(HOST, 0xFFFF, NQN, LoopHost.HOST_NQN_PREFIX + HOST);
            r.reset(Opcodes.FABRICS, Connect.DATA_SIZE)
                    .fctype(Opcodes.FCTYPE_CONNECT)
                    .cdw(10, 0)
                    .cdw(11, 31);
            r.payload(data);
            admin.onCommand(r);
            r.await(10, TimeUnit.SECONDS);
            data.release();
            if (attempt == 0) assertEquals(Status.SUCCESS, r.status());
        }
        assertEquals(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), r.status());
        assertEquals(0, q.qid());
        assertNull(q.closedBecause());
        r.close();
    }
}
