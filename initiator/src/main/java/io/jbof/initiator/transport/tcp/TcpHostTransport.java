package io.jbof.initiator.transport.tcp;

import io.jbof.transport.HostConnection;
import io.jbof.transport.HostConnectionOptions;
import io.jbof.transport.HostTransport;
import io.jbof.transport.TransportType;
import io.jbof.transport.tcp.EventLoops;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.PlacedReads;
import io.jbof.transport.tcp.tls.TlsPskClientPeer;
import io.jbof.transport.tcp.tls.TlsPskHandler;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Opens NVMe/TCP host connections; each queue's connection lives on one event loop of the group. */
public final class TcpHostTransport implements HostTransport {
    private final EventLoopGroup group;

    public TcpHostTransport(int ioThreads) {
        this.group = EventLoops.group(ioThreads, new DefaultThreadFactory("jbof-host", true));
    }

    @Override
    public TransportType type() {
        return TransportType.TCP;
    }

    @Override
    public CompletableFuture<HostConnection> connect(HostConnectionOptions o, HostConnection.Listener listener) {
        return connect(o, listener, null);
    }

    @Override
    public CompletableFuture<HostConnection> connect(
            HostConnectionOptions o, HostConnection.Listener listener, EventExecutor loop) {
        CompletableFuture<HostConnection> ready = new CompletableFuture<>();
        Bootstrap b = new Bootstrap()
                .group(loop instanceof EventLoop && loop.parent() == group ? (EventLoop) loop : group)
                .channel(EventLoops.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.RCVBUF_ALLOCATOR, EventLoops.receiveBuffers())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, o.connectTimeoutMillis())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        PduDecoder decoder = new PduDecoder(false, Pdu.IC_LENGTH);
                        if (o.tls() != null)
                            ch.pipeline()
                                    .addLast(
                                            "tls",
                                            TlsPskHandler.client(new TlsPskClientPeer(o.tls(), o.tlsSha256Binder())));
                        else ch.config().setRecvByteBufAllocator(new PlacedReads(decoder)); // C2HData read in place
                        ch.pipeline().addLast("pdu-decoder", decoder);
                        ch.pipeline()
                                .addLast(
                                        "nvme-tcp-host",
                                        new TcpHostConnection(
                                                listener, decoder, o.headerDigest(), o.dataDigest(), ready));
                    }
                });
        ChannelFuture f = b.connect(o.address(), o.port());
        f.addListener(x -> {
            if (!x.isSuccess()) {
                ready.completeExceptionally(new IOException(
                        "cannot connect to " + o.address() + ":" + o.port() + " over TCP: "
                                + x.cause().getMessage(),
                        x.cause()));
            }
        });
        group.schedule(
                () -> {
                    if (!ready.isDone()) {
                        ready.completeExceptionally(new TimeoutException(
                                "no ICResp from " + o.address() + ":" + o.port() + " within " + o.connectTimeoutMillis()
                                        + " ms" + (o.tls() != null ? " (TLS handshake included)" : "")));
                        f.channel().close();
                    }
                },
                o.connectTimeoutMillis(),
                TimeUnit.MILLISECONDS);
        return ready;
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
