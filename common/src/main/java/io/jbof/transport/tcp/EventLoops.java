package io.jbof.transport.tcp;

import io.jbof.util.Tunable;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoop;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.EventExecutor;
import java.lang.reflect.Field;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.ThreadFactory;

/**
 * Netty's native epoll transport where it loads (Linux x86-64: it writes straight from buffer memory
 * addresses and sends file regions with sendfile, where NIO builds ByteBuffer views per write), NIO
 * everywhere else. {@code -Djbof.nio=true} forces NIO.
 */
public final class EventLoops {
    public static final boolean EPOLL = !Tunable.NIO.booleanValue() && Epoll.isAvailable();

    private EventLoops() {}

    /**
     * Loops that run {@link LoopTurnWork} each turn and poll briefly before they sleep once traffic is steady
     * ({@link SpinBeforeSleep}), where that is on for every loop or for the loop's own work.
     */
    public static EventLoopGroup group(int threads, ThreadFactory factory) {
        SelectStrategyFactory strategy =
                () -> new LoopTurnWork(new SpinBeforeSleep(SpinBeforeSleep.DEFAULT_NANOS, System::nanoTime));
        return EPOLL
                ? new EpollEventLoopGroup(threads, factory, strategy)
                : new NioEventLoopGroup(threads, factory, SelectorProvider.provider(), strategy);
    }

    /**
     * The descriptor that wakes {@code loop} from its sleep (an epoll loop's eventfd), for a source in the
     * kernel to signal it directly (an io_uring's registered eventfd); -1 for other loops. Netty does not
     * publish it: read from its field, and -1 where that fails.
     */
    public static int wakeupFd(EventExecutor loop) {
        if (!(loop instanceof EpollEventLoop)) return -1;
        try {
            Field f = EpollEventLoop.class.getDeclaredField("eventFd");
            f.setAccessible(true);
            Object fd = f.get(loop);
            return fd instanceof FileDescriptor ? ((FileDescriptor) fd).intValue() : -1;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The epoll descriptor {@code loop} sleeps on, for a descriptor that is no Netty channel to wake it (added
     * tagged as the loop's {@link #wakeupFd}, so Netty takes its events for wake-ups); -1 for other loops or
     * where Netty's field cannot be read.
     */
    public static int epollFd(EventExecutor loop) {
        if (!(loop instanceof EpollEventLoop)) return -1;
        try {
            Field f = EpollEventLoop.class.getDeclaredField("epollFd");
            f.setAccessible(true);
            Object fd = f.get(loop);
            return fd instanceof FileDescriptor ? ((FileDescriptor) fd).intValue() : -1;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }

    public static Class<? extends SocketChannel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public static Class<? extends ServerSocketChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /**
     * Socket reads that can grow to 1 MiB: a 128 KiB data PDU then usually arrives in one read and is
     * sliced, not copied into the decoder's cumulation (Netty's default caps reads at 64 KiB).
     */
    public static AdaptiveRecvByteBufAllocator receiveBuffers() {
        return new AdaptiveRecvByteBufAllocator(4096, 65536, 1 << 20);
    }

    public static String name() {
        return EPOLL ? "epoll" : "nio";
    }
}
