package io.jbof.microbench;

import io.jbof.target.namespace.DirectIoRing;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.transport.tcp.EventLoops;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One 4 KiB direct read through an event loop's io_uring, start to completion, as a direct namespace's
 * Read runs it: the loop starts it in the ring and submits at the end of its turn; the completion wakes the
 * loop (its eventfd, signalled by the ring) and is reaped in the loop's next turn. The file is on /dev/shm
 * (O_DIRECT on tmpfs, Linux 6.6+; else the temp folder), so the figure is the ring's round trip and not a
 * drive's. With -prof gc, B/op says what one read allocates on the way (the goal: nothing).
 */
@State(Scope.Benchmark)
public class DirectRingBench {
    static final int BLOCKS = 16384; // 64 MiB of 4 KiB

    Path dir;
    TargetNamespace ns;
    /** epoll: a loop of EventLoops.group, woken by the ring itself; waker: a plain loop with a thread that waits beside it. */
    @Param({"epoll", "waker"})
    public String loopKind;

    /**
     * A block device to read instead of the /dev/shm file (-p device=/dev/loop0): a file on tmpfs takes
     * io_uring's worker threads (shmem cannot read without waiting), where a block device completes through
     * the ring as a drive does; a loop device over a /dev/shm file is one without a drive's latency.
     */
    @Param({""})
    public String device;

    EventLoopGroup group;
    EventExecutor loop;
    ByteBuf buf;
    final SplittableRandom rnd = new SplittableRandom(1);
    final Read read = new Read();

    /** The read's start (a task on the loop) and its completion; reused, so a read allocates nothing here. */
    final class Read implements Runnable, DirectIoRing.Completion {
        long position;
        volatile int result = Integer.MIN_VALUE;

        @Override
        public void run() {
            DirectIoRing ring = DirectIoRing.of(loop);
            if (ring == null || !ns.startDirect(ring, false, buf, 4096, position, false, this)) result = -1;
        }

        @Override
        public void directDone(int r) {
            result = r;
        }
    }

    @Setup(Level.Trial)
    public void setup() throws Exception {
        if (!DirectIoRing.available()) throw new IllegalStateException("io_uring is unavailable here");
        Path base = Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir"));
        dir = Files.createTempDirectory(base, "jbof-jmh-ring");
        Path img = device.isEmpty() ? dir.resolve("ns1.img") : Path.of(device);
        if (device.isEmpty()) Files.write(img, new byte[BLOCKS * 4096]);
        ns = TargetNamespace.open(
                1,
                img,
                (long) BLOCKS * 4096,
                new TargetNamespace.Options(4096, false, true, false),
                "nqn.2024-01.io.jbof:jmh");
        if (loopKind.equals("epoll")) {
            group = EventLoops.group(1, new DefaultThreadFactory("jmh-ring"));
            loop = group.next();
        } else {
            loop = new DefaultEventExecutor(new DefaultThreadFactory("jmh-ring"));
        }
        buf = ns.gatherBuffer(4096); // aligned for O_DIRECT
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException, InterruptedException {
        buf.release();
        (group != null ? group : loop)
                .shutdownGracefully(0, 0, TimeUnit.SECONDS)
                .sync();
        ns.close();
        Files.deleteIfExists(dir.resolve("ns1.img"));
        Files.deleteIfExists(dir);
    }

    @Benchmark
    public int read4kRoundTrip() {
        Read r = read;
        r.result = Integer.MIN_VALUE;
        r.position = (long) rnd.nextInt(BLOCKS) * 4096;
        loop.execute(r);
        int got;
        while ((got = r.result) == Integer.MIN_VALUE) Thread.onSpinWait();
        if (got != 4096) throw new IllegalStateException("read returned " + got);
        return got;
    }
}
