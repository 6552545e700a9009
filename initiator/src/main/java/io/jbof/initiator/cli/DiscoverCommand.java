package io.jbof.initiator.cli;

import io.jbof.initiator.DiscoveryEntry;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.DiscoveryLog;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "discover", description = "Read a target's discovery log page (subsystems and where to reach them).")
public final class DiscoverCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Override
    public Integer call() throws Exception {
        try (NvmeController c = NvmeController.connect(conn.toOptions(ConnectionOptions.discoveryNqn(), 0))) {
            List<DiscoveryEntry> entries = c.discoveryLog();
            System.out.println("Discovery Log Number of Records " + entries.size() + ", Generation counter 1");
            int i = 0;
            for (DiscoveryEntry e : entries) {
                System.out.println("=====Discovery Log Entry " + i++ + "======");
                System.out.println("trtype:  " + e.transport());
                System.out.println("adrfam:  " + (e.adrfam() == 2 ? "ipv6" : "ipv4"));
                System.out.println("subtype: " + e.subtypeName());
                System.out.println("treq:    "
                        + ((e.treq() & 3) == 2 ? "not required" : (e.treq() & 3) == 1 ? "required" : "not specified"));
                System.out.println("portid:  " + e.portId());
                System.out.println("trsvcid: " + e.trsvcid());
                System.out.println("subnqn:  " + e.subnqn());
                System.out.println("traddr:  " + e.traddr());
                if (e.trtype() == DiscoveryLog.TRTYPE_TCP) System.out.println("sectype: " + e.sectype());
            }
        }
        return 0;
    }
}
