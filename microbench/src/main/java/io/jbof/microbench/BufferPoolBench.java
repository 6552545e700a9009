package io.jbof.microbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** Acquire and release of the pooled direct buffers the transports use for PDUs and data. */
@State(Scope.Thread)
public class BufferPoolBench {
    @Param({"4096", "131072"})
    public int size;

    @Benchmark
    public boolean acquireRelease() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        b.setByte(0, 1);
        return b.release();
    }
}
