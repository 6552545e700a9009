package io.jbof.transport.rdma;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.MultithreadEventExecutorGroup;
import io.netty.util.concurrent.ThreadPerTaskExecutor;
import java.util.concurrent.Executor;

/** The RDMA event loops of one transport, one thread each; queue pairs are spread over them. */
public final class RdmaEventLoopGroup extends MultithreadEventExecutorGroup {
    public RdmaEventLoopGroup(int threads, String name) {
        super(threads, new ThreadPerTaskExecutor(new DefaultThreadFactory(name, true)));
    }

    @Override
    protected EventExecutor newChild(Executor executor, Object... args) {
        return new RdmaEventLoop(this, executor);
    }

    @Override
    public RdmaEventLoop next() {
        return (RdmaEventLoop) super.next();
    }
}
