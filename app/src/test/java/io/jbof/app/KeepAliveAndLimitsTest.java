package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.transport.tcp.TcpHostTransport;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Hosts and targets that go silent, and a thousand connections against the controller limit. */
class KeepAliveAndLimitsTest {
    static final String NQN = "nqn.2024-01.io.jbof:limits";

    @TempDir
    Path dir;

    /** Polls a condition (bounded): for state that changes on the target's own timers. */
    private static void await(BooleanSupplier cond, long seconds, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline)
                throw new AssertionError(what + " did not happen within " + seconds + " s");
            Thread.sleep(20);
        }
    }

    /** Whether every thread of {@code pid} is in state T (stopped), from /proc/PID/task/TID/stat. */
    private static boolean allThreadsStopped(long pid) {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return tasks.allMatch(task -> {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    return stat.charAt(stat.lastIndexOf(')') + 2) == 'T';
                } catch (IOException gone) {
                    return true; // the thread ended
                }
            });
        } catch (IOException e) {
            return false;
        }
    }

    private static void signal(long pid, String sig) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid))
                .inheritIO()
                .start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "kill -" + sig + " " + pid);
    }

    @Test
    @Timeout(120)
    void aHostThatGoesSilentLosesItsControllerAfterItsKeepAliveTimeout() throws Exception {
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")))) {
            int port = TestTargets.port(t);
            // A real host in its own JVM, with a 1 s keep-alive timeout and a trickle of I/O.
            List<String> cmd = List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                    "io.jbof.app.JbofMain",
                    "bench",
                    "-a",
                    "127.0.0.1",
                    "-s",
                    String.valueOf(port),
                    "-n",
                    NQN,
                    "-k",
                    "1",
                    "-i",
                    "1",
                    "--rw",
                    "randread",
                    "--rate_iops",
                    "20",
                    "--runtime",
                    "600s");
            Process host = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("host.log").toFile())
                    .start();
            try {
                await(() -> t.controllers().live() == 1, 60, "the host's controller appearing");
                signal(host.pid(), "STOP"); // the host is frozen: no keep-alive, no I/O, sockets stay open
                await(() -> t.controllers().live() == 0, 30, "the target dropping the silent host's controller");
            } finally {
                host.destroyForcibly();
                host.waitFor(30, TimeUnit.SECONDS);
            }
            try (NvmeController c = NvmeController.connect(options(port))) {
                assertEquals(1, t.controllers().live(), "a new host connects afterwards");
                c.namespace(1).flushBlocking();
            }
        }
    }

    @Test
    @Timeout(120)
    void commandsToAFrozenTargetFailWithATimeoutInsteadOfHanging() throws Exception {
        try (DaemonProcess t = DaemonProcess.java(
                "--listen", "127.0.0.1:0", "--nqn", NQN, "--namespace", dir.resolve("b.img") + ":16M")) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(t.port)
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .commandTimeoutMillis(1500)
                    .build();
            try (NvmeController c = NvmeController.connect(o)) {
                signal(t.process.pid(), "STOP");
                // kill returns once the signal is sent; each of the JVM's threads stops when it next runs: wait until
                // all have.
                await(() -> allThreadsStopped(t.process.pid()), 30, "every thread of the target stopping");
                try {
                    ByteBuf b = Unpooled.buffer(4096);
                    IOException e =
                            assertThrows(IOException.class, () -> c.namespace(1).readBlocking(0, 1, b));
                    assertTrue(String.valueOf(e.getMessage()).contains("timed out"), "a timeout, not a hang: " + e);
                    assertThrows(
                            IOException.class, () -> c.namespace(1).readBlocking(0, 1, b), "the queue stays failed");
                } finally {
                    signal(t.process.pid(), "CONT");
                }
            }
        }
    }

    @Test
    @Timeout(300)
    void aThousandConnectionsAreHeldAndTheControllerLimitRefusesCleanly() throws Exception {
        int controllers = 250; // x (1 admin + 3 I/O queues) = 1000 connections
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("c.img"));
        cfg.maxControllers = controllers;
        cfg.maxIoQueues = 3;
        cfg.queueDepth = 16;
        long fdsBefore = openFds();
        List<NvmeController> held = new ArrayList<>();
        try (TargetServer t = TestTargets.start(cfg);
                TcpHostTransport transport = new TcpHostTransport(2)) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(TestTargets.port(t))
                    .subsystemNqn(NQN)
                    .ioQueues(3)
                    .queueDepth(16)
                    .commandTimeoutMillis(30_000)
                    .build();
            try {
                for (int i = 0; i < controllers; i++) held.add(NvmeController.connect(o, transport, false));
                assertEquals(controllers, t.controllers().live());
                NvmeException busy =
                        assertThrows(NvmeException.class, () -> NvmeController.connect(o, transport, false));
                assertEquals(Status.CONNECT_CONTROLLER_BUSY, busy.status() & 0x7FF, busy.getMessage());
                // Every held controller still serves I/O after the refusal.
                ByteBuf data = Unpooled.directBuffer(4096).writeZero(4096);
                for (NvmeController c : held) c.namespace(1).writeBlocking(0, 1, data, false);
                data.release();
                long fds = openFds() - fdsBefore;
                Runtime rt = Runtime.getRuntime();
                System.out.printf(
                        "held %d controllers, %d connections; %d more open file descriptors (both ends in this JVM); heap in use %d MiB%n",
                        controllers, controllers * 4, fds, (rt.totalMemory() - rt.freeMemory()) >> 20);
                assertTrue(fds >= controllers * 4 * 2, "both ends of every connection are open: " + fds);
            } finally {
                for (NvmeController c : held) c.close();
            }
            await(() -> t.controllers().live() == 0, 60, "every controller released after the hosts disconnect");
        }
    }

    private static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    private static ConnectOptions options(int port) {
        return ConnectOptions.builder()
                .port(port)
                .subsystemNqn(NQN)
                .ioQueues(1)
                .commandTimeoutMillis(10_000)
                .build();
    }
}
