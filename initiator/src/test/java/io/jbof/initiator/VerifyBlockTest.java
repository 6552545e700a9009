package io.jbof.initiator;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class VerifyBlockTest {
    private final VerifyBlock v = new VerifyBlock();

    @Test
    void aBlockChecksAtTheOffsetItWasWrittenFor() {
        ByteBuf b = Unpooled.directBuffer(4096, 4096);
        v.fill(b, 4096, 1, 81920, 12345);
        assertNull(v.check(b, 4096, 1, 81920));
        assertTrue(v.check(b, 4096, 1, 4096).contains("offset 81920"), "a block read from the wrong place");
        assertTrue(v.check(b, 4096, 2, 81920).contains("namespace 1"), "a block of another namespace");
        b.setByte(3000, b.getByte(3000) ^ 1);
        assertTrue(v.check(b, 4096, 1, 81920).contains("crc32c"), "one flipped bit");
        b.setZero(0, 4096);
        assertTrue(v.check(b, 4096, 1, 81920).contains("never written"));
        b.release();
    }
}
