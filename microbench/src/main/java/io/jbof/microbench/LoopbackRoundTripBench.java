package io.jbof.microbench;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.queue.QueuePair;
import io.jbof.initiator.queue.Request;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Initiator submit to completion against a target in the same JVM over loopback NVMe/TCP, one I/O at
 * a time (ns/op = QD1 latency of the whole stack: capsule, PDU, target dispatch, file I/O, response).
 * The Request and buffer are reused: -prof gc shows what the stack itself allocates per I/O.
 */
@State(Scope.Benchmark)
public class LoopbackRoundTripBench {
    @Param({"4096"})
    public int bs;

    @Param({"read", "write"})
    public String op;

    private Path dir;
    private TargetServer target;
    private NvmeController controller;
    private Namespace ns;
    private QueuePair queue;
    private ByteBuf buf;
    private final Request request = new Request();
    private volatile int completed;
    private volatile int status;
    private final SplittableRandom rnd = new SplittableRandom(1);
    private long blocks;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        dir = Files.createTempDirectory(
                Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir")),
                "jbof-jmh");
        TargetConfig cfg = TargetConfig.loopback("nqn.2024-01.io.jbof:jmh", "256M", dir.resolve("ns1.img"));
        cfg.ioThreads = 1;
        target = TargetServer.start(cfg);
        controller = NvmeController.connect(ConnectOptions.builder()
                .port(target.boundAddresses().get(0).getPort())
                .subsystemNqn("nqn.2024-01.io.jbof:jmh")
                .ioQueues(1)
                .queueDepth(32)
                .build());
        ns = controller.namespace(1);
        queue = controller.ioQueues().get(0);
        buf = PooledByteBufAllocator.DEFAULT.directBuffer(bs, bs);
        buf.writeZero(bs);
        blocks = ns.blocks() / (bs / ns.blockSize());
        request.callback = (r, st, res, err) -> {
            status = err != null ? -1 : st;
            completed = completed + 1;
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        buf.release();
        controller.close();
        target.close();
        Files.deleteIfExists(dir.resolve("ns1.img"));
        Files.deleteIfExists(dir);
    }

    @Benchmark
    public int oneIo() {
        boolean write = op.equals("write");
        long lba = rnd.nextLong(blocks) * (bs / ns.blockSize());
        if (write) buf.setIndex(0, bs);
        else buf.clear();
        Request.Callback cb = request.callback;
        ns.prepare(request, write, lba, bs / ns.blockSize(), buf, false);
        request.callback = cb;
        int before = completed;
        queue.submit(request);
        while (completed == before) Thread.onSpinWait();
        if (status != 0) throw new IllegalStateException("I/O failed with status " + status);
        return before;
    }
}
