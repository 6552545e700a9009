package io.jbof.csi;

import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.grpc.StatusRuntimeException;
import io.jbof.csi.v1.Csi;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code jbof-csi call}: one RPC on a CSI driver's socket, as kubelet or a sidecar makes it, with the
 * request and the response in the proto3 JSON mapping (as csc, the CSI project's client, does). The
 * messages are built from csi.proto's descriptors, so every method the proto names can be called.
 */
@Command(
        name = "jbof-csi call",
        mixinStandardHelpOptions = true,
        description = {
            "Calls one RPC of a CSI driver (any, not only jbof's) over its Unix socket and prints the response",
            "as JSON; exit 1 with the gRPC status when the driver refuses."
        },
        footer = {
            "",
            "Examples:",
            "  jbof-csi call --endpoint unix:///run/csi.sock Identity GetPluginInfo",
            "  jbof-csi call --endpoint unix:///run/csi.sock Controller CreateVolume \\",
            "      '{\"name\":\"pvc-1\",\"capacityRange\":{\"requiredBytes\":\"1073741824\"},",
            "        \"volumeCapabilities\":[{\"mount\":{\"fsType\":\"ext4\"},\"accessMode\":{\"mode\":\"SINGLE_NODE_WRITER\"}}]}'",
            "  jbof-csi call --endpoint unix:///run/csi.sock Node NodeStageVolume @stage.json   # a request holding secrets"
        })
final class CsiCall implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** The command as {@code jbof-csi call} runs it: @FILE is the request, read here, not arguments for picocli to expand. */
    static CommandLine commandLine() {
        return new CommandLine(new CsiCall()).setExpandAtFiles(false);
    }

    @Option(names = "--endpoint", required = true, paramLabel = "unix:///PATH", description = "The driver's socket.")
    String endpoint;

    @Parameters(index = "0", paramLabel = "SERVICE", description = "Identity, Controller or Node.")
    String service;

    @Parameters(index = "1", paramLabel = "METHOD", description = "The RPC, e.g. CreateVolume.")
    String method;

    @Parameters(
            index = "2",
            arity = "0..1",
            defaultValue = "{}",
            paramLabel = "JSON|@FILE",
            description = "The request (default {}); @FILE reads it from a file, so secrets stay out of ps.")
    String request;

    @Override
    public Integer call() throws Exception {
        if (!endpoint.startsWith("unix://")) {
            spec.commandLine().getErr().println("jbof-csi call: --endpoint " + endpoint + ": give unix:///PATH");
            return 2;
        }
        Descriptors.ServiceDescriptor sd = Csi.getDescriptor().findServiceByName(service);
        if (sd == null) {
            spec.commandLine()
                    .getErr()
                    .println("jbof-csi call: no service " + service + ": Identity, Controller or Node");
            return 2;
        }
        Descriptors.MethodDescriptor md = sd.findMethodByName(method);
        if (md == null) {
            spec.commandLine()
                    .getErr()
                    .println("jbof-csi call: " + service + " has no " + method + "; it has "
                            + sd.getMethods().stream()
                                    .map(Descriptors.MethodDescriptor::getName)
                                    .collect(Collectors.joining(", ")));
            return 2;
        }
        DynamicMessage.Builder q = DynamicMessage.newBuilder(md.getInputType());
        try {
            JsonFormat.parser().merge(io.jbof.util.SecretText.resolve(request), q);
        } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
            spec.commandLine()
                    .getErr()
                    .println("jbof-csi call: the request is not a "
                            + md.getInputType().getName() + ": " + e.getMessage());
            return 2;
        }
        try (CsiClient c = new CsiClient(Path.of(endpoint.substring("unix://".length())))) {
            DynamicMessage r =
                    c.call(service, method, q.build(), DynamicMessage.getDefaultInstance(md.getOutputType()));
            spec.commandLine().getOut().println(JsonFormat.printer().print(r));
            return 0;
        } catch (StatusRuntimeException e) {
            spec.commandLine()
                    .getErr()
                    .println("jbof-csi call: " + e.getStatus().getCode() + ": "
                            + e.getStatus().getDescription());
            return 1;
        }
    }
}
