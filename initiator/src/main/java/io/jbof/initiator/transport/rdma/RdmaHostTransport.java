package io.jbof.initiator.transport.rdma;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.impl.NatObject;
import io.jbof.transport.HostConnection;
import io.jbof.transport.HostConnectionOptions;
import io.jbof.transport.HostTransport;
import io.jbof.transport.TransportType;
import io.jbof.transport.rdma.CmEvents;
import io.jbof.transport.rdma.RdmaEventLoop;
import io.jbof.transport.rdma.RdmaEventLoopGroup;
import io.jbof.transport.rdma.RdmaNative;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opens NVMe-oF RDMA host connections: one RC queue pair per NVMe queue, each owned by one event loop. */
public final class RdmaHostTransport implements HostTransport {
    private static final Logger log = LoggerFactory.getLogger(RdmaHostTransport.class);
    /** Registered data buffer per command slot: the largest transfer of one command. */
    static final int TRANSFER_SIZE = Tunable.RDMA_TRANSFER_SIZE.intValue();

    private final RdmaEventLoopGroup loops;
    private final CmEvents cm;
    private final Map<Long, IbvPd> domains = new ConcurrentHashMap<>();
    private final Map<RdmaCmId, RdmaHostConnection> connections = new ConcurrentHashMap<>();
    private final RegisteredBuffers registered = new RegisteredBuffers();

    public RdmaHostTransport(int ioThreads) throws IOException {
        RdmaNative.check();
        this.cm = new CmEvents("jbof-rdma-host-cm");
        this.loops = new RdmaEventLoopGroup(ioThreads, "jbof-rdma-host");
    }

    @Override
    public TransportType type() {
        return TransportType.RDMA;
    }

    @Override
    public long maxTransferBytes() {
        return TRANSFER_SIZE;
    }

    int transferSize() {
        return TRANSFER_SIZE;
    }

    @Override
    public CompletableFuture<HostConnection> connect(HostConnectionOptions o, HostConnection.Listener listener) {
        return connect(o, listener, null);
    }

    @Override
    public CompletableFuture<HostConnection> connect(
            HostConnectionOptions o, HostConnection.Listener listener, EventExecutor want) {
        CompletableFuture<HostConnection> ready = new CompletableFuture<>();
        RdmaEventLoop loop = want instanceof RdmaEventLoop l && l.parent() == loops ? l : loops.next();
        RdmaCmId id;
        try {
            id = cm.createId();
        } catch (IOException e) {
            ready.completeExceptionally(e);
            return ready;
        }
        RdmaHostConnection c = new RdmaHostConnection(this, id, loop, o, listener, ready);
        connections.put(id, c);
        cm.register(id, c);
        try {
            id.resolveAddr(null, RdmaHostConnection.address(o), o.connectTimeoutMillis());
        } catch (IOException e) {
            forget(id);
            try {
                id.destroyId();
            } catch (IOException | RuntimeException x) {
                log.debug("destroying a CM id: {}", x.toString());
            }
            ready.completeExceptionally(
                    new IOException("cannot resolve " + o.address() + " for RDMA: " + e.getMessage(), e));
            return ready;
        }
        loop.schedule(
                () -> {
                    if (!ready.isDone()
                            && ready.completeExceptionally(new TimeoutException("no RDMA connection to " + o.address()
                                    + ":" + o.port() + " within " + o.connectTimeoutMillis() + " ms"))) {
                        c.close();
                    }
                },
                o.connectTimeoutMillis(),
                TimeUnit.MILLISECONDS);
        return ready;
    }

    /**
     * A data buffer registered with every RDMA device this transport's queues use: I/O on it moves
     * between the target and this memory directly. Call after connecting; release it when done.
     */
    @Override
    public ByteBuf dataBuffer(int size) throws IOException {
        List<IbvPd> pds;
        synchronized (domains) {
            pds = new ArrayList<>(domains.values());
        }
        return registered.allocate(size, pds);
    }

    /** The registered region holding [address, address + length), or null. */
    RegisteredBuffers.Region registeredRegion(long address, int length) {
        return registered.find(address, length);
    }

    IbvPd domain(IbvContext ctx) throws IOException {
        long key = ((NatObject) ctx).getObjId();
        synchronized (domains) {
            IbvPd pd = domains.get(key);
            if (pd == null) {
                pd = ctx.allocPd();
                domains.put(key, pd);
            }
            return pd;
        }
    }

    void forget(RdmaCmId id) {
        connections.remove(id);
        cm.unregister(id);
    }

    @Override
    public void close() {
        for (RdmaHostConnection c : connections.values()) c.close();
        loops.shutdownGracefully(0, 3, TimeUnit.SECONDS).syncUninterruptibly();
        for (IbvPd pd : domains.values()) {
            try {
                pd.deallocPd();
            } catch (Exception e) {
                log.debug("deallocating a protection domain: {}", e.toString());
            }
        }
        cm.close();
    }
}
