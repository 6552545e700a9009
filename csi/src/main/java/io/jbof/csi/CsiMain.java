package io.jbof.csi;

import io.grpc.ServerServiceDefinition;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code jbof-csi}: the CSI driver's process, serving the Identity service and, by mode, the Controller service. */
@Command(
        name = "jbof-csi",
        mixinStandardHelpOptions = true,
        version = IdentityService.DRIVER_NAME + " " + IdentityService.VERSION,
        description = {
            "The jbof CSI driver: creates, deletes, grows and publishes volumes on jbof targets (storage hosts)",
            "through their management API, for Kubernetes or any CSI orchestrator. Runs in the foreground."
        },
        footer = {
            "",
            "Example (controller, two storage hosts):",
            "  jbof-csi --endpoint unix:///csi/csi.sock --mode controller \\",
            "      --storage-host s1=https://storage1:4430,token=@/etc/jbof/s1.token,cacert=/etc/jbof/s1-ca.pem,portal=10.0.0.1:4420,dir=/srv/jbof \\",
            "      --storage-host s2=unix:///run/jbof/target-4420.sock,portal=10.0.0.2:4420,capacity=2T"
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
            defaultValue = "controller",
            paramLabel = "MODE",
            description = "controller (default; the Node service is not built yet)")
    String mode;

    @Option(
            names = "--storage-host",
            paramLabel = "NAME=ENDPOINT[,token=@FILE][,cacert=PEM][,portal=HOST:PORT]...[,dir=PATH][,capacity=SIZE]",
            description = {
                "A jbof target to place volumes on (repeatable; the first with room gets a new volume).",
                "ENDPOINT: its management API, unix:///PATH or https://HOST:PORT (token=TOKEN or @FILE; cacert: the CA of its certificate).",
                "portal: where hosts connect to it (NVMe/TCP); dir: folder for volume files (default "
                        + StorageHost.DEFAULT_DIR + ");",
                "capacity: most bytes of volumes to place there (default: its free space)."
            })
    List<String> storageHosts = new ArrayList<>();

    @Option(names = "--verbose", description = "Log each call.")
    boolean verbose;

    @Override
    public Integer call() throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "debug" : "info");
        System.setProperty("org.slf4j.simpleLogger.log.io.grpc", "warn");
        if (!mode.equals("controller")) {
            System.err.println(
                    "jbof-csi: --mode " + mode + ": only the controller is built yet (see the README's CSI section)");
            return 2;
        }
        List<StorageHost> hosts = new ArrayList<>();
        try {
            for (String s : storageHosts) hosts.add(StorageHost.parse(s));
            if (hosts.isEmpty())
                throw new IllegalArgumentException("--mode controller needs at least one --storage-host");
        } catch (IllegalArgumentException e) {
            System.err.println("jbof-csi: " + e.getMessage());
            return 2;
        }
        List<ServerServiceDefinition> services = List.of(IdentityService.bind(), new ControllerService(hosts).bind());
        try (CsiServer server = new CsiServer(endpoint, services)) {
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "csi-shutdown"));
            System.out.println(
                    "jbof-csi: serving " + String.join(", ", "Identity", "Controller") + " on " + server.socket());
            server.awaitTermination();
        }
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new CsiMain()).execute(args));
    }
}
