package io.jbof.initiator;

import io.jbof.initiator.queue.QueuePair;
import io.jbof.initiator.transport.rdma.RdmaHostTransport;
import io.jbof.initiator.transport.tcp.TcpHostTransport;
import io.jbof.nvme.Connect;
import io.jbof.nvme.DiscoveryLog;
import io.jbof.nvme.IdentifyController;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Properties;
import io.jbof.nvme.Status;
import io.jbof.nvme.auth.AuthMessages;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.jbof.transport.HostConnectionOptions;
import io.jbof.transport.HostTransport;
import io.jbof.transport.TransportType;
import io.jbof.transport.tcp.tls.TlsHandshakeException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connected NVMe-oF controller: the admin queue, the I/O queues, the controller's Identify data and
 * its namespaces. Create with {@link #connect}; {@link #close} shuts the controller down (CC.SHN, so
 * the target flushes) and closes every queue.
 */
public final class NvmeController implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NvmeController.class);
    static final int ADMIN_DEPTH = 32;

    private final ConnectOptions options;
    private final HostTransport transport;
    private final boolean ownsTransport;
    /** TLS identity and PSK (derived once per controller), or null for plain NVMe/TCP. */
    private final TlsPskDerivation.Derived tls;
    /** Bind the SHA-384 PSK to SHA-256 (see {@link #probeTlsBinder}). */
    private volatile boolean tlsSha256Binder;
    /** Replaced by a new queue on every reconnect (its commands are not resent; I/O queues keep theirs). */
    private volatile QueuePair admin;

    private final List<QueuePair> ioQueues = new ArrayList<>();
    private final List<Namespace> namespaces = new ArrayList<>();
    private int cntlid;
    private long cap;
    private int version;
    private ControllerInfo info;
    private ScheduledFuture<?> keepAlive;
    private volatile boolean closed;
    // Reconnect (options.ctrlLossTimeoutMillis > 0): one helper thread runs the attempts; queues park their I/O.
    private ScheduledExecutorService reconnector;
    private boolean reconnecting;
    private long lostAt;
    private boolean ioFastFailed;

    private NvmeController(ConnectOptions options, HostTransport transport, boolean ownsTransport) {
        this.options = options;
        this.transport = transport;
        this.ownsTransport = ownsTransport;
        this.tls = options.tls();
        this.tlsSha256Binder = options.tlsBinder == ConnectOptions.TlsBinder.SHA256;
    }

    /** Connects the admin queue, enables the controller, identifies it, connects I/O queues, lists namespaces. */
    public static NvmeController connect(ConnectOptions options) throws IOException {
        int threads =
                Math.max(1, Math.min(options.ioQueues + 1, Runtime.getRuntime().availableProcessors()));
        HostTransport t = switch (TransportType.parse(options.transport)) {
            case RDMA -> new RdmaHostTransport(threads);
            case TCP -> new TcpHostTransport(threads);
        };
        try {
            return connect(options, t, true);
        } catch (IOException | RuntimeException e) {
            t.close();
            throw e;
        }
    }

    public static NvmeController connect(ConnectOptions options, HostTransport transport, boolean ownsTransport)
            throws IOException {
        NvmeController c = new NvmeController(options, transport, ownsTransport);
        try {
            c.start();
            return c;
        } catch (IOException | RuntimeException e) {
            c.closeQuietly();
            throw e;
        }
    }

    private String where() {
        return options.transport + "://" + options.address + ":" + options.port + " " + options.subsystemNqn;
    }

    private boolean reconnects() {
        return options.ctrlLossTimeoutMillis > 0 && !Nqn.DISCOVERY.equals(options.subsystemNqn);
    }

    private void start() throws IOException {
        probeTlsBinder();
        bringUpAdmin();
        startKeepAlive();
        if (info.controllerType() == IdentifyController.CNTRLTYPE_DISCOVERY
                || Nqn.DISCOVERY.equals(options.subsystemNqn)) {
            return;
        }
        int wanted = options.ioQueues;
        int granted = wanted;
        if (wanted > 0) granted = Math.min(wanted, negotiateQueues(wanted));
        int mqes = Properties.capMaxQueueEntries(cap);
        if (mqes < 2)
            throw new ControllerDataException("CAP.MQES", mqes - 1, "a queue of fewer than 2 entries (0's based)");
        if (info.maxCommands() == 1) throw new ControllerDataException("MAXCMD", 1, "one command per queue");
        int depth = Math.min(options.queueDepth, mqes);
        if (info.maxCommands() > 0) depth = Math.min(depth, info.maxCommands());
        for (int q = 1; q <= granted; q++) {
            QueuePair qp = new QueuePair(q, depth, TimeUnit.MILLISECONDS.toNanos(options.commandTimeoutMillis));
            HostConnection conn = open(qp);
            conn.inCapsuleDataSize(info.inCapsuleDataBytes());
            connectQueue(qp, q, depth, cntlid, 0);
            if (reconnects()) qp.onLoss(this::connectionLost, true);
            ioQueues.add(qp);
        }
        loadNamespaces();
        log.debug(
                "connected to {}: controller {}, {} I/O queues of depth {}, {} namespaces",
                where(),
                cntlid,
                granted,
                depth,
                namespaces.size());
    }

    /** Set Features (Number of Queues): how many I/O queues the controller grants. */
    private int negotiateQueues(int wanted) throws IOException {
        long r = await(
                setFeatures(Opcodes.FEAT_NUMBER_OF_QUEUES, (wanted - 1) | ((wanted - 1) << 16)),
                "Set Features (Number of Queues)");
        return (int) Math.min(r & 0xFFFF, (r >>> 16) & 0xFFFF) + 1;
    }

    /** A new admin queue: Connect, enable the controller (CC.EN, wait for CSTS.RDY), Identify Controller. */
    private void bringUpAdmin() throws IOException {
        QueuePair a = new QueuePair(0, ADMIN_DEPTH, TimeUnit.MILLISECONDS.toNanos(options.commandTimeoutMillis));
        admin = a;
        open(a);
        if (reconnects()) a.onLoss(this::connectionLost, false);
        cntlid = connectQueue(
                a,
                0,
                ADMIN_DEPTH,
                Connect.CNTLID_DYNAMIC,
                Nqn.DISCOVERY.equals(options.subsystemNqn) && options.keepAliveMillis == 5000
                        ? 0
                        : options.keepAliveMillis);
        cap = propertyGet(Properties.CAP, true);
        version = (int) propertyGet(Properties.VS, false);
        int cc = Properties.CC_EN | (6 << 16) | (4 << 20);
        propertySet(Properties.CC, cc);
        waitReady(Properties.capTimeoutMillis(cap));
        ByteBuf id = Unpooled.buffer(4096);
        try {
            identify(0x01, 0, id);
            info = ControllerInfo.parse(id);
        } finally {
            id.release();
        }
    }

    // ---- reconnect ----

    /** A queue's connection ended by itself (on its loop): start reconnecting, once. */
    private void connectionLost() {
        synchronized (this) {
            if (closed || reconnecting) return;
            reconnecting = true;
            ioFastFailed = false;
            lostAt = System.nanoTime();
            if (reconnector == null) {
                reconnector =
                        Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("jbof-reconnect", true));
            }
        }
        log.warn(
                "lost the connection to {}; reconnecting every {} ms for up to {} ms (I/O is held{})",
                where(),
                options.reconnectDelayMillis,
                options.ctrlLossTimeoutMillis,
                options.fastIoFailMillis >= 0 ? ", failing after " + options.fastIoFailMillis + " ms" : "");
        if (keepAlive != null) keepAlive.cancel(false);
        admin.close();
        for (QueuePair q : ioQueues) q.dropConnection(); // every I/O queue parks its commands
        reconnector.schedule(this::reconnectAttempt, options.reconnectDelayMillis, TimeUnit.MILLISECONDS);
    }

    private void reconnectAttempt() {
        if (closed) return;
        try {
            reconnectOnce();
            synchronized (this) {
                reconnecting = false;
            }
            log.warn(
                    "reconnected to {}: controller {}, {} I/O queues; held I/O resent",
                    where(),
                    cntlid,
                    ioQueues.size());
        } catch (IOException | RuntimeException e) {
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAt);
            if (elapsed >= options.ctrlLossTimeoutMillis) {
                IOException cause = new IOException("lost the controller at " + where() + ": no reconnect within "
                        + options.ctrlLossTimeoutMillis + " ms (last attempt: " + e.getMessage() + ")");
                log.error(cause.getMessage());
                for (QueuePair q : ioQueues) q.failForGood(cause);
                return;
            }
            log.debug("reconnect to {} failed after {} ms: {}", where(), elapsed, e.toString());
            if (!ioFastFailed && options.fastIoFailMillis >= 0 && elapsed >= options.fastIoFailMillis) {
                ioFastFailed = true;
                IOException cause = new IOException("no connection to " + where() + " for " + elapsed
                        + " ms (fast-io-fail-tmo); still reconnecting");
                for (QueuePair q : ioQueues) q.failParked(cause);
            }
            reconnector.schedule(this::reconnectAttempt, options.reconnectDelayMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** A new admin queue and controller; each I/O queue reconnects on its own event loop, then resends what it held. */
    private void reconnectOnce() throws IOException {
        try {
            bringUpAdmin();
            int n = ioQueues.size();
            if (n > 0 && negotiateQueues(n) < n)
                throw new IOException("the target now grants fewer than " + n + " I/O queues");
            HostConnectionOptions o = connectionOptions();
            for (QueuePair q : ioQueues) {
                HostConnection c = await(
                        transport.connect(o.forQueue(q.qid(), q.depth()), q, q.executor()),
                        "reconnecting queue " + q.qid() + " to " + where());
                c.inCapsuleDataSize(info.inCapsuleDataBytes());
                q.reattach(c);
                connectQueue(q, q.qid(), q.depth(), cntlid, 0);
            }
        } catch (IOException | RuntimeException e) {
            admin.close();
            for (QueuePair q : ioQueues) q.dropConnection();
            throw e;
        }
        for (QueuePair q : ioQueues) q.resume();
        startKeepAlive();
    }

    private HostConnectionOptions connectionOptions() {
        return new HostConnectionOptions(
                        options.address,
                        options.port,
                        options.headerDigest,
                        options.dataDigest,
                        options.connectTimeoutMillis)
                .withTls(tls, tlsSha256Binder);
    }

    /**
     * A SHA-384 PSK should be bound to SHA-384 (NVMe/TCP 3.6.1.2); tlshd built with gnutls before 3.8.10
     * (Debian 13's Linux target) binds every PSK to SHA-256 and fails any other binder. With
     * {@code --tls-binder auto} one probe connection finds out which the target takes, before the queues.
     */
    private void probeTlsBinder() throws IOException {
        if (tls == null || tls.identity().cipher() != 2 || options.tlsBinder != ConnectOptions.TlsBinder.AUTO) return;
        HostConnection.Listener none = new HostConnection.Listener() {
            @Override
            public HostCommand lookup(int cid) {
                return null;
            }

            @Override
            public void onClosed(Throwable cause) {}
        };
        IOException first;
        try {
            await(transport.connect(connectionOptions(), none), "TLS probe of " + where())
                    .close();
            return;
        } catch (TlsHandshakeException e) {
            first = e;
        }
        tlsSha256Binder = true;
        try {
            await(transport.connect(connectionOptions(), none), "TLS probe of " + where())
                    .close();
            log.info(
                    "{}: the target takes the SHA-384 PSK only with a SHA-256 binder (tlshd with gnutls before 3.8.10); using that",
                    where());
        } catch (IOException e) {
            tlsSha256Binder = false;
            throw first;
        }
    }

    private HostConnection open(QueuePair qp) throws IOException {
        HostConnection conn = await(
                transport.connect(connectionOptions().forQueue(qp.qid(), qp.depth()), qp),
                "connecting queue " + qp.qid() + " to " + where());
        qp.attach(conn);
        return conn;
    }

    private int connectQueue(QueuePair qp, int qid, int depth, int cntlidWanted, int kato) throws IOException {
        FutureRequest r = FutureRequest.fabrics("Connect (queue " + qid + ")", Opcodes.FCTYPE_CONNECT);
        r.cdw[10] = qid << 16; // RECFMT 0, QID
        r.cdw[11] = (depth - 1) & 0xFFFF; // SQSIZE (0's based), CATTR 0
        r.cdw[12] = kato;
        r.data = Connect.data(options.hostId, cntlidWanted, options.subsystemNqn, options.hostNqn);
        r.dataLength = Connect.DATA_SIZE;
        r.toController = true;
        qp.submitPriority(r); // on a reconnecting queue, ahead of the commands it holds
        long result;
        try {
            result = await(r.future, "Connect to " + where());
        } catch (NvmeException e) {
            throw new NvmeException(explainConnect(e.status()), e.status());
        }
        if ((result & AuthMessages.CONNECT_AUTHREQ_ATR) != 0) {
            new HostAuthentication(qp, qid, options, where() + " queue " + qid).run();
        }
        return (int) (result & 0xFFFF);
    }

    private String explainConnect(int status) {
        switch (status & 0x7FF) {
            case Status.CONNECT_INVALID_PARAMETERS:
                return "the target refused Connect to " + where() + " (no such subsystem, or an invalid parameter)";
            case Status.CONNECT_INVALID_HOST:
                return "the target does not allow host " + options.hostNqn + " on " + options.subsystemNqn;
            case Status.CONNECT_CONTROLLER_BUSY:
                return "the target at " + where() + " has no controller to spare";
            default:
                return "Connect to " + where() + " failed";
        }
    }

    private long propertyGet(int offset, boolean eightBytes) throws IOException {
        FutureRequest r = FutureRequest.fabrics("Property Get " + Properties.name(offset), Opcodes.FCTYPE_PROPERTY_GET);
        r.cdw[10] = eightBytes ? 1 : 0;
        r.cdw[11] = offset;
        admin.submit(r);
        return await(r.future, "Property Get " + Properties.name(offset));
    }

    private void propertySet(int offset, int value) throws IOException {
        FutureRequest r = FutureRequest.fabrics("Property Set " + Properties.name(offset), Opcodes.FCTYPE_PROPERTY_SET);
        r.cdw[10] = 0;
        r.cdw[11] = offset;
        r.cdw[12] = value;
        admin.submit(r);
        await(r.future, "Property Set " + Properties.name(offset));
    }

    private void waitReady(int timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(timeoutMillis, 500));
        long pause = 1;
        while (true) {
            int csts = (int) propertyGet(Properties.CSTS, false);
            if ((csts & Properties.CSTS_CFS) != 0)
                throw new IOException("controller at " + where() + " reports a fatal status (CSTS.CFS) when enabled");
            if ((csts & Properties.CSTS_RDY) != 0) return;
            if (System.nanoTime() > deadline)
                throw new IOException(
                        "controller at " + where() + " did not become ready within " + timeoutMillis + " ms");
            sleep(pause);
            pause = Math.min(pause * 2, 100);
        }
    }

    private static void sleep(long ms) throws IOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    private void startKeepAlive() {
        int kato = options.keepAliveMillis;
        if (kato <= 0 || Nqn.DISCOVERY.equals(options.subsystemNqn)) return;
        long period = Math.max(kato / 2, 100);
        keepAlive = admin.executor()
                .scheduleAtFixedRate(
                        () -> {
                            if (closed || !admin.isOpen()) return;
                            FutureRequest r = FutureRequest.io("Keep Alive", Opcodes.ADMIN_KEEP_ALIVE, 0);
                            r.future.whenComplete((v, e) -> {
                                if (e != null && !closed)
                                    log.warn("keep-alive to {} failed: {}", where(), e.getMessage());
                            });
                            admin.submit(r);
                        },
                        period,
                        period,
                        TimeUnit.MILLISECONDS);
    }

    private void loadNamespaces() throws IOException {
        ByteBuf list = Unpooled.buffer(4096);
        ByteBuf id = Unpooled.buffer(4096);
        try {
            identify(0x02, 0, list);
            for (int i = 0; i < 1024; i++) {
                int nsid = list.getIntLE(4 * i);
                if (nsid == 0) break;
                id.clear();
                identify(0x00, nsid, id);
                NamespaceInfo ni = NamespaceInfo.parse(nsid, id);
                if (ni.active()) namespaces.add(new Namespace(this, ni));
            }
        } finally {
            list.release();
            id.release();
        }
    }

    // ---- admin commands ----

    /** Identify with CNS into {@code dst} (4096 bytes at its reader index). */
    public void identify(int cns, int nsid, ByteBuf dst) throws IOException {
        FutureRequest r = FutureRequest.io("Identify (CNS " + cns + ")", Opcodes.ADMIN_IDENTIFY, nsid);
        r.cdw[10] = cns;
        r.data = dst;
        r.dataLength = 4096;
        admin.submit(r);
        await(r.future, "Identify");
        dst.writerIndex(dst.readerIndex() + 4096);
    }

    /** Get Log Page: {@code length} bytes (a multiple of 4) from byte {@code offset} into {@code dst}. */
    public void getLogPage(int lid, int nsid, long offset, int length, ByteBuf dst) throws IOException {
        FutureRequest r = FutureRequest.io(String.format("Get Log Page 0x%02x", lid), Opcodes.ADMIN_GET_LOG_PAGE, nsid);
        int numd = length / 4 - 1;
        r.cdw[10] = lid | ((numd & 0xFFFF) << 16);
        r.cdw[11] = numd >>> 16;
        r.cdw[12] = (int) offset;
        r.cdw[13] = (int) (offset >>> 32);
        r.data = dst;
        r.dataLength = length;
        admin.submit(r);
        await(r.future, "Get Log Page");
        dst.writerIndex(dst.readerIndex() + length);
    }

    public CompletableFuture<Long> setFeatures(int fid, int cdw11) {
        FutureRequest r = FutureRequest.io(String.format("Set Features 0x%02x", fid), Opcodes.ADMIN_SET_FEATURES, 0);
        r.cdw[10] = fid;
        r.cdw[11] = cdw11;
        admin.submit(r);
        return r.future;
    }

    public CompletableFuture<Long> getFeatures(int fid) {
        FutureRequest r = FutureRequest.io(String.format("Get Features 0x%02x", fid), Opcodes.ADMIN_GET_FEATURES, 0);
        r.cdw[10] = fid;
        admin.submit(r);
        return r.future;
    }

    /** The discovery log page's entries (this controller must be a discovery controller). */
    /**
     * A raw command, like nvme-cli's io-passthru / admin-passthru: {@code cdw10to15} fills CDW10..15
     * (shorter arrays leave the rest zero); {@code data} is sent ({@code toController}) or filled.
     * Completes with the 64-bit result, or exceptionally with an {@link io.jbof.nvme.NvmeException}.
     */
    public CompletableFuture<Long> passthru(
            boolean adminQueue,
            int opcode,
            int nsid,
            int[] cdw10to15,
            ByteBuf data,
            int dataLength,
            boolean toController) {
        FutureRequest r = FutureRequest.io(String.format("command opcode 0x%02x", opcode), opcode, nsid);
        for (int i = 0; i < cdw10to15.length && i < 6; i++) r.cdw[10 + i] = cdw10to15[i];
        r.data = data;
        r.dataLength = dataLength;
        r.toController = toController;
        (adminQueue ? admin : queueForThisThread()).submit(r);
        return r.future;
    }

    public List<DiscoveryEntry> discoveryLog() throws IOException {
        ByteBuf header = Unpooled.buffer(DiscoveryLog.HEADER_SIZE);
        try {
            for (int attempt = 0; attempt < 5; attempt++) {
                header.clear();
                getLogPage(Opcodes.LOG_DISCOVERY, 0, 0, DiscoveryLog.HEADER_SIZE, header);
                long gen = header.getLongLE(DiscoveryLog.GENCTR);
                long n = header.getLongLE(DiscoveryLog.NUMREC);
                if (n > 4096) throw new IOException("discovery log claims " + n + " records");
                int len = (int) (DiscoveryLog.HEADER_SIZE + n * DiscoveryLog.ENTRY_SIZE);
                ByteBuf page = Unpooled.buffer(len);
                try {
                    getLogPage(Opcodes.LOG_DISCOVERY, 0, 0, len, page);
                    if (page.getLongLE(DiscoveryLog.GENCTR) != gen) continue; // changed while reading
                    List<DiscoveryEntry> out = new ArrayList<>();
                    for (int i = 0; i < n; i++)
                        out.add(DiscoveryEntry.parse(page, DiscoveryLog.HEADER_SIZE + i * DiscoveryLog.ENTRY_SIZE));
                    return out;
                } finally {
                    page.release();
                }
            }
            throw new IOException("discovery log kept changing while being read");
        } finally {
            header.release();
        }
    }

    static <T> T await(CompletableFuture<T> f, String what) throws IOException {
        try {
            return f.get(5, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof NvmeException) throw (NvmeException) c;
            if (c instanceof IOException) throw (IOException) c;
            throw new IOException(what + ": " + c.getMessage(), c);
        } catch (TimeoutException e) {
            throw new IOException(what + ": no answer", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(what + ": interrupted", e);
        }
    }

    // ---- accessors ----

    public ConnectOptions options() {
        return options;
    }

    public int controllerId() {
        return cntlid;
    }

    public long cap() {
        return cap;
    }

    public int version() {
        return version;
    }

    public ControllerInfo info() {
        return info;
    }

    /**
     * A direct data buffer for this controller's I/O; over RDMA it is registered with the device, so
     * reads and writes on it move without a copy (other buffers are copied through the queue's own).
     */
    public ByteBuf dataBuffer(int size) throws IOException {
        return transport.dataBuffer(size);
    }

    /** The largest transfer of one command: the controller's MDTS, or less where the transport carries less (RDMA). */
    public long maxTransferBytes() {
        long mdts = info.maxTransferBytes();
        return Math.min(mdts == 0 ? 1 << 20 : Math.min(mdts, 8 << 20), transport.maxTransferBytes());
    }

    public List<Namespace> namespaces() {
        return Collections.unmodifiableList(namespaces);
    }

    public List<QueuePair> ioQueues() {
        return Collections.unmodifiableList(ioQueues);
    }

    public QueuePair adminQueue() {
        return admin;
    }

    public Namespace namespace(int nsid) {
        for (Namespace ns : namespaces) if (ns.nsid() == nsid) return ns;
        throw new IllegalArgumentException("no active namespace " + nsid + " on " + where() + " (active: "
                + namespaces.stream()
                        .map(n -> String.valueOf(n.nsid()))
                        .reduce((a, b) -> a + ", " + b)
                        .orElse("none") + ")");
    }

    /** The event loops the I/O queues run on, each once, in queue order (a queue's submissions there run to completion). */
    public List<EventExecutor> ioQueueLoops() {
        List<EventExecutor> loops = new ArrayList<>();
        for (QueuePair q : ioQueues) if (!loops.contains(q.executor())) loops.add(q.executor());
        return loops;
    }

    /**
     * The I/O queue for the calling thread: its own queue when called on a queue's event loop (run to
     * completion), otherwise a queue picked by thread so each thread sticks to one.
     */
    public QueuePair queueForThisThread() {
        int n = ioQueues.size();
        if (n == 0) throw new IllegalStateException("no I/O queues on " + where());
        for (int i = 0; i < n; i++) {
            QueuePair q = ioQueues.get(i);
            if (q.executor().inEventLoop()) return q;
        }
        return ioQueues.get((int) (Thread.currentThread().getId() % n));
    }

    /** Orderly shutdown (CC.SHN normal: the target makes everything durable), then closes every queue. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        synchronized (this) {
            if (reconnector != null) reconnector.shutdownNow();
        }
        if (keepAlive != null) keepAlive.cancel(false);
        try {
            if (admin != null && admin.isOpen() && info != null && !Nqn.DISCOVERY.equals(options.subsystemNqn)) {
                propertySet(Properties.CC, Properties.CC_EN | (6 << 16) | (4 << 20) | (1 << Properties.CC_SHN_SHIFT));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() < deadline) {
                    int csts = (int) propertyGet(Properties.CSTS, false);
                    if (((csts >>> Properties.CSTS_SHST_SHIFT) & 0x3) == Properties.SHST_COMPLETE) break;
                    sleep(5);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("shutdown of controller {} on {}: {}", cntlid, where(), e.getMessage());
        }
        closeQuietly();
    }

    private void closeQuietly() {
        closed = true;
        synchronized (this) {
            if (reconnector != null) reconnector.shutdownNow();
        }
        if (keepAlive != null) keepAlive.cancel(false);
        for (QueuePair q : ioQueues) q.close();
        if (admin != null) admin.close();
        if (ownsTransport) transport.close();
    }
}
