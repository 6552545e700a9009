package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "list", description = "List the namespaces of a subsystem, like nvme list.")
public final class ListCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Override
    public Integer call() throws Exception {
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 1))) {
            String fmt = "%-10s %-20s %-24s %-9s %-26s %-16s %-8s%n";
            System.out.printf(fmt, "Node", "SN", "Model", "Namespace", "Usage", "Format", "FW Rev");
            System.out.printf(
                    fmt,
                    "-".repeat(10),
                    "-".repeat(20),
                    "-".repeat(24),
                    "-".repeat(9),
                    "-".repeat(26),
                    "-".repeat(16),
                    "-".repeat(8));
            for (Namespace ns : c.namespaces()) {
                String usage =
                        String.format(Locale.ROOT, "%.2f GB / %.2f GB", ns.sizeBytes() / 1e9, ns.sizeBytes() / 1e9);
                System.out.printf(
                        fmt,
                        "ns" + ns.nsid(),
                        c.info().serial(),
                        c.info().model(),
                        ns.nsid(),
                        usage,
                        ns.blockSize() + " B + 0 B" + (ns.readOnly() ? " ro" : ""),
                        c.info().firmware());
            }
        }
        return 0;
    }
}
