package io.jbof.target.transport.rdma;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.impl.NatObject;
import io.jbof.transport.TargetQueueAcceptor;
import io.jbof.transport.rdma.CmEvents;
import io.jbof.transport.rdma.RdmaEventLoop;
import io.jbof.transport.rdma.RdmaEventLoopGroup;
import io.jbof.transport.rdma.RdmaFabric;
import io.jbof.transport.rdma.RdmaNative;
import io.jbof.transport.rdma.RdmaPrivateData;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens for NVMe-oF RDMA connections (RDMA CM, port space TCP). A connect request names the queue
 * and its size in the private data; the queue pair is created on one of the event loops and accepted
 * with the controller's receive queue size, or rejected with the binding's status. Each loop
 * registers its page-buffer pool once per device, at listen time where the address names a device.
 */
public final class RdmaTargetTransport implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RdmaTargetTransport.class);
    static final int RETRY = 7, RNR_RETRY = 7;

    private final RdmaTargetOptions options;
    private final long maxTransfer;
    private final RdmaEventLoopGroup loops;
    private final CmEvents cm;
    private final Map<Long, IbvPd> domains = new ConcurrentHashMap<>();
    /** Per event loop, per device context: the loop's registered page buffers. */
    private final Map<RdmaEventLoop, Map<Long, DataBufferPool>> pools = new ConcurrentHashMap<>();

    private final Map<RdmaCmId, RdmaTargetConnection> connections = new ConcurrentHashMap<>();
    private final List<RdmaCmId> listeners = new ArrayList<>();
    private volatile boolean accepting = true;

    public RdmaTargetTransport(RdmaTargetOptions options, long maxTransfer, int ioThreads) throws IOException {
        RdmaNative.check();
        this.options = options;
        this.maxTransfer = maxTransfer;
        this.cm = new CmEvents("jbof-rdma-cm");
        this.loops = new RdmaEventLoopGroup(ioThreads, "jbof-rdma");
    }

    long maxTransfer() {
        return maxTransfer;
    }

    /** Binds and listens; the address must be one of an RDMA device's (for Soft-RoCE: the netdev's address). */
    public InetSocketAddress listen(InetSocketAddress address, TargetQueueAcceptor acceptor) throws IOException {
        RdmaCmId id = cm.createId();
        try {
            id.bindAddr(address);
            id.listen(1024);
        } catch (IOException e) {
            id.destroyId();
            throw new IOException(
                    "cannot listen for RDMA on " + address + ": " + e.getMessage()
                            + " (the address must belong to an interface with an RDMA device; rdma link show)",
                    e);
        }
        cm.register(id, (event, conn, raw) -> onListenEvent(event, conn, acceptor));
        listeners.add(id);
        SocketAddress bound = id.getSource();
        IbvContext ctx = id.getVerbs();
        if (ctx != null && ((NatObject) ctx).getObjId() > 0) {
            // Register every loop's page buffers now, not on the first connection's path.
            for (EventExecutor e : loops) {
                RdmaEventLoop loop = (RdmaEventLoop) e;
                try {
                    loop.submit(() -> pool(loop, ctx)).get(30, TimeUnit.SECONDS);
                } catch (Exception ex) {
                    throw new IOException("cannot register RDMA page buffers: " + ex.getMessage(), ex);
                }
            }
        }
        return bound instanceof InetSocketAddress a && a.getPort() != 0 ? a : address;
    }

    private IbvPd domain(IbvContext ctx) throws IOException {
        long key = ((NatObject) ctx).getObjId();
        IbvPd pd = domains.get(key);
        if (pd == null) {
            synchronized (domains) {
                pd = domains.get(key);
                if (pd == null) {
                    pd = ctx.allocPd();
                    domains.put(key, pd);
                }
            }
        }
        return pd;
    }

    /** The loop's page-buffer pool for a device; created and registered once. On the loop. */
    private DataBufferPool pool(RdmaEventLoop loop, IbvContext ctx) throws IOException {
        Map<Long, DataBufferPool> mine = pools.computeIfAbsent(loop, l -> new ConcurrentHashMap<>());
        long key = ((NatObject) ctx).getObjId();
        DataBufferPool p = mine.get(key);
        if (p == null) {
            RdmaFabric fabric = RdmaFabric.of(ctx);
            p = new DataBufferPool(
                    domain(ctx), options.buffersPerLoop(), options.bufferSize(), fabric.readSinkAccess());
            mine.put(key, p);
            log.debug(
                    "registered {} page buffers of {} KiB for an RDMA event loop on an {} device{}",
                    options.buffersPerLoop(),
                    options.bufferSize() / 1024,
                    fabric.label(),
                    fabric == RdmaFabric.IWARP ? " (RDMA READ sinks with remote write)" : "");
        }
        return p;
    }

    private void onListenEvent(int event, RdmaCmId conn, TargetQueueAcceptor acceptor) {
        if (event != CmEvents.CONNECT_REQUEST) {
            log.debug("RDMA CM {} on a listener", CmEvents.name(event));
            return;
        }
        long objId = ((NatObject) conn).getObjId();
        String remote = "?";
        try {
            remote = String.valueOf(conn.getDestination());
        } catch (IOException | RuntimeException e) {
            log.debug("peer address: {}", e.toString());
        }
        if (!accepting) {
            reject(conn, objId, RdmaPrivateData.STS_NO_RESOURCES, remote, "the target is shutting down");
            return;
        }
        byte[] data = RdmaNative.privateData(objId);
        RdmaPrivateData.Request req;
        if (data == null) {
            // A libdisni without jbof's event record: size the queue for the largest the host may ask for.
            log.debug(
                    "no CM private data from {} (libdisni keeps none); queue sized at {} entries",
                    remote,
                    options.maxQueueEntries());
            req = new RdmaPrivateData.Request(-1, options.maxQueueEntries() + 1, options.maxQueueEntries() - 1);
        } else {
            try {
                req = RdmaPrivateData.decodeRequest(data, options.maxIoQueues(), options.maxQueueEntries());
            } catch (RdmaPrivateData.Rejected r) {
                reject(conn, objId, r.status, remote, r.getMessage());
                return;
            }
        }
        RdmaEventLoop loop = loops.next();
        int entries = req.queueEntries();
        String peer = remote;
        RdmaTargetConnection c = new RdmaTargetConnection(this, conn, loop, entries, options.inCapsuleDataSize(), peer);
        connections.put(conn, c);
        cm.register(conn, c);
        loop.execute(() -> {
            try {
                IbvContext ctx = conn.getVerbs();
                c.setUp(domain(ctx), pool(loop, ctx), acceptor);
                RdmaNative.accept(objId, RETRY, RNR_RETRY, RdmaPrivateData.encodeAccept(entries));
                log.debug("accepted RDMA queue {} ({} entries) from {}", req.qid(), entries, peer);
            } catch (IOException | RuntimeException e) {
                log.warn("cannot set up an RDMA queue for {}: {}", peer, e.getMessage());
                connections.remove(conn);
                cm.unregister(conn);
                reject(conn, objId, RdmaPrivateData.STS_NO_RESOURCES, peer, e.getMessage());
                c.tearDown();
            }
        });
    }

    private void reject(RdmaCmId conn, long objId, int status, String remote, String why) {
        log.warn("refused an RDMA connection from {}: {}", remote, why);
        try {
            RdmaNative.reject(objId, RdmaPrivateData.encodeReject(status));
        } catch (IOException e) {
            log.debug("rdma_reject: {}", e.getMessage());
        }
        cm.unregister(conn);
        try {
            conn.destroyId();
        } catch (IOException | RuntimeException e) {
            log.debug("destroying a refused id: {}", e.toString());
        }
    }

    void forget(RdmaCmId id) {
        connections.remove(id);
        cm.unregister(id);
    }

    /** Stops accepting; established queues go on until closed. */
    public void stopAccepting() {
        accepting = false;
    }

    @Override
    public void close() {
        accepting = false;
        for (RdmaTargetConnection c : connections.values()) c.executor().execute(() -> c.close("target shutting down"));
        for (RdmaCmId id : listeners) {
            cm.unregister(id);
            try {
                id.destroyId();
            } catch (IOException | RuntimeException e) {
                log.debug("destroying a listener: {}", e.toString());
            }
        }
        for (RdmaTargetConnection c : connections.values()) {
            try {
                c.executor().submit(c::tearDown).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.debug("tearing down an RDMA queue: {}", e.toString());
            }
        }
        for (Map<Long, DataBufferPool> m : pools.values()) for (DataBufferPool p : m.values()) p.close();
        for (IbvPd pd : domains.values()) {
            try {
                pd.deallocPd();
            } catch (Exception e) {
                log.debug("deallocating a protection domain: {}", e.toString());
            }
        }
        loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        cm.close();
    }
}
