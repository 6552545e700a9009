package io.jbof.initiator.cli;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The crash-consistency model: what it accepts after a crash, what it catches, and that it outlives the run. */
class DurabilityModelTest {
    static final int BS = 512;
    static final int BLOCKS = 8;

    /** A region as the medium would hold it: block b at b * BS. */
    private final ByteBuf disk = Unpooled.buffer(BLOCKS * BS).writerIndex(BLOCKS * BS);

    private final SplittableRandom rnd = new SplittableRandom(1);

    /** Writes one block of a new version to the model and (when {@code lands}) to the disk; returns the version. */
    private long write(DurabilityModel m, boolean fua, boolean lands) {
        long[] claim = m.startWrite(rnd, BLOCKS); // the whole region: block 0 .. 7
        for (int b = 0; b < BLOCKS; b++) {
            if (lands) m.fill(disk, b * BS, b, claim[1]);
        }
        m.endWrite(0, BLOCKS, claim[1], fua, true);
        return claim[1];
    }

    @Test
    void aFuaWriteThatIsLostIsCaught() {
        DurabilityModel m = new DurabilityModel(1, 0, BLOCKS, BS);
        write(m, false, true);
        m.flushDone(m.flushSnapshot());
        write(m, true, false); // acknowledged with FUA, yet not on the medium
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> m.verifyAndRebase(disk, "test"));
        assertTrue(e.getMessage().contains("durable was 2"), e.getMessage());
    }

    @Test
    void anUnflushedWriteMayBeOldOrNewButAFlushedOneMustStay() {
        DurabilityModel m = new DurabilityModel(1, 0, BLOCKS, BS);
        write(m, false, true);
        write(m, false, false); // not flushed: the old version is allowed
        assertDoesNotThrow(() -> m.verifyAndRebase(disk, "test"));

        write(m, false, false);
        m.flushDone(m.flushSnapshot()); // flushed, yet the old version is still there
        assertThrows(IllegalStateException.class, () -> m.verifyAndRebase(disk, "test"));
    }

    @Test
    void tornAndMisplacedBlocksAreCaught() {
        DurabilityModel m = new DurabilityModel(1, 0, BLOCKS, BS);
        write(m, true, true);
        disk.setByte(3 * BS + 300, disk.getByte(3 * BS + 300) ^ 1);
        assertTrue(assertThrows(IllegalStateException.class, () -> m.verifyAndRebase(disk, "test"))
                .getMessage()
                .contains("torn"));

        m.fill(disk, 3 * BS, 3, 1);
        disk.setBytes(5 * BS, disk, 4 * BS, BS); // block 4's data at block 5
        assertTrue(assertThrows(IllegalStateException.class, () -> m.verifyAndRebase(disk, "test"))
                .getMessage()
                .contains("holds block 4"));
    }

    @Test
    void theModelSavedByOneRunChecksTheNext(@TempDir Path dir) throws Exception {
        DurabilityModel m = new DurabilityModel(1, 0, BLOCKS, BS);
        write(m, false, true);
        write(m, true, false); // durable in the model, lost on the medium
        m.save(dir.resolve("model"));
        DurabilityModel next = DurabilityModel.load(dir.resolve("model"));
        assertEquals(BLOCKS, next.blocks());
        assertThrows(IllegalStateException.class, () -> next.verifyAndRebase(disk, "next run"));
    }
}
