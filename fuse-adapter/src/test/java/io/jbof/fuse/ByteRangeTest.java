package io.jbof.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ByteRangeTest {
    private final ByteRange r = new ByteRange();

    @Test
    void wholeBlocksHaveNoEdges() {
        r.set(8192, 8192, 4096);
        assertTrue(r.aligned());
        assertEquals(2, r.midLba);
        assertEquals(2, r.midBlocks);
        assertEquals(0, r.midBufferOffset);
    }

    @Test
    void rangeInsideOneBlockIsAHeadOnly() {
        r.set(4100, 10, 4096);
        assertEquals(1, r.headLba);
        assertEquals(4, r.headOffset);
        assertEquals(10, r.headBytes);
        assertEquals(0, r.midBlocks);
        assertEquals(0, r.tailBytes);
        assertEquals(1, r.firstBlock());
        assertEquals(1, r.lastBlock());
    }

    @Test
    void unalignedRangeSplitsIntoHeadMiddleTail() {
        r.set(4096 + 100, 4096 * 3, 4096); // 3996 bytes of block 1, blocks 2..3, 100 bytes of block 4
        assertEquals(1, r.headLba);
        assertEquals(100, r.headOffset);
        assertEquals(3996, r.headBytes);
        assertEquals(2, r.midLba);
        assertEquals(2, r.midBlocks);
        assertEquals(3996, r.midBufferOffset);
        assertEquals(4, r.tailLba);
        assertEquals(100, r.tailBytes);
        assertEquals(3996 + 8192, r.tailBufferOffset);
        assertEquals(1, r.firstBlock());
        assertEquals(4, r.lastBlock());
    }

    @Test
    void headAndTailInAdjacentBlocksLeaveNoMiddle() {
        r.set(510, 4, 512);
        assertEquals(0, r.headLba);
        assertEquals(2, r.headBytes);
        assertEquals(0, r.midBlocks);
        assertEquals(1, r.tailLba);
        assertEquals(2, r.tailBytes);
        assertEquals(2, r.tailBufferOffset);
    }
}
