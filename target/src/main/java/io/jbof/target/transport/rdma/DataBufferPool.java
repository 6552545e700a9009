package io.jbof.target.transport.rdma;

import com.ibm.disni.verbs.IbvPd;
import io.jbof.transport.rdma.RegisteredMemory;
import java.io.IOException;
import java.util.ArrayDeque;

/**
 * One event loop's page buffers for one device: a {@link PageBufferPool} whose region is registered
 * once, and the requests waiting for buffers in arrival order (a transfer takes all the buffers it
 * needs at once, or waits; buffers come back when the response was sent). Loop thread only.
 */
final class DataBufferPool implements AutoCloseable {
    /** A request that could not get its buffers yet. */
    interface Waiter {
        int buffersNeeded();

        /** Buffers are there now: take them with {@link #take}. */
        void resume();
    }

    final PageBufferPool pool;
    final RegisteredMemory memory;
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();

    /** {@code access}: the registration's flags; the buffers are RDMA WRITE sources and RDMA READ sinks. */
    DataBufferPool(IbvPd pd, int buffers, int bufferSize, int access) throws IOException {
        this(new PageBufferPool(buffers, bufferSize), pd, access);
    }

    private DataBufferPool(PageBufferPool pool, IbvPd pd, int access) throws IOException {
        this(pool, pd == null ? null : new RegisteredMemory(pd, pool.region(), access));
    }

    /** {@code memory} null: no device (the waiting logic alone, for tests). */
    DataBufferPool(PageBufferPool pool, RegisteredMemory memory) {
        this.pool = pool;
        this.memory = memory;
    }

    int bufferSize() {
        return pool.bufferSize();
    }

    /** Bytes one transfer may move at most (all buffers). */
    long capacityBytes() {
        return (long) pool.capacity() * pool.bufferSize();
    }

    /** Takes {@code n} buffers into {@code out}, or none and returns false (the caller then waits). */
    boolean tryAcquire(int n, int[] out) {
        if (!waiting.isEmpty() || pool.available() < n) return false;
        take(n, out);
        return true;
    }

    /** For a waiter being resumed: its buffers are there. */
    void take(int n, int[] out) {
        for (int i = 0; i < n; i++) out[i] = pool.acquire();
    }

    void waitFor(Waiter w) {
        waiting.add(w);
    }

    /** A waiter whose queue pair is gone no longer waits (it would hold up those behind it). */
    void cancel(Waiter w) {
        waiting.remove(w);
    }

    void release(int[] buffers, int n) {
        for (int i = 0; i < n; i++) pool.release(buffers[i]);
        while (!waiting.isEmpty() && pool.available() >= waiting.peek().buffersNeeded()) {
            waiting.poll().resume();
        }
    }

    long address(int buffer) {
        return memory.address + pool.offset(buffer);
    }

    @Override
    public void close() {
        if (memory != null) memory.close();
    }
}
