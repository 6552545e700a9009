package io.jbof.microbench;

import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * One namespace driven from 1, 2, 4 and 8 threads, as event loops drive it: per 4 KiB Read the
 * subsystem's namespace lookup and a positional read through the namespace's channel (a /dev/shm
 * file). The score is the operations of all threads together: with nothing shared it holds level
 * once the threads outnumber the cores; a monitor every operation enters makes it fall.
 */
public class NamespaceThreadsBench {
    static final int BLOCKS = 65536; // 256 MiB of 4 KiB

    @State(Scope.Benchmark)
    public static class Shared {
        Path dir;
        Subsystem subsystem;
        TargetNamespace ns;

        @Setup(Level.Trial)
        public void setup() throws IOException {
            Path base =
                    Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir"));
            dir = Files.createTempDirectory(base, "jbof-jmh-ns");
            subsystem = new Subsystem("nqn.2024-01.io.jbof:threads", "jmh", true, Set.of());
            ns = TargetNamespace.open(
                    1, dir.resolve("ns1.img"), (long) BLOCKS * 4096, TargetNamespace.Options.of(4096), subsystem.nqn());
            subsystem.addNamespace(ns);
            ByteBuffer fill = ByteBuffer.allocateDirect(1 << 20);
            for (long at = 0; at < (long) BLOCKS * 4096; at += fill.capacity())
                ns.channel().write(fill.clear(), at);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            ns.close();
            Files.deleteIfExists(dir.resolve("ns1.img"));
            Files.deleteIfExists(dir);
        }
    }

    @State(Scope.Thread)
    public static class PerThread {
        final ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        final SplittableRandom rnd = new SplittableRandom(Thread.currentThread().getId());
    }

    private static int read(Shared s, PerThread t) throws IOException {
        TargetNamespace ns = s.subsystem.namespace(1);
        return ns.channel().read(t.buf.clear(), (long) t.rnd.nextInt(BLOCKS) * 4096);
    }

    @Benchmark
    @Threads(1)
    public int read4kThreads1(Shared s, PerThread t) throws IOException {
        return read(s, t);
    }

    @Benchmark
    @Threads(2)
    public int read4kThreads2(Shared s, PerThread t) throws IOException {
        return read(s, t);
    }

    @Benchmark
    @Threads(4)
    public int read4kThreads4(Shared s, PerThread t) throws IOException {
        return read(s, t);
    }

    @Benchmark
    @Threads(8)
    public int read4kThreads8(Shared s, PerThread t) throws IOException {
        return read(s, t);
    }
}
