package io.jbof.target.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.transport.loop.LoopHost;
import io.jbof.target.transport.loop.LoopRequest;
import io.jbof.transport.TransportType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Read or Write holds its bytes of the in-flight budget from admission to completion, and has given them back by the time the host sees it end. */
class InflightBudgetReturnTest {
    static final String NQN = "nqn.2024-01.io.jbof:budget-test";
    static final UUID HOST = UUID.nameUUIDFromBytes("budget-test".getBytes());

    @TempDir
    Path dir;

    TargetServer target;
    final InflightBudget budget = new InflightBudget(8192);
    LoopHost host;

    @BeforeEach
    void start() throws Exception {
        target = TargetServer.start(TargetConfig.loopback(NQN, "1M", dir.resolve("ns1.img")));
        host = LoopHost.connect(target, budget, NQN, HOST, TransportType.TCP);
    }

    @AfterEach
    void stop() throws Exception {
        target.close();
    }

    @Test
    void aReadGivesItsBytesBackBeforeItsCompletion() throws Exception {
        assertEquals(Status.SUCCESS, run(Opcodes.IO_READ, 0, 4096));
        assertEquals(0, budget.used());
        assertEquals(4096, budget.peak(), "the read went through the budget");
    }

    @Test
    void aWriteGivesItsBytesBackBeforeItsCompletion() throws Exception {
        assertEquals(Status.SUCCESS, run(Opcodes.IO_WRITE, 8, 4096));
        assertEquals(0, budget.used());
        assertEquals(4096, budget.peak(), "the write went through the budget");
    }

    @Test
    void aReadLargerThanTheBudgetRunsAloneAndGivesItAllBack() throws Exception {
        assertEquals(Status.SUCCESS, run(Opcodes.IO_READ, 0, 16384));
        assertEquals(0, budget.used());
        assertEquals(16384, budget.peak());
    }

    @Test
    void aReadRefusedBeforeAdmissionNeverTakesAny() throws Exception {
        long blocks = (1 << 20) / 4096;
        assertEquals(Status.dnr(Status.LBA_OUT_OF_RANGE), run(Opcodes.IO_READ, blocks - 1, 8192));
        assertEquals(0, budget.peak());
    }

    private int run(int opcode, long slba, int bytes) throws Exception {
        ByteBuf back = Unpooled.buffer(bytes);
        LoopRequest r = host.ioRequest(opcode == Opcodes.IO_READ ? back : null);
        r.reset(opcode, bytes)
                .nsid(1)
                .cdw(10, (int) slba)
                .cdw(11, (int) (slba >>> 32))
                .cdw(12, bytes / 4096 - 1);
        if (opcode == Opcodes.IO_WRITE) r.payload(Unpooled.buffer(bytes).writeZero(bytes));
        host.io.onCommand(r);
        int status = r.await(10, TimeUnit.SECONDS);
        r.close();
        back.release();
        return status;
    }
}
