package io.jbof.target.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One stripe per event loop: a queue's counters are written only by its loop's thread, so each loop
 * gets a row of its own and the scrape sums the rows (no lock, no atomic, no sharing on the I/O path).
 * A queue asks once, when it is created; never per I/O.
 */
public final class Stripes {
    private Stripes() {}

    /** Rows per counter table; loops beyond share rows (counts then may race, never corrupt other memory). */
    public static final int MAX = 256;

    private static final Map<Object, Integer> BY_LOOP = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT = new AtomicInteger();

    /** The stripe of the event loop (any object naming the thread that runs a queue). */
    public static int of(Object loop) {
        return BY_LOOP.computeIfAbsent(loop, l -> NEXT.getAndIncrement() % MAX);
    }
}
