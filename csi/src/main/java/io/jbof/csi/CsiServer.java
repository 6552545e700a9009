package io.jbof.csi;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The driver's gRPC server on the Unix socket the CO (kubelet, the sidecars, csi-sanity) dials. The
 * socket is the driver's only door: mode 0600, so only its owner (root, as kubelet) can call it.
 */
final class CsiServer implements AutoCloseable {
    private final Path socket;
    private final EventLoopGroup boss = new EpollEventLoopGroup(1);
    private final EventLoopGroup workers = new EpollEventLoopGroup(2);
    private final Server server;

    /** {@code endpoint}: unix:///PATH (as the CSI sidecars pass it) or a plain PATH. */
    CsiServer(String endpoint, List<ServerServiceDefinition> services) throws IOException {
        this.socket = socketOf(endpoint);
        removeStale(socket);
        Path dir = socket.toAbsolutePath().getParent();
        if (dir != null) Files.createDirectories(dir);
        NettyServerBuilder b = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollServerDomainSocketChannel.class)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers);
        services.forEach(b::addService);
        try {
            this.server = b.build().start();
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException | RuntimeException e) {
            boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
    }

    static Path socketOf(String endpoint) {
        if (endpoint.startsWith("unix://")) return Path.of(endpoint.substring("unix://".length()));
        if (endpoint.contains("://")) {
            throw new IllegalArgumentException(
                    "--endpoint " + endpoint + ": CSI drivers listen on a Unix socket, unix:///PATH");
        }
        return Path.of(endpoint);
    }

    /** A socket file left by a driver that died is removed; one a live driver answers on is refused. */
    private static void removeStale(Path socket) throws IOException {
        if (!Files.exists(socket)) return;
        boolean live;
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            live = c.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            live = false;
        }
        if (live) throw new IOException(socket + " is served by another process: stop it or give another --endpoint");
        Files.delete(socket);
    }

    Path socket() {
        return socket;
    }

    void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) server.shutdownNow();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            // its folder went away first (a pod's emptyDir): nothing is left to remove
        }
    }
}
