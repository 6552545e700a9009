package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each bad request gets its exact NVMe status; the queue that carried it and the other connections go on serving. */
class ErrorStatusTest {
    static final String NQN = "nqn.2024-01.io.jbof:errors";
    static final String PRIVATE = "nqn.2024-01.io.jbof:private";
    static final String ALLOWED_HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    @TempDir
    Path dir;

    TargetServer target;
    NvmeController host, bystander;

    @BeforeEach
    void start() throws Exception {
        // A read-only namespace is never created by the target: it must exist already.
        try (java.io.RandomAccessFile f =
                new java.io.RandomAccessFile(dir.resolve("ro.img").toFile(), "rw")) {
            f.setLength(16L << 20);
        }
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("rw.img"), dir.resolve("ro.img"));
        cfg.subsystems.get(0).namespaces.get(1).readOnly = true;
        TargetConfig.SubsystemConfig priv = new TargetConfig.SubsystemConfig();
        priv.nqn = PRIVATE;
        priv.allowAnyHost = false;
        priv.hosts.add(ALLOWED_HOST);
        TargetConfig.NamespaceConfig n = new TargetConfig.NamespaceConfig();
        n.path = dir.resolve("priv.img").toString();
        n.size = "1M";
        priv.namespaces.add(n);
        cfg.subsystems.add(priv);
        target = TestTargets.start(cfg);
        host = NvmeController.connect(options(NQN).build());
        bystander = NvmeController.connect(options(NQN).build());
    }

    @AfterEach
    void stop() {
        if (bystander != null) bystander.close();
        if (host != null) host.close();
        if (target != null) target.close();
    }

    ConnectOptions.Builder options(String nqn) {
        return ConnectOptions.builder()
                .port(TestTargets.port(target))
                .subsystemNqn(nqn)
                .ioQueues(1);
    }

    int statusOf(boolean admin, int opcode, int nsid, int[] cdw, ByteBuf data, int len, boolean write)
            throws Exception {
        try {
            host.passthru(admin, opcode, nsid, cdw, data, len, write).get(30, TimeUnit.SECONDS);
            return Status.SUCCESS;
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof NvmeException, "expected an NVMe status, got " + e.getCause());
            return ((NvmeException) e.getCause()).status();
        }
    }

    @Test
    void readOfAnInactiveNamespaceIsInvalidNamespace() throws Exception {
        assertEquals(
                Status.dnr(Status.INVALID_NAMESPACE),
                statusOf(false, Opcodes.IO_READ, 7, new int[] {0, 0, 0}, Unpooled.buffer(4096), 4096, false));
        assertStillServing();
    }

    @Test
    void readPastTheLastBlockIsLbaOutOfRange() throws Exception {
        long blocks = host.namespace(1).blocks();
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                statusOf(
                        false,
                        Opcodes.IO_READ,
                        1,
                        new int[] {(int) (blocks - 1), 0, 1},
                        Unpooled.buffer(8192),
                        8192,
                        false));
        assertEquals(
                Status.dnr(Status.LBA_OUT_OF_RANGE),
                statusOf(false, Opcodes.IO_WRITE_ZEROES, 1, new int[] {(int) blocks, 0, 0}, null, 0, false));
        assertStillServing();
    }

    @Test
    void writeToAReadOnlyNamespaceIsWriteProtected() throws Exception {
        Namespace ro = host.namespace(2);
        assertTrue(ro.readOnly(), "Identify Namespace reports the write protection");
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                statusOf(
                        false,
                        Opcodes.IO_WRITE,
                        2,
                        new int[] {0, 0, 0},
                        Unpooled.buffer(4096).writeZero(4096),
                        4096,
                        true));
        assertEquals(
                Status.dnr(Status.NAMESPACE_WRITE_PROTECTED),
                statusOf(
                        false,
                        Opcodes.IO_WRITE,
                        2,
                        new int[] {0, 0, 63},
                        Unpooled.buffer(64 * 4096).writeZero(64 * 4096),
                        64 * 4096,
                        true));
        assertStillServing();
    }

    @Test
    void unknownOpcodesAreInvalidOpcode() throws Exception {
        assertEquals(Status.dnr(Status.INVALID_OPCODE), statusOf(false, 0x7E, 1, new int[0], null, 0, false));
        assertEquals(Status.dnr(Status.INVALID_OPCODE), statusOf(true, 0x7E, 0, new int[0], null, 0, false));
        assertStillServing();
    }

    @Test
    void transferBeyondMdtsIsInvalidField() throws Exception {
        long mdts = host.info().maxTransferBytes();
        int blocks = (int) (2 * mdts / 4096);
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                statusOf(
                        false,
                        Opcodes.IO_READ,
                        1,
                        new int[] {0, 0, blocks - 1},
                        Unpooled.buffer(blocks * 4096),
                        blocks * 4096,
                        false));
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                statusOf(
                        false,
                        Opcodes.IO_WRITE,
                        1,
                        new int[] {0, 0, blocks - 1},
                        Unpooled.buffer(blocks * 4096).writeZero(blocks * 4096),
                        blocks * 4096,
                        true));
        assertStillServing();
    }

    @Test
    void unsupportedIdentifyCnsIsInvalidField() throws Exception {
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                statusOf(true, Opcodes.ADMIN_IDENTIFY, 0, new int[] {0x55}, Unpooled.buffer(4096), 4096, false));
        assertStillServing();
    }

    /** Found by fuzzing: these made the target allocate from a 32-bit NUMD, or copy from a negative offset. */
    @Test
    void getLogPageBeyondTheBufferOrWithATopBitOffsetIsInvalidField() throws Exception {
        int lid = Opcodes.LOG_SMART_HEALTH;
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                statusOf(
                        true,
                        Opcodes.ADMIN_GET_LOG_PAGE,
                        0,
                        new int[] {lid | 0xFFFF0000, 0xFFFF},
                        Unpooled.buffer(4096),
                        4096,
                        false),
                "NUMD of 2^32 dwords for a 4 KiB buffer");
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                statusOf(
                        true,
                        Opcodes.ADMIN_GET_LOG_PAGE,
                        0,
                        new int[] {lid | (127 << 16), 0, 0, 0x80000000},
                        Unpooled.buffer(512),
                        512,
                        false),
                "LPOU with its top bit set");
        assertEquals(
                Status.SUCCESS,
                statusOf(
                        true,
                        Opcodes.ADMIN_GET_LOG_PAGE,
                        0,
                        new int[] {lid | (127 << 16)},
                        Unpooled.buffer(512),
                        512,
                        false));
        assertStillServing();
    }

    @Test
    void connectToAnUnknownSubsystemIsConnectInvalidParameters() {
        NvmeException e = assertThrows(
                NvmeException.class,
                () -> NvmeController.connect(
                        options("nqn.2024-01.io.jbof:no-such").build()));
        assertEquals(Status.CONNECT_INVALID_PARAMETERS, e.status() & 0x7FF);
        assertTrue(Status.isDnr(e.status()));
        assertStillServing();
    }

    @Test
    void connectFromAHostNotOnTheListIsConnectInvalidHost() throws Exception {
        NvmeException e = assertThrows(
                NvmeException.class,
                () -> NvmeController.connect(options(PRIVATE)
                        .hostNqn("nqn.2014-08.org.nvmexpress:uuid:99999999-2222-3333-4444-555555555555")
                        .build()));
        assertEquals(Status.CONNECT_INVALID_HOST, e.status() & 0x7FF);
        try (NvmeController ok =
                NvmeController.connect(options(PRIVATE).hostNqn(ALLOWED_HOST).build())) {
            assertEquals(1, ok.namespaces().size());
        }
        assertStillServing();
    }

    /** The queue that carried the bad command and another controller beside it both still move data. */
    private void assertStillServing() {
        for (NvmeController c : new NvmeController[] {host, bystander}) {
            try {
                Namespace ns = c.namespace(1);
                ByteBuf w = Unpooled.buffer(8192);
                for (int i = 0; i < 8192; i++) w.writeByte(i ^ c.controllerId());
                ns.writeBlocking(3, 2, w, false);
                ByteBuf r = Unpooled.buffer(8192);
                ns.readBlocking(3, 2, r);
                assertEquals(w, r, "controller " + c.controllerId() + " still reads what it wrote");
            } catch (Exception e) {
                throw new AssertionError("controller " + c.controllerId() + " stopped serving: " + e, e);
            }
        }
    }
}
