package io.jbof.bench;

/**
 * Visits each of {@code n} units exactly once: in order, or in a pseudo-random order with no memory
 * per unit (a full-period linear congruential walk over the next power of two, skipping values >= n).
 */
abstract class UnitOrder {
    /** The next unit, or -1 once all were visited. */
    abstract long next();

    static UnitOrder sequential(long n) {
        return new UnitOrder() {
            long i;

            @Override
            long next() {
                return i < n ? i++ : -1;
            }
        };
    }

    static UnitOrder shuffled(long n, long seed) {
        long m = Long.highestOneBit(Math.max(1, n - 1)) << 1;
        long mask = m - 1;
        // Full period modulo 2^k: c odd, a = 1 (mod 4).
        long a = ((seed >>> 3) & ~3L) | 1L | 4L;
        long c = (seed | 1L) & mask | 1L;
        long start = seed & mask;
        return new UnitOrder() {
            long x = start;
            long visited;

            @Override
            long next() {
                while (visited < m) {
                    long v = x;
                    x = (a * x + c) & mask;
                    visited++;
                    if (v < n) return v;
                }
                return -1;
            }
        };
    }
}
