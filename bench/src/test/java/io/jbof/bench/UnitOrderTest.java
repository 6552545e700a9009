package io.jbof.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.BitSet;
import org.junit.jupiter.api.Test;

class UnitOrderTest {
    @Test
    void shuffledOrderVisitsEveryUnitExactlyOnce() {
        for (long n : new long[] {1, 2, 3, 7, 8, 9, 1000, 4097}) {
            for (long seed : new long[] {0, 1, 42, -5, System.nanoTime()}) {
                UnitOrder o = UnitOrder.shuffled(n, seed);
                BitSet seen = new BitSet();
                long u;
                int count = 0;
                while ((u = o.next()) >= 0) {
                    assertFalse(seen.get((int) u), "unit " + u + " twice (n " + n + ", seed " + seed + ")");
                    seen.set((int) u);
                    count++;
                }
                assertEquals(n, count, "n " + n + ", seed " + seed);
            }
        }
    }

    @Test
    void sequentialOrderCountsUp() {
        UnitOrder o = UnitOrder.sequential(3);
        assertEquals(0, o.next());
        assertEquals(1, o.next());
        assertEquals(2, o.next());
        assertEquals(-1, o.next());
    }
}
