package io.jbof.target.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PageBufferPoolTest {
    @Test
    void buffersAreDistinctUntilExhaustedAndComeBackOnRelease() {
        PageBufferPool p = new PageBufferPool(8, 4096);
        assertEquals(8 * 4096, p.region().capacity(), "one region for one registration");
        Set<Integer> offsets = new HashSet<>();
        int[] got = new int[8];
        for (int i = 0; i < 8; i++) {
            got[i] = p.acquire();
            assertTrue(offsets.add(p.offset(got[i])), "no buffer handed out twice");
        }
        assertEquals(-1, p.acquire(), "exhausted: the command waits");
        assertEquals(0, p.available());
        p.release(got[3]);
        assertEquals(got[3], p.acquire());
        for (int b : got) p.release(b);
        assertEquals(8, p.available());
    }

    @Test
    void aDoubleReleaseIsCaught() {
        PageBufferPool p = new PageBufferPool(2, 512);
        int b = p.acquire();
        p.release(b);
        assertThrows(IllegalStateException.class, () -> p.release(b));
        assertThrows(IllegalStateException.class, () -> p.release(7));
    }

    @Test
    void viewsCoverTheirOwnBytesOnly() {
        PageBufferPool p = new PageBufferPool(2, 16);
        int a = p.acquire();
        int b = p.acquire();
        p.view(a).put(0, (byte) 1);
        p.view(b).put(15, (byte) 2);
        assertEquals(1, p.region().get(p.offset(a)));
        assertEquals(2, p.region().get(p.offset(b) + 15));
        assertEquals(16, p.view(a).remaining());
    }
}
