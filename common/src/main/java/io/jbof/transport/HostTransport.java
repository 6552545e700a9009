package io.jbof.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** Opens host connections of one transport type. */
public interface HostTransport extends AutoCloseable {
    /** Which transport this is: its name, TRTYPE and abilities. */
    TransportType type();

    CompletableFuture<HostConnection> connect(HostConnectionOptions options, HostConnection.Listener listener);

    /**
     * As {@link #connect(HostConnectionOptions, HostConnection.Listener)}, on the given event loop of this
     * transport (a queue that reconnects stays on the thread that owns its state); null: any loop.
     */
    default CompletableFuture<HostConnection> connect(
            HostConnectionOptions options, HostConnection.Listener listener, EventExecutor loop) {
        return connect(options, listener);
    }

    /**
     * A data buffer of {@code size} bytes for I/O on this transport's connections; on RDMA it is
     * registered, so data moves without a copy. Release it when done.
     */
    default ByteBuf dataBuffer(int size) throws IOException {
        return PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
    }

    /** The largest data transfer of one command this transport carries (RDMA: its registered buffer size). */
    default long maxTransferBytes() {
        return Long.MAX_VALUE;
    }

    @Override
    void close();
}
