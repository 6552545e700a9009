package io.jbof.transport;

import java.util.concurrent.CompletableFuture;

/** Opens host connections of one transport type. */
public interface HostTransport extends AutoCloseable {
    String name();

    CompletableFuture<HostConnection> connect(HostConnectionOptions options, HostConnection.Listener listener);

    @Override
    void close();
}
