package io.jbof.target;

import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.tls.TlsPskKey;
import io.jbof.target.transport.tcp.TcpBackPressure;
import io.jbof.util.SecretText;
import java.util.HashMap;
import java.util.function.Function;
import io.jbof.nvme.Nqn;
import io.jbof.target.config.ListenAddress;
import io.jbof.transport.TransportType;
import io.netty.channel.unix.Errors;
import io.jbof.util.Sizes;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.controller.CommandSet;
import io.jbof.target.controller.Controller;
import io.jbof.target.controller.InflightBudget;
import io.jbof.target.controller.ControllerRegistry;
import io.jbof.target.controller.PortInfo;
import io.jbof.target.controller.QueueSession;
import io.jbof.target.controller.TargetContext;
import io.jbof.target.controller.TargetLimits;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.target.transport.rdma.RdmaTargetOptions;
import io.jbof.target.transport.rdma.RdmaTargetTransport;
import io.jbof.transport.tcp.Pdu;
import io.jbof.target.transport.tcp.TcpTargetOptions;
import io.jbof.target.transport.tcp.TcpTargetTransport;
import io.jbof.transport.tcp.tls.TlsMode;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskIdentity;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
import java.util.Set;

/**
 * A running jbof target: subsystems with file-backed namespaces, the discovery subsystem, and the
 * transport listeners. Built from a {@link TargetConfig}; closed by {@link #close()} (stop accepting,
 * drop controllers, flush every namespace, close the files).
 */
public final class TargetServer implements TargetContext, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TargetServer.class);

    private final Map<String, Subsystem> subsystems = new LinkedHashMap<>();
    private final Subsystem discovery = new Subsystem(Nqn.DISCOVERY, "jbof discovery", true, Set.of());
    private final TargetLimits limits;
    private final ControllerRegistry controllers;
    private final List<PortInfo> ports = new ArrayList<>();
    private final List<InetSocketAddress> bound = new ArrayList<>();
    private final TcpTargetTransport tcp;
    private final TransportType transport;
    private final TlsMode tlsMode;
    private final TlsPskDerivation.Labels tlsLabels;
    private final RdmaTargetTransport rdma;
    private final InflightBudget inflight;
    private volatile boolean closed;

    private TargetServer(TargetConfig cfg) throws IOException {
        this.transport = TransportType.parse(cfg.transport);
        this.tlsMode = tlsMode(cfg, transport);
        this.tlsLabels = TlsPskDerivation.Labels.parse(cfg.tlsHkdf == null ? "legacy" : cfg.tlsHkdf);
        this.limits = new TargetLimits(cfg.maxIoQueues, cfg.queueDepth, cfg.inCapsuleData, 1 << 20, cfg.maxControllers, true);
        this.controllers = new ControllerRegistry(cfg.maxControllers);
        this.inflight = new InflightBudget(cfg.maxInflightBytes == null ? 0 : Sizes.parse(cfg.maxInflightBytes));
        int inCapsule = Math.max(cfg.inCapsuleData, Pdu.ADMIN_IN_CAPSULE_DATA);
        if (transport == TransportType.RDMA) {
            this.tcp = null;
            this.rdma = new RdmaTargetTransport(new RdmaTargetOptions(cfg.inCapsuleData, cfg.queueDepth, cfg.maxIoQueues,
                    RdmaTargetOptions.DEFAULT_BUFFER_SIZE, RdmaTargetOptions.DEFAULT_BUFFERS), limits.maxTransferBytes(), cfg.ioThreads);
        } else {
            this.rdma = null;
            this.tcp = new TcpTargetTransport(new TcpTargetOptions(inCapsule, 128 * 1024, cfg.queueDepth, cfg.digests)
                    .withTls(tlsMode, this::tlsKeyFor), cfg.ioThreads);
        }
    }

    /** Validates the configuration, opens every namespace and starts listening. */
    public static TargetServer start(TargetConfig cfg) throws IOException, InterruptedException {
        validate(cfg);
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
            if (t instanceof Errors.NativeIoException && ((Errors.NativeIoException) t).expectedErr() == -EADDRINUSE) return true;
        }
        return false;
    }

    private static void validate(TargetConfig cfg) {
        TransportType.parse(cfg.transport); // an unknown name fails here, listing the known ones
        if (cfg.listen.isEmpty()) throw new IllegalArgumentException("no listen address given (e.g. --listen 127.0.0.1:4420)");
        if (cfg.subsystems.isEmpty()) throw new IllegalArgumentException("no subsystem configured (give --nqn and --namespace)");
        if (cfg.queueDepth < 2 || cfg.queueDepth > 65536) throw new IllegalArgumentException("queue depth must be 2..65536, not " + cfg.queueDepth);
        if (cfg.maxControllers < 1 || cfg.maxControllers > 0xFFEF) {
            throw new IllegalArgumentException("--max-controllers must be 1..65519 (controller IDs), not " + cfg.maxControllers);
        }
        if (cfg.ioThreads < 1) throw new IllegalArgumentException("--io-threads must be at least 1, not " + cfg.ioThreads);
        if (cfg.maxIoQueues < 1 || cfg.maxIoQueues > 65535) throw new IllegalArgumentException("max I/O queues must be 1..65535, not " + cfg.maxIoQueues);
        if (cfg.inCapsuleData < 0 || cfg.inCapsuleData > 1 << 20 || cfg.inCapsuleData % 16 != 0) {
            throw new IllegalArgumentException("in-capsule data size must be a multiple of 16 up to 1 MiB, not " + cfg.inCapsuleData);
        }
        boolean loopbackOnly = cfg.listen.stream().map(ListenAddress::parse).allMatch(ListenAddress::isLoopback);
        Set<String> nqns = new HashSet<>();
        for (TargetConfig.SubsystemConfig s : cfg.subsystems) {
            String problem = Nqn.problem(s.nqn);
            if (problem != null) throw new IllegalArgumentException("subsystem NQN: " + problem);
            if (Nqn.DISCOVERY.equals(s.nqn)) throw new IllegalArgumentException("the discovery NQN cannot be used for a subsystem");
            if (!nqns.add(s.nqn)) throw new IllegalArgumentException("subsystem " + s.nqn + " is configured twice");
            for (String h : s.hosts) {
                String hp = Nqn.problem(h);
                if (hp != null) throw new IllegalArgumentException("allowed host NQN: " + hp);
            }
            if (s.allowAnyHost == null && s.hosts.isEmpty() && s.dhchapSecrets.isEmpty() && s.tlsKeys.isEmpty() && !loopbackOnly) {
                throw new IllegalArgumentException("subsystem " + s.nqn + " listens beyond loopback but names no allowed hosts:"
                        + " add --allow-host HOSTNQN (or --allow-any-host to let every host in)");
            }
            for (String h : s.tlsKeys.keySet()) {
                String hp = Nqn.problem(h);
                if (hp != null) throw new IllegalArgumentException("--tls-key host NQN: " + hp);
            }
            if (s.namespaces.isEmpty()) throw new IllegalArgumentException("subsystem " + s.nqn + " has no namespace (add --namespace PATH:SIZE)");
            for (String h : s.dhchapCtrlSecrets.keySet()) {
                if (!s.dhchapSecrets.containsKey(h)) {
                    throw new IllegalArgumentException("--dhchap-ctrl-secret for " + h + " needs a --dhchap-secret for that host too");
                }
            }
        }
    }

    private void openSubsystems(TargetConfig cfg) throws IOException {
        Map<Object, String> files = new HashMap<>();
        for (TargetConfig.SubsystemConfig sc : cfg.subsystems) {
            boolean any = sc.allowAnyHost != null ? sc.allowAnyHost : sc.hosts.isEmpty() && sc.dhchapSecrets.isEmpty() && sc.tlsKeys.isEmpty();
            Set<String> hosts = new HashSet<>(sc.hosts);
            hosts.addAll(sc.dhchapSecrets.keySet());
            hosts.addAll(sc.tlsKeys.keySet());
            Subsystem s = new Subsystem(sc.nqn, sc.model, any, hosts);
            for (Map.Entry<String, String> e : sc.tlsKeys.entrySet()) {
                s.tlsKey(e.getKey(), secret(e.getValue(), "--tls-key for " + e.getKey(), TlsPskKey::parse));
            }
            for (Map.Entry<String, String> e : sc.dhchapSecrets.entrySet()) {
                String ctrl = sc.dhchapCtrlSecrets.get(e.getKey());
                s.dhchapKeys(e.getKey(), secret(e.getValue(), "--dhchap-secret for " + e.getKey(), DhchapKey::parse),
                        ctrl == null ? null : secret(ctrl, "--dhchap-ctrl-secret for " + e.getKey(), DhchapKey::parse));
            }
            subsystems.put(s.nqn(), s);
            int next = 1;
            for (TargetConfig.NamespaceConfig nc : sc.namespaces) {
                int nsid = nc.nsid != null ? nc.nsid : next;
                if (nsid < 1 || nsid == 0xFFFFFFFF) throw new IllegalArgumentException("NSID " + nsid + " is invalid");
                long size = nc.size == null ? 0 : Sizes.parse(nc.size);
                if (nc.path == null || nc.path.isEmpty()) throw new IllegalArgumentException("namespace " + nsid + " of " + sc.nqn + " has no path");
                TargetNamespace ns = TargetNamespace.open(nsid, Path.of(nc.path), size,
                        new TargetNamespace.Options(nc.blockSize, nc.readOnly, nc.direct, nc.force), sc.nqn);
                String earlier = files.putIfAbsent(ns.fileKey(), "namespace " + nsid + " of " + sc.nqn);
                if (earlier != null) {
                    ns.close();
                    // Two namespaces over one file would alias each other's blocks behind the hosts' backs.
                    throw new IllegalArgumentException("namespace file " + nc.path + " is already " + earlier
                            + "; namespace " + nsid + " of " + sc.nqn + " needs a file of its own");
                }
                s.addNamespace(ns);
                next = nsid + 1;
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
        if (mode != TlsMode.OFF && !keys) throw new IllegalArgumentException("--tls " + cfg.tls + " needs a key: add --tls-key HOSTNQN=KEY");
        if (mode != TlsMode.OFF && !transport.supportsTls()) throw new IllegalArgumentException("TLS secures NVMe/TCP only; drop --tls/--tls-key or use -t tcp");
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
        TlsPskDerivation.Derived d = TlsPskDerivation.derive(key, id.hostNqn(), id.subsysNqn(), id.version(), tlsLabels);
        if (id.version() == 1 && !d.identity().equals(id)) {
            // A version 1 digest tells which label encoding the host derived with: accept either.
            TlsPskDerivation.Derived other = TlsPskDerivation.derive(key, id.hostNqn(), id.subsysNqn(), 1, tlsLabels.other());
            if (other.identity().equals(id)) return other;
        }
        return d;
    }

    private void listen(TargetConfig cfg) throws IOException, InterruptedException {
        CommandSet commands = new CommandSet(this, inflight);
        int portId = 1;
        for (String l : cfg.listen) {
            ListenAddress a = ListenAddress.parse(l);
            InetSocketAddress addr = a.resolve();
            InetSocketAddress got;
            try {
                got = rdma != null ? rdma.listen(addr, queue -> new QueueSession(queue, commands))
                        : tcp.listen(addr, queue -> new QueueSession(queue, commands));
            } catch (Exception e) {
                if (addressInUse(e)) {
                    throw new IOException("cannot listen on " + l + ": the address is in use (another target running? pick another port with --listen)", e);
                }
                throw new IOException("cannot listen on " + l + ": " + e.getMessage(), e);
            }
            bound.add(got);
            ports.add(new PortInfo(portId++, transport, got.getAddress().getHostAddress(), got.getPort(), got.getAddress() instanceof Inet6Address, tlsMode));
        }
    }

    public List<InetSocketAddress> boundAddresses() {
        return List.copyOf(bound);
    }

    @Override
    public Subsystem subsystem(String nqn) {
        if (Nqn.DISCOVERY.equals(nqn)) return discovery;
        return subsystems.get(nqn);
    }

    @Override public Collection<Subsystem> subsystems() { return subsystems.values(); }
    @Override public ControllerRegistry controllers() { return controllers; }
    @Override public TargetLimits limits() { return limits; }

    /** What NVMe/TCP back-pressure saw: connections paused because their host does not read, peak unsent replies. */
    public TcpBackPressure tcpBackPressure() {
        return tcp == null ? null : tcp.backPressure();
    }

    /** The target-wide bound on data in flight (and what it saw). */
    public InflightBudget inflight() { return inflight; }
    @Override public List<PortInfo> ports() { return ports; }
    @Override public long discoveryGeneration() { return 1; }

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
