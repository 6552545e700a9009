package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.jbof.target.TargetServer;
import io.jbof.target.transport.tcp.TcpBackPressure;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that sends many Reads and never reads its socket makes its own connection wait: the target
 * stops reading it once the replies it owes pass the high water mark, instead of buffering them all.
 */
class BackPressureTest {
    static final String NQN = "nqn.2024-01.io.jbof:backpressure";
    static final int READS = 15_000;
    static final int BLOCKS = 3; // 12 KiB: below the sendfile size, so each reply is a copied buffer

    @TempDir
    Path dir;

    @Test
    void aHostThatNeverReadsIsPausedAndTheTargetsMemoryStaysBounded() throws Exception {
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                RawTcpHost admin = RawTcpHost.admin(TestTargets.port(t), NQN, 0);
                RawTcpHost io = RawTcpHost.io(TestTargets.port(t), NQN, admin.cntlid(), 1, false)) {
            TcpBackPressure bp = t.tcpBackPressure();
            long before = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            // 15k capsules are ~1 MiB: the kernel's socket buffers take them all, so these writes finish
            // although the target stops reading. Their replies would be 180 MiB.
            OutputStream out = new BufferedOutputStream(io.socket.getOutputStream(), 1 << 16);
            for (int i = 0; i < READS; i++) {
                ByteBuf sqe = RawTcpHost.sqe(Opcodes.IO_READ, i % 128);
                RawTcpHost.command(sqe).nsid(1).slba((long) (i % 1000) * BLOCKS).nlb(BLOCKS);
                Sgl.write(sqe, 0, 0, BLOCKS * 4096, Sgl.ID_TCP_TRANSPORT);
                ByteBuf pdu = Unpooled.buffer(Pdu.CAPSULE_CMD_HLEN);
                Pdu.writeCommonHeader(pdu, Pdu.CAPSULE_CMD, 0, Pdu.CAPSULE_CMD_HLEN, 0, Pdu.CAPSULE_CMD_HLEN);
                pdu.writeBytes(sqe, 0, 64);
                out.write(pdu.array(), 0, Pdu.CAPSULE_CMD_HLEN);
            }
            out.flush();
            // The target pauses this connection (the event it must reach); bounded so a target that never
            // pauses fails on the memory it took instead of hanging the test.
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (bp.pausedConnections() == 0
                    && System.nanoTime() < end
                    && PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory() - before < (160L << 20)) {
                LockSupport.parkNanos(1_000_000);
            }
            long held = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory() - before;
            assertEquals(1, bp.pausedConnections(), "the connection stopped reading");
            assertTrue(
                    held < (32L << 20),
                    "the target holds " + (held >> 20) + " MiB of replies for a host that does not read");
            assertTrue(
                    bp.peakUnsentBytes() <= TcpBackPressure.HIGH_WATER + (1 << 20),
                    "unsent replies of one connection stay within the high water mark and one reply: "
                            + bp.peakUnsentBytes());

            // Once the host reads, every command is answered, in full.
            int answered = 0;
            while (answered < READS) {
                ByteBuf p = io.readPdu();
                assertTrue(p != null, "connection closed after " + answered + " answers");
                int type = Pdu.type(p, 0);
                if (type == Pdu.CAPSULE_RESP) {
                    assertEquals(0, RawTcpHost.status(p), "status of answer " + answered);
                    answered++;
                } else {
                    assertEquals(Pdu.C2H_DATA, type);
                    assertEquals(BLOCKS * 4096, p.getIntLE(Pdu.COMMON_HEADER + 8), "DATAL");
                    if ((Pdu.flags(p, 0) & Pdu.FLAG_SUCCESS) != 0) answered++;
                }
            }
            assertEquals(0, bp.pausedConnections(), "reading resumed once the replies drained");
            assertTrue(bp.pauses() >= 1);
        }
    }
}
