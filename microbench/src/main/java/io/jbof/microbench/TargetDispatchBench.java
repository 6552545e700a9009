package io.jbof.microbench;

import io.jbof.nvme.Opcodes;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.controller.QueueSession;
import io.jbof.target.transport.loop.LoopHost;
import io.jbof.target.transport.loop.LoopRequest;
import io.jbof.transport.TransportType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The target's command handling without a transport (over {@link LoopHost}'s in-process queues): a
 * connected controller's I/O queue session gets a 4 KiB Read (its data dropped, as if sendfile ran)
 * or an in-capsule 4 KiB Write (written to the page cache of a /dev/shm file). ns/op is dispatch, checks and file access per command; B/op what it allocates.
 * {@code mode=direct} exports the file with ,direct: the Read is an O_DIRECT pread into a pooled aligned buffer, the
 * Write is gathered into one and written by O_DIRECT (tmpfs has O_DIRECT since Linux 6.6; elsewhere the tmp folder is used).
 */
@State(Scope.Thread)
public class TargetDispatchBench {
    static final String NQN = "nqn.2024-01.io.jbof:dispatch";

    @Param({"buffered", "direct"})
    public String mode;

    private Path dir;
    private TargetServer target;
    private QueueSession io;
    private LoopRequest request;
    private final SplittableRandom rnd = new SplittableRandom(7);
    private final ByteBuf block = Unpooled.directBuffer(4096).writeZero(4096);

    @Setup(Level.Trial)
    public void setup() throws Exception {
        dir = Files.createTempDirectory(
                Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir")),
                "jbof-jmh");
        TargetConfig cfg = TargetConfig.loopback(NQN, "256M", dir.resolve("ns1.img"));
        cfg.subsystems.get(0).namespaces.get(0).direct = mode.equals("direct");
        target = TargetServer.start(cfg);
        LoopHost host = LoopHost.connect(target, NQN, UUID.nameUUIDFromBytes("jmh".getBytes()), TransportType.TCP);
        io = host.io;
        request = host.ioRequest(null);
        // The measured commands must really succeed, not take an early error path.
        read4k();
        LoopHost.check(request, "Read");
        write4kInCapsule();
        LoopHost.check(request, "Write");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        target.close();
        Files.deleteIfExists(dir.resolve("ns1.img"));
        Files.deleteIfExists(dir);
    }

    /** A buffered command has completed when onCommand returns; a direct one completes from the direct-I/O pool. */
    private int settled() throws Exception {
        int st = request.status();
        return st >= 0 ? st : request.await(10, TimeUnit.SECONDS);
    }

    @Benchmark
    public int read4k() throws Exception {
        request.reset(Opcodes.IO_READ, 4096).nsid(1).cdw(10, rnd.nextInt(65536)).cdw(12, 0);
        io.onCommand(request);
        return settled();
    }

    @Benchmark
    public int write4kInCapsule() throws Exception {
        request.reset(Opcodes.IO_WRITE, 4096)
                .nsid(1)
                .cdw(10, rnd.nextInt(65536))
                .cdw(12, 0);
        request.payload(block);
        io.onCommand(request);
        return settled();
    }
}
