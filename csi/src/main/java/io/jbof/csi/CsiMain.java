package io.jbof.csi;

import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code jbof-csi}: the CSI driver's process, serving the Identity service and, by mode, the Controller and Node services. */
@Command(
        name = "jbof-csi",
        mixinStandardHelpOptions = true,
        version = IdentityService.DRIVER_NAME + " " + IdentityService.VERSION,
        description = {
            "The jbof CSI driver: creates, deletes, grows and publishes volumes on jbof targets (storage hosts)",
            "through their management API (controller), and attaches, formats and mounts them on nodes (node),",
            "for Kubernetes or any CSI orchestrator. Runs in the foreground."
        },
        footer = {
            "",
            "Examples:",
            "  jbof-csi --endpoint unix:///csi/csi.sock --mode controller \\",
            "      --storage-host s1=https://storage1:4430,token=@/etc/jbof/s1.token,cacert=/etc/jbof/s1-ca.pem,portal=10.0.0.1:4420 \\",
            "      --storage-host s2=unix:///run/jbof/target-4420.sock,portal=10.0.0.2:4420,capacity=2T",
            "  jbof-csi --endpoint unix:///var/lib/kubelet/plugins/csi.jbof.io/csi.sock --mode node --attach kernel",
            "  jbof-csi call --endpoint unix:///csi/csi.sock Identity GetPluginInfo   # one RPC, as kubelet makes it (call --help)"
        })
public final class CsiMain implements Callable<Integer> {
    @Option(
            names = "--endpoint",
            required = true,
            paramLabel = "unix:///PATH",
            description = "The Unix socket to serve CSI on.")
    String endpoint;

    @Option(
            names = "--mode",
            defaultValue = "all",
            paramLabel = "MODE",
            description = "controller, node, or all (default): which services to serve beside Identity.")
    String mode;

    @Option(
            names = "--storage-host",
            paramLabel = "NAME=ENDPOINT[,token=@FILE][,cacert=PEM][,portal=HOST:PORT]...[,dir=PATH][,capacity=SIZE]",
            description = {
                "Controller: a jbof target to place volumes on (repeatable; the first with room gets a new volume).",
                "ENDPOINT: its management API, unix:///PATH or https://HOST:PORT (token=TOKEN or @FILE; cacert: the CA of its certificate).",
                "portal: where hosts connect to it (NVMe/TCP); dir: folder for volume files (default "
                        + StorageHost.DEFAULT_DIR + ");",
                "capacity: most bytes of volumes to place there (default: its free space)."
            })
    List<String> storageHosts = new ArrayList<>();

    @Option(
            names = "--node-id",
            paramLabel = "HOSTNQN",
            description = "Node: this node's host NQN, its node ID (default: the contents of /etc/nvme/hostnqn).")
    String nodeId;

    @Option(
            names = "--attach",
            defaultValue = "jbof",
            paramLabel = "kernel|jbof",
            description = {
                "How nodes attach volumes: jbof (default: a jbof mount and a loop device, no kernel NVMe-oF needed;",
                "volumes grow offline) or kernel (the node's nvme-tcp to every portal, multipath; volumes grow online).",
                "Give the controller the same value as the nodes: it says which expansion the driver offers."
            })
    String attach;

    @Option(
            names = "--state-dir",
            defaultValue = "/var/lib/jbof-csi",
            paramLabel = "DIR",
            description =
                    "Node: where its volumes' jbof mounts and what each holds are kept (default: ${DEFAULT-VALUE}).")
    Path stateDir;

    @Option(
            names = "--jbof",
            paramLabel = "COMMAND",
            description =
                    "Node: the jbof launcher 'jbof mount' runs with (default: the one beside scripts/jbof-csi, else jbof on PATH).")
    String jbofCommand;

    @Option(names = "--verbose", description = "Log each call.")
    boolean verbose;

    @Override
    public Integer call() throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "debug" : "info");
        System.setProperty("org.slf4j.simpleLogger.log.io.grpc", "warn");
        List<ServerServiceDefinition> services = new ArrayList<>();
        List<String> names = new ArrayList<>(List.of("Identity"));
        try {
            if (!List.of("controller", "node", "all").contains(mode)) {
                throw new IllegalArgumentException("--mode " + mode + ": controller, node or all");
            }
            if (!List.of("jbof", "kernel").contains(attach)) {
                throw new IllegalArgumentException("--attach " + attach + ": kernel or jbof");
            }
            services.add(IdentityService.bind(attach.equals("kernel")));
            if (!mode.equals("node")) {
                List<StorageHost> hosts = new ArrayList<>();
                for (String s : storageHosts) hosts.add(StorageHost.parse(s));
                if (hosts.isEmpty())
                    throw new IllegalArgumentException("--mode " + mode + " needs at least one --storage-host");
                services.add(new ControllerService(hosts).bind());
                names.add("Controller");
            }
            if (!mode.equals("controller")) {
                String node = nodeId();
                NodeService ns = attach.equals("kernel")
                        ? new NodeService(node, stateDir, dir -> new KernelNvmeAttacher(node))
                        : new NodeService(node, stateDir, List.of(jbofLauncher()));
                services.add(ns.bind());
                names.add("Node");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("jbof-csi: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            System.err.println("jbof-csi: " + e.getMessage());
            return 1;
        }
        CsiServer server;
        try {
            server = new CsiServer(endpoint, services);
        } catch (IOException e) {
            System.err.println("jbof-csi: cannot serve on " + endpoint + ": " + e.getMessage());
            return 1;
        }
        try (server) {
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "csi-shutdown"));
            System.out.println("jbof-csi: serving " + String.join(", ", names) + " on " + server.socket());
            server.awaitTermination();
        }
        return 0;
    }

    private String nodeId() {
        if (nodeId != null) return nodeId;
        try {
            return Files.readString(Path.of("/etc/nvme/hostnqn")).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "--node-id is not given and /etc/nvme/hostnqn cannot be read: give this node's host NQN");
        }
    }

    private String jbofLauncher() {
        if (jbofCommand != null) return jbofCommand;
        String beside = System.getenv("JBOF_CSI_JBOF"); // set by scripts/jbof-csi
        return beside != null ? beside : "jbof";
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("call")) {
            // Only the answer, or the error: Netty's note on a socket option Unix sockets lack is noise here.
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
            // @FILE is the request, read by CsiCall; picocli must not expand it into arguments of its own.
            System.exit(new CommandLine(new CsiCall())
                    .setExpandAtFiles(false)
                    .execute(java.util.Arrays.copyOfRange(args, 1, args.length)));
        }
        System.exit(new CommandLine(new CsiMain()).execute(args));
    }
}
