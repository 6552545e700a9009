package io.jbof.initiator.cli;

import io.jbof.initiator.NamespaceInfo;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "id-ns", description = "Print a namespace's Identify Namespace data.")
public final class IdNsCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Option(
            names = {"-N", "--namespace-id"},
            paramLabel = "NSID",
            description = "Namespace ID (default 1).",
            defaultValue = "1")
    int nsid;

    @Override
    public Integer call() throws Exception {
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 0))) {
            ByteBuf b = Unpooled.buffer(4096);
            c.identify(0x00, nsid, b);
            NamespaceInfo n = NamespaceInfo.parse(nsid, b);
            if (!n.active()) {
                System.err.println("jbof: namespace " + nsid + " is not active on "
                        + c.info().subsystemNqn());
                return 1;
            }
            System.out.println("NVME Identify Namespace " + nsid + ":");
            System.out.printf("nsze    : %#x%n", n.sizeBlocks());
            System.out.printf("ncap    : %#x%n", n.capacityBlocks());
            System.out.printf("nuse    : %#x%n", n.usedBlocks());
            System.out.printf("nlbaf   : 0%n");
            System.out.printf("flbas   : 0%n");
            System.out.printf("nmic    : %d%n", n.nmic());
            System.out.printf("dlfeat  : %d%n", n.dlfeat());
            System.out.printf(
                    "nsattr  : %d%s%n", n.writeProtected() ? 1 : 0, n.writeProtected() ? " (write protected)" : "");
            System.out.printf("nguid   : %s%n", n.nguid().toString().replace("-", ""));
            System.out.printf("eui64   : %016x%n", n.eui64());
            System.out.printf(
                    "lbaf  0 : ms:0   lbads:%d rp:0 (in use)%n", Integer.numberOfTrailingZeros(n.blockSize()));
        }
        return 0;
    }
}
