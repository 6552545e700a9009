package io.jbof.initiator.cli;

import io.jbof.initiator.ControllerInfo;
import io.jbof.initiator.NvmeController;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "id-ctrl", description = "Print the controller's Identify Controller data.")
public final class IdCtrlCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Override
    public Integer call() throws Exception {
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 0))) {
            ControllerInfo i = c.info();
            System.out.println("NVME Identify Controller:");
            System.out.printf("vid       : %#x%n", i.vid());
            System.out.printf("sn        : %s%n", i.serial());
            System.out.printf("mn        : %s%n", i.model());
            System.out.printf("fr        : %s%n", i.firmware());
            System.out.printf(
                    "mdts      : %d (%s)%n",
                    i.mdts(), i.mdts() == 0 ? "no limit" : (i.maxTransferBytes() >> 10) + " KiB");
            System.out.printf("cntlid    : %#x%n", i.cntlid());
            System.out.printf("ver       : %#x (%s)%n", i.version(), i.versionString());
            System.out.printf(
                    "cntrltype : %d (%s)%n",
                    i.controllerType(), i.controllerType() == 2 ? "discovery" : i.controllerType() == 1 ? "io" : "?");
            System.out.printf("sqes      : %#x%n", i.sqes());
            System.out.printf("cqes      : %#x%n", i.cqes());
            System.out.printf("maxcmd    : %d%n", i.maxCommands());
            System.out.printf("nn        : %d%n", i.namespaces());
            System.out.printf("oncs      : %#x%n", i.oncs());
            System.out.printf("vwc       : %#x%n", i.vwc());
            System.out.printf("sgls      : %#x%n", i.sgls());
            System.out.printf("kas       : %d%n", i.kas());
            System.out.printf("subnqn    : %s%n", i.subsystemNqn());
            System.out.printf("ioccsz    : %d%n", i.ioccsz());
            System.out.printf("iorcsz    : %d%n", i.iorcsz());
        }
        return 0;
    }
}
