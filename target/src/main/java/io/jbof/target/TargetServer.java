package io.jbof.target;

import io.jbof.nvme.AnaState;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskIdentity;
import io.jbof.nvme.tls.TlsPskKey;
import io.jbof.target.config.ListenAddress;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.controller.CommandSet;
import io.jbof.target.controller.Controller;
import io.jbof.target.controller.ControllerRegistry;
import io.jbof.target.controller.InflightBudget;
import io.jbof.target.controller.PortInfo;
import io.jbof.target.controller.QueueSession;
import io.jbof.target.controller.TargetContext;
import io.jbof.target.controller.TargetLimits;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Listener;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.target.transport.rdma.RdmaTargetOptions;
import io.jbof.target.transport.rdma.RdmaTargetTransport;
import io.jbof.target.transport.tcp.TcpBackPressure;
import io.jbof.target.transport.tcp.TcpTargetOptions;
import io.jbof.target.transport.tcp.TcpTargetTransport;
import io.jbof.transport.TransportType;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.tls.TlsMode;
import io.jbof.util.SecretText;
import io.jbof.util.Sizes;
import io.netty.channel.unix.Errors;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.net.BindException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running jbof target: subsystems with file-backed namespaces, the discovery subsystem, and the
 * transport listeners. Built from a {@link TargetConfig}; closed by {@link #close()} (stop accepting,
 * drop controllers, flush every namespace, close the files).
 */
public final class TargetServer implements TargetContext, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TargetServer.class);

    /** Copy on write: Connects and discovery read it from every event loop; the management API changes it rarely. */
    private volatile Map<String, Subsystem> subsystems = new LinkedHashMap<>();

    private final AtomicLong discoveryGeneration = new AtomicLong(1);
    private volatile boolean loopbackOnly;
    private final Subsystem discovery = new Subsystem(Nqn.DISCOVERY, "jbof discovery", true, Set.of());
    private final TargetLimits limits;
    private final ControllerRegistry controllers;
    private final TargetPorts ports = new TargetPorts();
    private final List<InetSocketAddress> bound = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Built once the first port listens; every later port's queues dispatch through it too. */
    private CommandSet commands;
    /** Subsystems that let any host in only because the target listened on loopback alone (no listener beyond it may be added). */
    private final Set<String> anyHostByDefault = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final TcpTargetTransport tcp;
    private final TransportType transport;
    private final TlsMode tlsMode;
    private final TlsPskDerivation.Labels tlsLabels;
    private final RdmaTargetTransport rdma;
    private final InflightBudget inflight;
    private volatile boolean closed;
    /** The target's listen addresses as configured; port i + 1 is the i-th. */
    private final List<String> listenSpecs = new ArrayList<>();

    private TargetServer(TargetConfig cfg) throws IOException {
        this.transport = TransportType.parse(cfg.transport);
        this.tlsMode = tlsMode(cfg, transport);
        this.tlsLabels = TlsPskDerivation.Labels.parse(cfg.tlsHkdf == null ? "legacy" : cfg.tlsHkdf);
        this.limits =
                new TargetLimits(cfg.maxIoQueues, cfg.queueDepth, cfg.inCapsuleData, 1 << 20, cfg.maxControllers, true);
        int[] ids = cfg.cntlidBounds();
        this.controllers = new ControllerRegistry(cfg.maxControllers, ids[0], ids[1]);
        this.loopbackOnly = loopbackOnly(cfg);
        for (String l : cfg.listen) listenSpecs.add(l.trim());
        this.inflight = new InflightBudget(cfg.maxInflightBytes == null ? 0 : Sizes.parse(cfg.maxInflightBytes));
        int inCapsule = Math.max(cfg.inCapsuleData, Pdu.ADMIN_IN_CAPSULE_DATA);
        if (transport == TransportType.RDMA) {
            this.tcp = null;
            this.rdma = new RdmaTargetTransport(
                    new RdmaTargetOptions(
                            cfg.inCapsuleData,
                            cfg.queueDepth,
                            cfg.maxIoQueues,
                            RdmaTargetOptions.DEFAULT_BUFFER_SIZE,
                            RdmaTargetOptions.DEFAULT_BUFFERS),
                    limits.maxTransferBytes(),
                    cfg.ioThreads);
        } else {
            this.rdma = null;
            this.tcp = new TcpTargetTransport(
                    new TcpTargetOptions(inCapsule, 128 * 1024, cfg.queueDepth, cfg.digests)
                            .withTls(tlsMode, this::tlsKeyFor),
                    cfg.ioThreads);
        }
    }

    /** Validates the configuration, opens every namespace and starts listening. */
    public static TargetServer start(TargetConfig cfg) throws IOException, InterruptedException {
        return start(cfg, false);
    }

    /**
     * As {@link #start(TargetConfig)}; {@code managed}: a management API will add what is missing, so
     * the target may start with no subsystem and subsystems with no namespace.
     */
    public static TargetServer start(TargetConfig cfg, boolean managed) throws IOException, InterruptedException {
        validate(cfg, managed);
        TargetServer t = new TargetServer(cfg);
        try {
            t.openSubsystems(cfg);
            t.listen(cfg);
            return t;
        } catch (IOException | RuntimeException | InterruptedException e) {
            t.close();
            throw e;
        }
    }

    /** Linux's errno for a taken address; netty's native transport reports it negated. */
    private static final int EADDRINUSE = 98;

    /** Whether a listen failed because the address is taken: NIO says BindException, native epoll the errno. */
    private static boolean addressInUse(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException) return true;
            if (t instanceof Errors.NativeIoException && ((Errors.NativeIoException) t).expectedErr() == -EADDRINUSE)
                return true;
        }
        return false;
    }

    private static void validate(TargetConfig cfg, boolean managed) {
        TransportType.parse(cfg.transport); // an unknown name fails here, listing the known ones
        if (cfg.listen.isEmpty())
            throw new IllegalArgumentException("no listen address given (e.g. --listen 127.0.0.1:4420)");
        cfg.cntlidBounds();
        if (cfg.subsystems.isEmpty() && !managed)
            throw new IllegalArgumentException("no subsystem configured (give --nqn and --namespace)");
        if (cfg.queueDepth < 2 || cfg.queueDepth > 65536)
            throw new IllegalArgumentException("queue depth must be 2..65536, not " + cfg.queueDepth);
        if (cfg.maxControllers < 1 || cfg.maxControllers > 0xFFEF) {
            throw new IllegalArgumentException(
                    "--max-controllers must be 1..65519 (controller IDs), not " + cfg.maxControllers);
        }
        if (cfg.ioThreads < 1)
            throw new IllegalArgumentException("--io-threads must be at least 1, not " + cfg.ioThreads);
        if (cfg.maxIoQueues < 1 || cfg.maxIoQueues > 65535)
            throw new IllegalArgumentException("max I/O queues must be 1..65535, not " + cfg.maxIoQueues);
        if (cfg.inCapsuleData < 0 || cfg.inCapsuleData > 1 << 20 || cfg.inCapsuleData % 16 != 0) {
            throw new IllegalArgumentException(
                    "in-capsule data size must be a multiple of 16 up to 1 MiB, not " + cfg.inCapsuleData);
        }
        Set<String> nqns = new HashSet<>();
        for (TargetConfig.SubsystemConfig s : cfg.subsystems) {
            validate(s, loopbackOnly(cfg));
            if (!nqns.add(s.nqn)) throw new IllegalArgumentException("subsystem " + s.nqn + " is configured twice");
            if (s.namespaces.isEmpty() && !managed) {
                throw new IllegalArgumentException(
                        "subsystem " + s.nqn + " has no namespace (add --namespace PATH:SIZE)");
            }
        }
    }

    private static boolean loopbackOnly(TargetConfig cfg) {
        return cfg.listen.stream().map(ListenAddress::parse).allMatch(ListenAddress::isLoopback);
    }

    /** What one subsystem's configuration must satisfy, at start and when the management API adds it. */
    private static void validate(TargetConfig.SubsystemConfig s, boolean loopbackOnly) {
        String problem = Nqn.problem(s.nqn);
        if (problem != null) throw new IllegalArgumentException("subsystem NQN: " + problem);
        if (Nqn.DISCOVERY.equals(s.nqn))
            throw new IllegalArgumentException("the discovery NQN cannot be used for a subsystem");
        for (String h : s.hosts) {
            String hp = Nqn.problem(h);
            if (hp != null) throw new IllegalArgumentException("allowed host NQN: " + hp);
        }
        if (s.allowAnyHost == null
                && s.hosts.isEmpty()
                && s.dhchapSecrets.isEmpty()
                && s.tlsKeys.isEmpty()
                && !loopbackOnly) {
            throw new IllegalArgumentException(
                    "subsystem " + s.nqn + " listens beyond loopback but names no allowed hosts:"
                            + " add --allow-host HOSTNQN (or --allow-any-host to let every host in)");
        }
        for (String h : s.tlsKeys.keySet()) {
            String hp = Nqn.problem(h);
            if (hp != null) throw new IllegalArgumentException("--tls-key host NQN: " + hp);
        }
        for (String h : s.dhchapCtrlSecrets.keySet()) {
            if (!s.dhchapSecrets.containsKey(h)) {
                throw new IllegalArgumentException(
                        "--dhchap-ctrl-secret for " + h + " needs a --dhchap-secret for that host too");
            }
        }
    }

    private void openSubsystems(TargetConfig cfg) throws IOException {
        for (TargetConfig.SubsystemConfig sc : cfg.subsystems) openSubsystem(sc);
    }

    /** Opens a subsystem and its namespaces and makes it visible; on failure nothing stays open. */
    private Subsystem openSubsystem(TargetConfig.SubsystemConfig sc) throws IOException {
        boolean any = sc.allowAnyHost != null
                ? sc.allowAnyHost
                : sc.hosts.isEmpty() && sc.dhchapSecrets.isEmpty() && sc.tlsKeys.isEmpty();
        Set<String> hosts = new HashSet<>(sc.hosts);
        hosts.addAll(sc.dhchapSecrets.keySet());
        hosts.addAll(sc.tlsKeys.keySet());
        Subsystem s = new Subsystem(sc.nqn, sc.model, any, hosts);
        if (sc.allowAnyHost == null && any) anyHostByDefault.add(sc.nqn);
        openListeners(s, sc);
        for (Map.Entry<String, String> e : sc.tlsKeys.entrySet()) {
            s.tlsKey(e.getKey(), secret(e.getValue(), "--tls-key for " + e.getKey(), TlsPskKey::parse));
        }
        for (Map.Entry<String, String> e : sc.dhchapSecrets.entrySet()) {
            String ctrl = sc.dhchapCtrlSecrets.get(e.getKey());
            s.dhchapKeys(
                    e.getKey(),
                    secret(e.getValue(), "--dhchap-secret for " + e.getKey(), DhchapKey::parse),
                    ctrl == null ? null : secret(ctrl, "--dhchap-ctrl-secret for " + e.getKey(), DhchapKey::parse));
        }
        try {
            int next = 1;
            for (TargetConfig.NamespaceConfig nc : sc.namespaces) {
                next = openNamespace(s, nc, next).nsid() + 1;
            }
            publish(s);
        } catch (IOException | RuntimeException e) {
            try {
                s.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return s;
    }

    /**
     * The subsystem's listeners: on the ports its {@code listen} names (every port when it names none),
     * with the ANA states it configures. Ports are numbered 1.. in the order of the target's listen list,
     * then in the order the management API adds them.
     */
    private void openListeners(Subsystem s, TargetConfig.SubsystemConfig sc) {
        List<Integer> ids = new ArrayList<>();
        if (sc.listen == null) {
            for (int i = 1; i <= listenSpecs.size(); i++) ids.add(i);
            for (PortInfo p : ports.all()) if (!ids.contains(p.portId())) ids.add(p.portId());
        } else {
            for (String l : sc.listen) ids.add(portIdOf(l, sc.nqn));
        }
        for (int id : ids) s.addListener(new Listener(id));
        for (TargetConfig.AnaConfig a : sc.ana) {
            Listener l = s.listener(portIdOf(a.listen, sc.nqn));
            if (l == null)
                throw new IllegalArgumentException(
                        "subsystem " + sc.nqn + " sets an ANA state on " + a.listen + ", which it does not listen on");
            l.state(a.group, AnaState.parse(a.state));
        }
    }

    /** The port ID of a listen address: configured at start (by position) or bound since. */
    private int portIdOf(String listen, String nqn) {
        for (int i = 0; i < listenSpecs.size(); i++) if (listenSpecs.get(i).equals(listen.trim())) return i + 1;
        PortInfo p = ports.find(listen);
        if (p == null)
            throw new IllegalArgumentException("subsystem " + nqn + " names listen address " + listen
                    + ", which the target does not listen on (its addresses: " + String.join(", ", listenSpecs) + ")");
        return p.portId();
    }

    private synchronized void publish(Subsystem s) {
        Map<String, Subsystem> next = new LinkedHashMap<>(subsystems);
        if (next.putIfAbsent(s.nqn(), s) != null)
            throw new IllegalStateException("subsystem " + s.nqn() + " already exists");
        subsystems = next;
    }

    /**
     * Opens a namespace of {@code s} ({@code nsidIfUnset} when the configuration names none) and adds it. The
     * NSID and UUID it got are written back into {@code nc}, so a saved configuration keeps them.
     */
    private TargetNamespace openNamespace(Subsystem s, TargetConfig.NamespaceConfig nc, int nsidIfUnset)
            throws IOException {
        int nsid = nc.nsid != null ? nc.nsid : nsidIfUnset;
        if (nsid < 1 || nsid > TargetLimits.MAX_NAMESPACES) {
            throw new IllegalArgumentException(
                    "NSID " + nsid + " is invalid: a subsystem's NSIDs are 1.." + TargetLimits.MAX_NAMESPACES);
        }
        if (s.namespace(nsid) != null)
            throw new IllegalStateException("NSID " + nsid + " is already used in " + s.nqn());
        long size = nc.size == null ? 0 : Sizes.parse(nc.size);
        if (nc.path == null || nc.path.isEmpty())
            throw new IllegalArgumentException("namespace " + nsid + " of " + s.nqn() + " has no path");
        UUID uuid = nc.uuid == null ? null : UUID.fromString(nc.uuid);
        TargetNamespace ns = TargetNamespace.open(
                nsid,
                Path.of(nc.path),
                size,
                new TargetNamespace.Options(nc.blockSize, nc.readOnly, nc.direct, nc.force),
                s.nqn(),
                uuid);
        try {
            String earlier = exporterOf(ns.fileKey(), s);
            if (earlier != null) {
                // Two namespaces over one file would alias each other's blocks behind the hosts' backs.
                throw new IllegalStateException("namespace file " + nc.path + " is already " + earlier + "; namespace "
                        + nsid + " of " + s.nqn() + " needs a file of its own");
            }
            if (nc.anaGroup != null) {
                Listener.checkGroup(nc.anaGroup);
                ns.anaGroup(nc.anaGroup);
            }
            s.addNamespace(ns);
        } catch (IOException | RuntimeException e) {
            ns.close();
            throw e;
        }
        nc.nsid = nsid;
        nc.uuid = ns.uuid().toString();
        return ns;
    }

    /** Which namespace already exports the file with this key (in a published subsystem or in {@code opening}), or null. */
    private String exporterOf(Object fileKey, Subsystem opening) throws IOException {
        List<Subsystem> all = new ArrayList<>(subsystems.values());
        if (!all.contains(opening)) all.add(opening);
        for (Subsystem s : all) {
            for (TargetNamespace ns : s.namespaces()) {
                Object key;
                try {
                    key = ns.fileKey();
                } catch (IOException gone) {
                    continue; // its path was removed or renamed: no new namespace can name that file by it
                }
                if (key.equals(fileKey)) return "namespace " + ns.nsid() + " of " + s.nqn();
            }
        }
        return null;
    }

    // ---- live changes (the management API): IllegalStateException for what is taken, IllegalArgumentException for
    // what is invalid ----

    /** Adds a subsystem while the target runs; validated as at start. */
    public Subsystem addSubsystem(TargetConfig.SubsystemConfig sc) throws IOException {
        validate(sc, loopbackOnly);
        if (subsystems.containsKey(sc.nqn)) throw new IllegalStateException("subsystem " + sc.nqn + " already exists");
        Subsystem s = openSubsystem(sc);
        discoveryChanged();
        log.info("subsystem {} added", s.nqn());
        return s;
    }

    /** Deletes a subsystem: its controllers are torn down (their commands end with the connections), then its namespaces close. */
    public void removeSubsystem(String nqn) throws IOException {
        Subsystem s;
        synchronized (this) {
            s = subsystems.get(nqn);
            if (s == null) return;
            Map<String, Subsystem> next = new LinkedHashMap<>(subsystems);
            next.remove(nqn);
            subsystems = next;
        }
        discoveryChanged();
        List<Controller> gone = controllersOf(s, null);
        List<EventExecutor> loops = loopsOf(gone); // before the teardown empties the controllers' queue tables
        for (Controller c : gone) c.tearDown("subsystem " + nqn + " deleted");
        drain(loops);
        s.close();
        log.info("subsystem {} deleted; {} controller(s) torn down", nqn, gone.size());
    }

    /** Adds a namespace (the lowest free NSID unless it names one); connected hosts get the Namespace Attribute Changed notice. */
    public TargetNamespace addNamespace(String nqn, TargetConfig.NamespaceConfig nc) throws IOException {
        Subsystem s = existing(nqn);
        TargetNamespace ns;
        synchronized (s) {
            ns = openNamespace(s, nc, s.freeNsid());
        }
        s.anaChanged(); // a group gained a member
        for (Controller c : controllersOf(s, null)) c.notifyNamespaceChanged(ns.nsid());
        log.info("namespace {} of {} added: {}", ns.nsid(), nqn, ns.path());
        return ns;
    }

    /** Removes a namespace: new commands for it fail with Invalid Namespace, hosts get the notice, then it is flushed and closed. */
    public boolean removeNamespace(String nqn, int nsid) throws IOException {
        Subsystem s = existing(nqn);
        TargetNamespace ns = s.removeNamespace(nsid);
        if (ns == null) return false;
        s.anaChanged();
        List<Controller> cs = controllersOf(s, null);
        for (Controller c : cs) c.notifyNamespaceChanged(nsid);
        drain(loopsOf(cs)); // every queue has finished dispatching to it before its files close
        ns.close();
        log.info("namespace {} of {} removed", nsid, nqn);
        return true;
    }

    /** Grows a namespace; hosts get the notice and read the new size by Identify. */
    public TargetNamespace growNamespace(String nqn, int nsid, long sizeBytes) throws IOException {
        Subsystem s = existing(nqn);
        TargetNamespace ns = s.namespace(nsid);
        if (ns == null) throw new IllegalArgumentException("subsystem " + nqn + " has no namespace " + nsid);
        long before = ns.sizeBytes();
        ns.grow(sizeBytes);
        if (ns.sizeBytes() != before) {
            for (Controller c : controllersOf(s, null)) c.notifyNamespaceChanged(nsid);
            log.info("namespace {} of {} grown from {} to {} bytes", nsid, nqn, before, ns.sizeBytes());
        }
        return ns;
    }

    /** Lets a host connect to a subsystem. */
    public boolean addHost(String nqn, String hostNqn) {
        return addHost(nqn, hostNqn, null, null);
    }

    /**
     * Lets {@code hostNqn} connect; with {@code hostKey}, only after DH-HMAC-CHAP with that key
     * ({@code ctrlKey}, or null: the host may authenticate the target too). Keys given replace the host's
     * earlier ones, for connections made from then on; none given leaves them as they are.
     */
    public boolean addHost(String nqn, String hostNqn, DhchapKey hostKey, DhchapKey ctrlKey) {
        String problem = Nqn.problem(hostNqn);
        if (problem != null) throw new IllegalArgumentException("host NQN: " + problem);
        if (ctrlKey != null && hostKey == null)
            throw new IllegalArgumentException("a controller DH-HMAC-CHAP key needs the host's key too");
        Subsystem s = existing(nqn);
        if (hostKey != null) s.dhchapKeys(hostNqn, hostKey, ctrlKey);
        boolean added = s.addHost(hostNqn);
        if (added) discoveryChanged();
        return added;
    }

    /** Stops a host connecting (Connect then fails with 0x184) and tears down its controllers on that subsystem. */
    public boolean removeHost(String nqn, String hostNqn) {
        Subsystem s = existing(nqn);
        boolean removed = s.removeHost(hostNqn);
        if (removed) discoveryChanged();
        if (!s.allows(hostNqn)) {
            for (Controller c : controllersOf(s, hostNqn)) {
                log.info("host {} removed from {}: tearing down controller {}", hostNqn, nqn, c.id());
                c.tearDown("host " + hostNqn + " removed from " + nqn);
            }
        }
        return removed;
    }

    /** Lets every host connect, or only the allowed ones (controllers of hosts no longer allowed are torn down). */
    public void allowAnyHost(String nqn, boolean any) {
        Subsystem s = existing(nqn);
        anyHostByDefault.remove(nqn); // the operator has said so now
        s.allowAnyHost(any);
        discoveryChanged();
        if (!any) {
            for (Controller c : controllersOf(s, null))
                if (!s.allows(c.hostNqn())) c.tearDown("host " + c.hostNqn() + " no longer allowed on " + nqn);
        }
    }

    /**
     * Makes a subsystem reachable on {@code listen}, binding that address first when the target does not
     * listen there yet; returns the port. A port beyond loopback is refused for a subsystem that lets any
     * host in only because the target was on loopback alone.
     */
    public PortInfo addListener(String nqn, String listen) throws IOException {
        Subsystem s = existing(nqn);
        ListenAddress a = ListenAddress.parse(listen);
        if (!a.isLoopback() && s.allowsAnyHost() && anyHostByDefault.contains(nqn)) {
            throw new IllegalArgumentException("subsystem " + nqn
                    + " lets any host in only because the target listened on loopback alone:"
                    + " allow its hosts (add-host), or allow any host explicitly, before it listens on " + listen);
        }
        PortInfo p;
        synchronized (this) {
            p = ports.find(listen);
            if (p == null) {
                if (a.port() == 0)
                    throw new IllegalArgumentException("name the port to listen on (" + listen + " has port 0)");
                try {
                    p = bind(ports.nextId(), a.text());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while binding " + listen, e);
                }
                if (!a.isLoopback()) loopbackOnly = false;
                log.info("listening on {} (port {})", p.hostPort(), p.portId());
            }
            if (!s.addListener(new Listener(p.portId())))
                throw new IllegalStateException("subsystem " + nqn + " already listens on " + listen);
        }
        discoveryChanged();
        log.info("subsystem {} listens on {}", nqn, p.hostPort());
        return p;
    }

    /** Takes a port from a subsystem: hosts connected through it lose their controllers; the port stays open for the others. */
    public PortInfo removeListener(String nqn, String listen) {
        Subsystem s = existing(nqn);
        PortInfo p = ports.find(listen);
        Listener l = p == null ? null : s.removeListener(p.portId());
        if (l == null) throw new NoSuchElementException("subsystem " + nqn + " does not listen on " + listen);
        discoveryChanged();
        int gone = 0;
        for (Controller c : controllersOf(s, null)) {
            if (c.listener() == l) {
                c.tearDown("subsystem " + nqn + " no longer listens on " + listen);
                gone++;
            }
        }
        log.info("subsystem {} no longer listens on {}; {} controller(s) torn down", nqn, p.hostPort(), gone);
        return p;
    }

    /** Sets the ANA state of one group as hosts on one listener see it; those hosts get the ANA change notice. Returns the port. */
    public PortInfo setAnaState(String nqn, String listen, int group, AnaState state) {
        Subsystem s = existing(nqn);
        Listener.checkGroup(group);
        PortInfo p = ports.find(listen);
        Listener l = p == null ? null : s.listener(p.portId());
        if (l == null) throw new NoSuchElementException("subsystem " + nqn + " does not listen on " + listen);
        if (l.state(group, state)) {
            s.anaChanged();
            for (Controller c : controllersOf(s, null)) if (c.listener() == l) c.notifyAnaChanged();
            log.info("ANA group {} of {} on {} is now {}", group, nqn, p.hostPort(), state.id());
        }
        return p;
    }

    /**
     * Before a planned stop: every listener reads inaccessible (hosts with another path move to it, as
     * Linux's multipath does on the ANA change notice or the first path error), then waits until no
     * Read or Write has arrived for {@code quietMillis} and none is in flight, at most {@code timeoutMillis}.
     * Returns the milliseconds it took.
     */
    public long drainForShutdown(long timeoutMillis, long quietMillis) throws InterruptedException {
        long start = System.nanoTime();
        for (Subsystem s : subsystems.values()) {
            for (Listener l : s.listeners()) l.draining(true);
            s.anaChanged();
            for (Controller c : controllersOf(s, null)) c.notifyAnaChanged();
        }
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        long last = ioCommandsSeen();
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(50); // polling a counter: the hosts' moves send no event to wait on
            long now = ioCommandsSeen();
            if (now != last || inflight.used() > 0) {
                last = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= TimeUnit.MILLISECONDS.toNanos(quietMillis)) {
                break;
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** Reads and Writes dispatched so far, over every controller. */
    private long ioCommandsSeen() {
        long n = 0;
        for (Controller c : controllers.all()) {
            long[] io = c.ioCounters();
            n += io[0] + io[1];
        }
        return n;
    }

    /** The discovery log changed: its generation counter moves and discovery controllers that asked are told. */
    private void discoveryChanged() {
        discoveryGeneration.incrementAndGet();
        for (Controller c : controllers.all()) if (c.isDiscovery()) c.notifyDiscoveryChanged();
    }

    private Subsystem existing(String nqn) {
        Subsystem s = subsystems.get(nqn);
        if (s == null) throw new NoSuchElementException("no subsystem " + nqn);
        return s;
    }

    /** The live controllers of {@code s} (of {@code hostNqn} only, unless null). */
    public List<Controller> controllersOf(Subsystem s, String hostNqn) {
        List<Controller> out = new ArrayList<>();
        for (Controller c : controllers.all()) {
            if (c.subsystem() == s && (hostNqn == null || c.hostNqn().equals(hostNqn))) out.add(c);
        }
        return out;
    }

    /** The event loops the queues of these controllers run on. */
    private static List<EventExecutor> loopsOf(List<Controller> cs) {
        List<EventExecutor> loops = new ArrayList<>();
        for (Controller c : cs) {
            for (QueueSession q : c.queues()) {
                if (q != null && !loops.contains(q.queue().executor()))
                    loops.add(q.queue().executor());
            }
        }
        return loops;
    }

    /** Waits (bounded) until each of these loops has run what was queued on it before now. */
    private static void drain(List<EventExecutor> loops) {
        List<Future<?>> marks = new ArrayList<>();
        for (EventExecutor loop : loops) {
            try {
                marks.add(loop.submit(() -> {}));
            } catch (RejectedExecutionException e) {
                // that loop is shutting down: nothing more runs on it
            }
        }
        for (Future<?> f : marks) {
            try {
                f.get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                log.warn("a queue did not drain within 10 s; closing the namespace anyway");
            }
        }
    }

    /** A secret or key given inline or as @FILE, parsed; the message never repeats it. */
    private static <T> T secret(String value, String what, Function<String, T> parse) {
        try {
            return parse.apply(SecretText.resolve(value));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": " + e.getMessage());
        }
    }

    private static TlsMode tlsMode(TargetConfig cfg, TransportType transport) {
        boolean keys = cfg.subsystems.stream().anyMatch(s -> !s.tlsKeys.isEmpty());
        TlsMode mode = cfg.tls == null ? (keys ? TlsMode.REQUIRED : TlsMode.OFF) : TlsMode.parse(cfg.tls);
        if (mode != TlsMode.OFF && !keys)
            throw new IllegalArgumentException("--tls " + cfg.tls + " needs a key: add --tls-key HOSTNQN=KEY");
        if (mode != TlsMode.OFF && !transport.supportsTls())
            throw new IllegalArgumentException("TLS secures NVMe/TCP only; drop --tls/--tls-key or use -t tcp");
        return mode;
    }

    /**
     * The TLS PSK of an identity a host offers: the host's configured key on that subsystem (on the
     * discovery subsystem, its key on any subsystem), derived for the identity's version and hash.
     */
    private TlsPskDerivation.Derived tlsKeyFor(TlsPskIdentity id) {
        if (id.generated()) return null; // generated PSKs come from secure concatenation, which is not offered
        TlsPskKey key = null;
        if (Nqn.DISCOVERY.equals(id.subsysNqn())) {
            for (Subsystem s : subsystems.values()) if ((key = s.tlsKey(id.hostNqn())) != null) break;
        } else {
            Subsystem s = subsystems.get(id.subsysNqn());
            if (s != null) key = s.tlsKey(id.hostNqn());
        }
        if (key == null || key.cipher() != id.cipher()) return null;
        TlsPskDerivation.Derived d =
                TlsPskDerivation.derive(key, id.hostNqn(), id.subsysNqn(), id.version(), tlsLabels);
        if (id.version() == 1 && !d.identity().equals(id)) {
            // A version 1 digest tells which label encoding the host derived with: accept either.
            TlsPskDerivation.Derived other =
                    TlsPskDerivation.derive(key, id.hostNqn(), id.subsysNqn(), 1, tlsLabels.other());
            if (other.identity().equals(id)) return other;
        }
        return d;
    }

    private void listen(TargetConfig cfg) throws IOException, InterruptedException {
        commands = new CommandSet(this, inflight);
        for (int i = 0; i < cfg.listen.size(); i++)
            bind(i + 1, cfg.listen.get(i).trim());
    }

    /** Starts listening on {@code spec} as port {@code portId}. */
    private PortInfo bind(int portId, String spec) throws IOException, InterruptedException {
        InetSocketAddress addr = ListenAddress.parse(spec).resolve();
        InetSocketAddress got;
        try {
            got = rdma != null
                    ? rdma.listen(addr, queue -> new QueueSession(queue, commands, portId))
                    : tcp.listen(addr, queue -> new QueueSession(queue, commands, portId));
        } catch (Exception e) {
            if (e instanceof InterruptedException) throw (InterruptedException) e;
            if (addressInUse(e)) {
                throw new IOException(
                        "cannot listen on " + spec
                                + ": the address is in use (another target running? pick another port with --listen)",
                        e);
            }
            throw new IOException("cannot listen on " + spec + ": " + e.getMessage(), e);
        }
        bound.add(got);
        PortInfo p = new PortInfo(
                portId,
                transport,
                got.getAddress().getHostAddress(),
                got.getPort(),
                got.getAddress() instanceof Inet6Address,
                tlsMode);
        ports.add(p, spec);
        return p;
    }

    public List<InetSocketAddress> boundAddresses() {
        return List.copyOf(bound);
    }

    @Override
    public Subsystem subsystem(String nqn) {
        if (Nqn.DISCOVERY.equals(nqn)) return discovery;
        return subsystems.get(nqn);
    }

    @Override
    public Collection<Subsystem> subsystems() {
        return subsystems.values();
    }

    @Override
    public ControllerRegistry controllers() {
        return controllers;
    }

    @Override
    public TargetLimits limits() {
        return limits;
    }

    /** What NVMe/TCP back-pressure saw: connections paused because their host does not read, peak unsent replies. */
    public TcpBackPressure tcpBackPressure() {
        return tcp == null ? null : tcp.backPressure();
    }

    /** The target-wide bound on data in flight (and what it saw). */
    public InflightBudget inflight() {
        return inflight;
    }

    @Override
    public List<PortInfo> ports() {
        return ports.all();
    }

    /** The listen address a port was configured with (as the saved configuration names it). */
    public String portSpec(int portId) {
        return ports.spec(portId);
    }

    public PortInfo port(int portId) {
        return ports.byId(portId);
    }

    @Override
    public long discoveryGeneration() {
        return discoveryGeneration.get();
    }

    /** Stops accepting, drops every controller, flushes and closes the namespaces. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (tcp != null) tcp.stopAccepting();
        if (rdma != null) rdma.stopAccepting();
        for (Controller c : controllers.all()) {
            for (QueueSession q : c.queues()) {
                if (q != null) q.queue().executor().execute(() -> q.queue().close("target shutting down"));
            }
        }
        if (tcp != null) tcp.close();
        if (rdma != null) rdma.close();
        for (Subsystem s : subsystems.values()) {
            try {
                s.close();
            } catch (IOException e) {
                log.error("flushing subsystem {} on shutdown failed", s.nqn(), e);
            }
        }
    }
}
