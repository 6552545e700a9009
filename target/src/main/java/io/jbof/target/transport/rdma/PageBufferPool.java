package io.jbof.target.transport.rdma;

import java.nio.ByteBuffer;

/**
 * Fixed-size data buffers carved from one direct region that is registered with the RDMA device once
 * (one memory region, one key), so no registration happens on the I/O path. Owned by one event loop:
 * no locks; acquire and release are a stack push and pop. The region's address plus
 * {@code index * bufferSize} is what an RDMA WRITE/READ names.
 */
public final class PageBufferPool {
    private final ByteBuffer region;
    private final int bufferSize;
    private final int[] free;
    private int freeCount;
    private final boolean[] inUse;

    public PageBufferPool(int buffers, int bufferSize) {
        if (buffers <= 0 || bufferSize <= 0 || (long) buffers * bufferSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(buffers + " buffers of " + bufferSize + " bytes do not fit one region");
        }
        this.region = ByteBuffer.allocateDirect(buffers * bufferSize);
        this.bufferSize = bufferSize;
        this.free = new int[buffers];
        this.inUse = new boolean[buffers];
        for (int i = 0; i < buffers; i++) free[i] = buffers - 1 - i;
        this.freeCount = buffers;
    }

    /** The whole region, for the one-time memory registration. */
    public ByteBuffer region() {
        return region;
    }

    public int bufferSize() {
        return bufferSize;
    }

    public int capacity() {
        return free.length;
    }

    public int available() {
        return freeCount;
    }

    /** A free buffer's index, or -1 when all are in use (the command then waits for one). */
    public int acquire() {
        if (freeCount == 0) return -1;
        int i = free[--freeCount];
        inUse[i] = true;
        return i;
    }

    public void release(int index) {
        if (index < 0 || index >= inUse.length || !inUse[index]) {
            throw new IllegalStateException("buffer " + index
                    + " released but not in use: a double release would hand one buffer to two commands");
        }
        inUse[index] = false;
        free[freeCount++] = index;
    }

    /** Byte offset of buffer {@code index} in the region. */
    public int offset(int index) {
        return index * bufferSize;
    }

    /** A view of buffer {@code index} (position 0, limit bufferSize). */
    public ByteBuffer view(int index) {
        return region.duplicate()
                .position(offset(index))
                .limit(offset(index) + bufferSize)
                .slice();
    }
}
