package io.jbof.csi;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ClientCalls;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A CO's side of the driver's socket, as kubelet and the sidecars dial it: one unary call at a time. */
final class CsiClient implements AutoCloseable {
    private final EventLoopGroup loop = new EpollEventLoopGroup(1);
    private final ManagedChannel channel;

    CsiClient(Path socket) {
        channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(loop)
                .usePlaintext()
                .build();
    }

    <Q extends Message, R extends Message> R call(String service, String method, Q request, R response) {
        return ClientCalls.blockingUnaryCall(
                channel, CsiMethods.unary(service, method, request, response), CallOptions.DEFAULT, request);
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
