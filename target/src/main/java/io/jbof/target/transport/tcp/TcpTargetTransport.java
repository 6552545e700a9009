package io.jbof.target.transport.tcp;

import io.jbof.transport.TargetQueueAcceptor;
import io.jbof.transport.tcp.EventLoops;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.tls.TlsMode;
import io.jbof.transport.tcp.tls.TlsPskHandler;
import io.jbof.transport.tcp.tls.TlsPskServerPeer;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Listens for NVMe/TCP connections. Each accepted connection is one NVMe queue, owned for its whole
 * life by one event loop of the worker group (one per core by default).
 */
public final class TcpTargetTransport implements AutoCloseable {
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final TcpTargetOptions options;
    private final TcpBackPressure backPressure = new TcpBackPressure();
    private Channel server;

    public TcpTargetTransport(TcpTargetOptions options, int ioThreads) {
        this.options = options;
        this.boss = EventLoops.group(1, new DefaultThreadFactory("jbof-accept", true));
        this.workers = EventLoops.group(ioThreads, new DefaultThreadFactory("jbof-tcp", true));
    }

    /** Binds and starts accepting; throws with a clear message when the address is unusable. */
    public InetSocketAddress listen(InetSocketAddress address, TargetQueueAcceptor acceptor)
            throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(EventLoops.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, EventLoops.receiveBuffers())
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, TcpBackPressure.WATER_MARK)
                .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, TcpBackPressure.SIZES)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        PduDecoder decoder = new PduDecoder(true, Pdu.IC_LENGTH);
                        if (options.tls() != TlsMode.OFF) {
                            ch.pipeline()
                                    .addLast(
                                            "tls",
                                            TlsPskHandler.server(
                                                    options.tls(), new TlsPskServerPeer(options.tlsKeys())));
                        }
                        ch.pipeline().addLast("pdu-decoder", decoder);
                        ch.pipeline()
                                .addLast(
                                        "nvme-tcp-target",
                                        new TcpTargetConnection(acceptor, options, decoder, backPressure));
                    }
                });
        server = b.bind(address).sync().channel();
        return (InetSocketAddress) server.localAddress();
    }

    /** What the connections' back-pressure saw (and how many are open). */
    public TcpBackPressure backPressure() {
        return backPressure;
    }

    /** Stops accepting new connections; established ones go on until closed. */
    public void stopAccepting() {
        if (server != null) server.close().syncUninterruptibly();
    }

    @Override
    public void close() {
        stopAccepting();
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
