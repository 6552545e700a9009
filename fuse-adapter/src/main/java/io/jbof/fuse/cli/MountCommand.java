package io.jbof.fuse.cli;

import io.jbof.fuse.FuseMount;
import io.jbof.fuse.kernel.FuseSession;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.cli.ConnectionOptions;
import io.jbof.util.Sizes;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import sun.misc.Signal;

@Command(
        name = "mount",
        description = {
            "Mount a target's namespaces as files ns1, ns2, ... (by NSID) in a FUSE file system; runs in the foreground.",
            "Ctrl-C, SIGTERM or 'jbof umount MOUNTPOINT' unmounts, flushes and shuts the controller down.",
            "SIGUSR1 prints the requests in flight on the adapter, and their peak since the last SIGUSR1, on stderr."
        },
        footer = {
            "",
            "Example:",
            "  mkdir -p /mnt/vol1 && jbof mount -t tcp -a 10.0.0.5 -s 4420 -n nqn.2024-01.io.jbof:vol1 /mnt/vol1",
            "  fio --name=t --filename=/mnt/vol1/ns1 --rw=randread --bs=4k --iodepth=16 --ioengine=libaio --direct=1"
        })
public final class MountCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "An existing directory.")
    Path mountPoint;

    @Option(
            names = "--direct-io",
            description = "Bypass the kernel page cache for every open (each read and write goes to the target).")
    boolean directIo;

    @Option(
            names = "--allow-other",
            description = "Let other users than the one mounting use the files (FUSE allow_other).")
    boolean allowOther;

    @Option(
            names = {"-r", "--read-only"},
            description = "Mount read-only.")
    boolean readOnly;

    @Option(
            names = "--writeback-cache",
            description = {
                "Let the kernel cache writes and send them later, in bigger pieces.",
                "Opt-in: a write is then durable on the target only after fsync/fdatasync (which still send NVMe Flush before they return);",
                "without it every write reaches the target before write(2) returns."
            })
    boolean writebackCache;

    @Option(
            names = "--readahead",
            paramLabel = "SIZE",
            description =
                    "Kernel readahead for buffered reads, 0 to keep the kernel's 128K (default: ${DEFAULT-VALUE}; needs root).")
    String readahead = "4M";

    @Option(
            names = "--max-background",
            paramLabel = "N",
            description =
                    "Asynchronous requests (reads, direct I/O) the kernel may keep outstanding (default: ${DEFAULT-VALUE}).")
    int maxBackground = FuseSession.Config.defaults().maxBackground();

    @Option(
            names = "--readers",
            paramLabel = "N",
            description = "Threads reading requests from /dev/fuse where the event loops do not (see --reader-threads;"
                    + " default: ${DEFAULT-VALUE}).")
    int readers = FuseSession.Config.defaults().readers();

    @Option(
            names = "--reader-threads",
            description =
                    "Read /dev/fuse on --readers threads instead of on the initiator's event loops. By default each"
                            + " I/O queue's loop reads requests in its own turns where the transport allows it (NVMe/TCP on"
                            + " epoll): a request then runs to completion on one thread, with no hand-over.")
    boolean readerThreads;

    @Option(
            names = "--max-request",
            paramLabel = "SIZE",
            description = "Largest read or write the kernel sends, 4K to 1M (default: ${DEFAULT-VALUE}).")
    String maxRequestText = "1M";

    @Override
    public Integer call() throws Exception {
        NvmeController c = NvmeController.connect(
                conn.toOptions(null, Math.max(2, Runtime.getRuntime().availableProcessors())));
        FuseMount m;
        try {
            if (maxBackground < 1 || maxBackground > 65535)
                throw new IllegalArgumentException("--max-background " + maxBackground + ": from 1 to 65535");
            if (readers < 1 || readers > 64)
                throw new IllegalArgumentException("--readers " + readers + ": from 1 to 64");
            long maxRequest = Sizes.parse(maxRequestText);
            if (maxRequest % 4096 != 0 || maxRequest < 4096 || maxRequest > (1 << 20)) {
                throw new IllegalArgumentException("--max-request " + maxRequest + ": a multiple of 4K from 4K to 1M");
            }
            FuseSession.Config server =
                    new FuseSession.Config(readers, maxBackground, (int) maxRequest, writebackCache, !readerThreads);
            m = FuseMount.mount(
                    c,
                    mountPoint,
                    new FuseMount.Options(
                            directIo,
                            allowOther,
                            readOnly,
                            writebackCache,
                            (int) (Sizes.parse(readahead) >> 10),
                            server));
        } catch (Exception e) {
            c.close();
            throw e;
        }
        CountDownLatch stop = new CountDownLatch(1);
        // SIGTERM / SIGINT: unmount, flush and exit 0 (a JVM shutdown hook alone would exit 143).
        for (String sig : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(sig), s -> stop.countDown());
        }
        // SIGUSR1: how deep the kernel's requests reached the initiator since the last report (scripts/bench asks per
        // run).
        Signal.handle(new Signal("USR1"), s -> {
            System.err.println("jbof mount: requests in flight: " + m.session().inFlight() + " now, peak "
                    + m.session().takePeakInFlight() + " since the last report");
            System.err.flush();
        });
        String list = m.fileSystem().files().entrySet().stream()
                .map(e -> e.getKey() + " (" + Sizes.format(e.getValue().size()) + ", "
                        + e.getValue().blockSize() + "-byte blocks"
                        + (e.getValue().readOnly() ? ", read-only" : "") + ")")
                .collect(Collectors.joining(", "));
        System.out.println("jbof mount: mounted " + c.options().subsystemNqn + " at " + m.mountPoint() + ": " + list);
        System.out.flush();
        while (m.isMounted() && !stop.await(200, TimeUnit.MILLISECONDS)) {
            // wait for a signal or an unmount from outside
        }
        boolean external = !m.isMounted();
        try {
            m.close();
        } finally {
            c.close();
        }
        System.err.println("jbof mount: unmounted " + m.mountPoint() + (external ? "" : " (signal)")
                + ", flushed, controller shut down; " + "peak requests in flight: "
                + m.session().peakInFlight());
        return 0;
    }
}
