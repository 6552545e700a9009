package io.jbof.target.cli;

import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.metrics.MetricsServer;
import io.jbof.target.mgmt.JsonRpcDispatcher;
import io.jbof.target.mgmt.ManagementService;
import io.jbof.target.mgmt.RpcHttpServer;
import io.jbof.target.mgmt.RpcSocketServer;
import io.jbof.target.namespace.DirectIoRing;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.util.SecretText;
import io.jbof.util.Sizes;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/** {@code jbof-target}: the target daemon, in the foreground. */
@Command(
        name = "jbof-target",
        mixinStandardHelpOptions = true,
        version = "jbof-target 0.1.0",
        description = "Exports files and block devices as NVMe namespaces over NVMe/TCP or NVMe/RDMA.",
        footer = {
            "",
            "Examples:",
            "  jbof-target --listen 127.0.0.1:4420 --nqn nqn.2024-01.io.jbof:vol1 --namespace /srv/vol1.img:1G",
            "  jbof-target --listen 127.0.0.1:4420 --nqn nqn.2024-01.io.jbof:vol1 --namespace /dev/nvme1n1,direct",
            "  jbof-target --listen 0.0.0.0:4420 --nqn nqn.2024-01.io.jbof:vol1 --namespace /srv/vol1.img:1G,bs=512 \\",
            "              --allow-host nqn.2014-08.org.nvmexpress:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427",
            "  jbof-target --config /etc/jbof/target.json",
            "  jbof-target --config /etc/jbof/target.json --rpc-socket /run/jbof/jbof.sock   # then: scripts/jbof-ctl --socket /run/jbof/jbof.sock ls"
        })
public final class TargetMain implements Callable<Integer> {
    @Option(
            names = {"-l", "--listen"},
            paramLabel = "HOST:PORT",
            description = "Address to listen on (repeatable; default 127.0.0.1:4420).")
    List<String> listen = new ArrayList<>();

    @Option(
            names = {"-n", "--nqn"},
            paramLabel = "NQN",
            description = "Subsystem NQN (repeatable; namespaces go to the first unless they say nqn=).")
    List<String> nqns = new ArrayList<>();

    @Option(
            names = "--namespace",
            paramLabel = "PATH[:SIZE][,bs=512|4096][,ro][,direct][,force][,nsid=N][,nqn=NQN]",
            description = {
                "A namespace backed by a regular file (created with SIZE, e.g. 64M, 1G, when absent) or a block device (its own size;"
                        + " held exclusively while exported, so a mounted or claimed device is refused unless ,force). NSIDs count from 1 in order.",
                "  ,direct: O_DIRECT, past the target's page cache.  ,ro: read-only.  ,force: export a block device that is in use."
            })
    List<String> namespaces = new ArrayList<>();

    @Option(names = "--allow-host", paramLabel = "HOSTNQN", description = "Host NQN allowed to connect (repeatable).")
    List<String> allowHosts = new ArrayList<>();

    @Option(
            names = "--allow-any-host",
            description = "Let any host connect (the default only when listening on loopback).")
    boolean allowAnyHost;

    @Option(
            names = "--max-inflight-bytes",
            paramLabel = "SIZE",
            description =
                    "Bound on the data of Read/Write commands in progress, target-wide (e.g. 256M); commands beyond it wait (default: none).")
    String maxInflightBytes;

    @Option(
            names = "--dhchap-secret",
            paramLabel = "HOSTNQN=SECRET",
            description =
                    "Require DH-HMAC-CHAP of this host with SECRET (DHHC-1:..., as nvme gen-dhchap-key prints, or @FILE); repeatable. The host is allowed.")
    List<String> dhchapSecrets = new ArrayList<>();

    @Option(
            names = "--dhchap-ctrl-secret",
            paramLabel = "HOSTNQN=SECRET",
            description =
                    "The controller's secret for this host: lets the host authenticate the target too (bidirectional); repeatable.")
    List<String> dhchapCtrlSecrets = new ArrayList<>();

    @Option(
            names = "--tls-key",
            paramLabel = "HOSTNQN=KEY",
            description =
                    "This host's configured TLS PSK (NVMeTLSkey-1:..., as nvme gen-tls-key or jbof gen-tls-key prints,"
                            + " or @FILE); repeatable. The host is allowed.")
    List<String> tlsKeys = new ArrayList<>();

    @Option(
            names = "--tls",
            paramLabel = "off|optional|required",
            description =
                    "NVMe/TCP over TLS 1.3 (PSK): required (the default once a --tls-key is given), optional (TLS when the host starts it) or off.")
    String tls;

    @Option(
            names = "--tls-hkdf",
            paramLabel = "legacy|rfc8446",
            description =
                    "HKDF label encoding of TLS PSK derivations: legacy (libnvme 1.x / nvme-cli 2.x; default) or rfc8446. "
                            + "Version 1 identities of hosts using the other one are recognised by their digest.")
    String tlsHkdf;

    @Option(
            names = {"-t", "--transport"},
            paramLabel = "tcp|rdma",
            description = "Transport: tcp (default) or rdma (RDMA CM; listen on an RDMA device's address).")
    String transport;

    @Option(names = "--max-io-queues", paramLabel = "N", description = "I/O queues per controller (default: cores).")
    Integer maxIoQueues;

    @Option(names = "--queue-depth", paramLabel = "N", description = "Entries per I/O queue (default 128).")
    Integer queueDepth;

    @Option(names = "--io-threads", paramLabel = "N", description = "Event-loop threads (default: cores).")
    Integer ioThreads;

    @Option(
            names = "--in-capsule-data",
            paramLabel = "BYTES",
            description = "In-capsule data accepted on I/O queues (default 16384, as Linux's nvmet-tcp).")
    Integer inCapsule;

    @Option(names = "--max-controllers", paramLabel = "N", description = "Controllers alive at once (default 1024).")
    Integer maxControllers;

    @Option(names = "--no-digests", description = "Refuse NVMe/TCP header and data digests.")
    boolean noDigests;

    @Option(
            names = {"-c", "--config"},
            paramLabel = "FILE",
            description = {
                "JSON configuration file (flags given as well override its settings). Changes made through the management API are saved"
                        + " back to it, atomically, before each call returns; with --rpc-socket it may not exist yet (the target starts empty)."
            })
    Path config;

    @Option(
            names = "--rpc-socket",
            paramLabel = "PATH|none",
            description = {
                "Serve the management API (JSON-RPC 2.0; scripts/jbof-ctl) on this Unix socket, mode 0600. The target may then start"
                        + " with no subsystem. Default when run as root: /run/jbof/target-PORT.sock (PORT: the first listen port); none: no API."
            })
    String rpcSocket;

    @Option(
            names = "--rpc-listen",
            paramLabel = "HOST:PORT",
            description =
                    "Also serve the management API over HTTP(S) here, for a cluster manager on another host: POST JSON-RPC with"
                            + " 'Authorization: Bearer TOKEN'. Needs --rpc-token; any address but loopback needs --rpc-tls-cert/--rpc-tls-key too.")
    String rpcListen;

    @Option(
            names = "--rpc-token",
            paramLabel = "TOKEN|@FILE",
            description = "The bearer token --rpc-listen requires (16 characters or more; @FILE keeps it out of ps).")
    String rpcToken;

    @Option(
            names = "--rpc-tls-cert",
            paramLabel = "CERT.pem",
            description = "TLS certificate (chain) for --rpc-listen, PEM.")
    Path rpcTlsCert;

    @Option(names = "--rpc-tls-key", paramLabel = "KEY.pem", description = "Its private key, PEM (unencrypted PKCS#8).")
    Path rpcTlsKey;

    @Option(
            names = "--cntlid-range",
            paramLabel = "MIN-MAX",
            description =
                    "Controller IDs this target hands out (as nvmet's cntlid_min/max; default 1-65519): give each target serving one subsystem its own range.")
    String cntlidRange;

    @Option(
            names = "--metrics",
            paramLabel = "HOST:PORT",
            description =
                    "Serve Prometheus metrics at http://HOST:PORT/metrics (I/O per namespace and operation, latency"
                            + " histograms, errors by status, controllers, queues, connections, data in flight).")
    String metrics;

    @Option(
            names = "--drain-timeout",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description =
                    "On SIGTERM, first mark every listener ANA inaccessible and wait (up to this long) until hosts stop sending"
                            + " I/O here, so multipath hosts move to their other paths before the target goes (default 0: stop at once).")
    int drainTimeout;

    @Option(
            names = {"-v", "--verbose"},
            description = "Log connections and protocol detail to stderr.")
    boolean verbose;

    /** No Read or Write for this long after the listeners went inaccessible: the hosts have moved. */
    static final long DRAIN_QUIET_MILLIS = 1000;

    public static void main(String[] args) {
        boolean verbose = false;
        for (String a : args) if (a.equals("-v") || a.equals("--verbose")) verbose = true;
        Logging.configure(verbose);
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new TargetMain());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("jbof-target: " + ex.getMessage());
            if (ex.getCause() != null
                    && ex.getCause().getMessage() != null
                    && !ex.getMessage().contains(ex.getCause().getMessage())) {
                cmd.getErr().println("  cause: " + ex.getCause().getMessage());
            }
            return 2;
        });
        return cl;
    }

    TargetConfig buildConfig() throws Exception {
        boolean fresh = config != null && managed() && !Files.exists(config);
        TargetConfig cfg = config != null && !fresh ? TargetConfig.read(config) : new TargetConfig();
        if (cntlidRange != null) cfg.cntlidRange = cntlidRange;
        if (!listen.isEmpty()) cfg.listen = new ArrayList<>(listen);
        if (cfg.listen.isEmpty()) cfg.listen.add("127.0.0.1:4420");
        if (transport != null) cfg.transport = transport;
        if (maxIoQueues != null) cfg.maxIoQueues = maxIoQueues;
        if (queueDepth != null) cfg.queueDepth = queueDepth;
        if (ioThreads != null) cfg.ioThreads = ioThreads;
        if (inCapsule != null) cfg.inCapsuleData = inCapsule;
        if (maxControllers != null) cfg.maxControllers = maxControllers;
        if (noDigests) cfg.digests = false;
        if (maxInflightBytes != null) cfg.maxInflightBytes = maxInflightBytes;
        if (tls != null) cfg.tls = tls;
        if (tlsHkdf != null) cfg.tlsHkdf = tlsHkdf;
        Map<String, TargetConfig.SubsystemConfig> byNqn = new LinkedHashMap<>();
        for (TargetConfig.SubsystemConfig s : cfg.subsystems) byNqn.put(s.nqn, s);
        for (String n : nqns)
            byNqn.computeIfAbsent(n, k -> {
                TargetConfig.SubsystemConfig s = new TargetConfig.SubsystemConfig();
                s.nqn = k;
                cfg.subsystems.add(s);
                return s;
            });
        for (String text : namespaces) {
            NamespaceSpec spec = NamespaceSpec.parse(text);
            String nqn = spec.nqn != null ? spec.nqn : (nqns.isEmpty() ? null : nqns.get(0));
            if (nqn == null) {
                if (cfg.subsystems.size() == 1) nqn = cfg.subsystems.get(0).nqn;
                else
                    throw new IllegalArgumentException(
                            "--namespace " + text + " names no subsystem: give --nqn NQN first");
            }
            TargetConfig.SubsystemConfig s = byNqn.get(nqn);
            if (s == null)
                throw new IllegalArgumentException(
                        "--namespace " + text + " names subsystem " + nqn + ", which no --nqn declares");
            s.namespaces.add(spec.ns);
        }
        for (TargetConfig.SubsystemConfig s : cfg.subsystems) {
            if (nqns.contains(s.nqn) || config == null) {
                s.hosts.addAll(allowHosts);
                if (allowAnyHost) s.allowAnyHost = true;
                for (String e : dhchapSecrets) put(s.dhchapSecrets, e, "--dhchap-secret");
                for (String e : dhchapCtrlSecrets) put(s.dhchapCtrlSecrets, e, "--dhchap-ctrl-secret");
                for (String e : tlsKeys) put(s.tlsKeys, e, "--tls-key");
            }
        }
        return cfg;
    }

    /** A management API was asked for: the target may start with nothing to export yet. */
    private boolean managed() {
        return (rpcSocket != null && !"none".equals(rpcSocket)) || rpcListen != null;
    }

    /** The management API on the socket asked for (or the default one, as root); null when there is none. */
    private RpcSocketServer startManagement(ManagementService m, TargetServer server) throws IOException {
        Path socket;
        if ("none".equals(rpcSocket)) return null;
        if (rpcSocket != null) {
            socket = Path.of(rpcSocket);
        } else if (isRoot()) {
            socket = Path.of(
                    "/run/jbof", "target-" + server.boundAddresses().get(0).getPort() + ".sock");
        } else {
            return null;
        }
        return RpcSocketServer.start(socket, new JsonRpcDispatcher(m));
    }

    private static boolean isRoot() {
        try {
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    private static void put(Map<String, String> m, String entry, String option) {
        int eq = entry.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException(option + " takes HOSTNQN="
                    + (option.startsWith("--tls") ? "KEY" : "SECRET") + ", not '"
                    + entry.replaceAll("DHHC-1:.*", "DHHC-1:...").replaceAll("NVMeTLSkey-1:.*", "NVMeTLSkey-1:...")
                    + "'");
        }
        m.put(entry.substring(0, eq), entry.substring(eq + 1));
    }

    @Override
    public Integer call() throws Exception {
        TargetConfig cfg = buildConfig();
        TargetServer server = TargetServer.start(cfg, managed());
        RpcSocketServer rpc = null;
        RpcHttpServer http = null;
        MetricsServer prometheus = null;
        try {
            ManagementService m = new ManagementService(server, cfg, config);
            rpc = startManagement(m, server);
            if (rpcListen != null)
                http = RpcHttpServer.start(
                        rpcListen, SecretText.resolve(rpcToken), rpcTlsCert, rpcTlsKey, new JsonRpcDispatcher(m));
            if (metrics != null) prometheus = MetricsServer.start(metrics, server);
        } catch (IOException | RuntimeException e) {
            if (http != null) http.close();
            if (rpc != null) rpc.close();
            server.close();
            throw e;
        }
        CountDownLatch stop = new CountDownLatch(1);
        // SIGTERM / SIGINT: a clean stop that exits 0 (a JVM shutdown hook alone would exit 143).
        for (String sig : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(sig), s -> stop.countDown());
        }
        StringBuilder line = new StringBuilder("jbof-target listening on");
        for (InetSocketAddress a : server.boundAddresses())
            line.append(' ')
                    .append(cfg.transport)
                    .append("://")
                    .append(a.getAddress().getHostAddress())
                    .append(':')
                    .append(a.getPort());
        for (Subsystem s : server.subsystems()) {
            line.append(" | ").append(s.nqn());
            for (TargetNamespace ns : s.namespaces()) {
                line.append(String.format(
                        " ns%d=%s(%s,%dB%s%s%s)",
                        ns.nsid(),
                        ns.path(),
                        Sizes.format(ns.sizeBytes()),
                        ns.blockSize(),
                        ns.blockDevice() ? ",block device" : "",
                        ns.direct() ? ",direct" : "",
                        ns.readOnly() ? ",ro" : ""));
            }
        }
        if (server.subsystems().stream().anyMatch(s -> s.namespaces().stream().anyMatch(TargetNamespace::direct)))
            line.append(" | direct I/O: ").append(DirectIoRing.engine());
        if (rpc != null) line.append(" | management API on ").append(rpc.path());
        if (http != null)
            line.append(" | management API on ")
                    .append(rpcTlsCert != null ? "https://" : "http://")
                    .append(http.address().getAddress().getHostAddress())
                    .append(':')
                    .append(http.address().getPort());
        if (prometheus != null)
            line.append(" | metrics on http://")
                    .append(metrics.substring(0, metrics.lastIndexOf(':') + 1))
                    .append(prometheus.port())
                    .append("/metrics");
        System.out.println(line);
        System.out.flush();
        SystemdNotify.send("READY=1\nSTATUS=" + line);
        stop.await();
        SystemdNotify.send("STOPPING=1");
        if (drainTimeout > 0) {
            System.err.println("jbof-target: draining: every listener is ANA inaccessible; waiting up to "
                    + drainTimeout + " s for hosts to move");
            long ms = server.drainForShutdown(drainTimeout * 1000L, DRAIN_QUIET_MILLIS);
            System.err.println("jbof-target: drained in " + ms + " ms");
        }
        System.err.println("jbof-target: stopping: closing connections, flushing namespaces");
        if (prometheus != null) prometheus.close();
        if (http != null) http.close();
        if (rpc != null) rpc.close();
        server.close();
        System.err.println("jbof-target: stopped");
        return 0;
    }
}
