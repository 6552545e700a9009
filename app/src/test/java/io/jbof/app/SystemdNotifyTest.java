package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Type=notify unit's view: the target tells NOTIFY_SOCKET it is ready once it listens, and that it stops on SIGTERM. */
class SystemdNotifyTest {
    @TempDir
    Path dir;

    /** A Unix datagram socket standing in for systemd's: prints "bound", then each datagram on a line. */
    private static final String RECEIVER = "import socket,sys\n"
            + "s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); print('bound', flush=True)\n"
            + "for _ in range(2): print(s.recv(4096).decode().replace('\\n', ' '), flush=True)\n";

    @Test
    void targetReportsReadyOnceListeningAndStoppingOnSigterm() throws Exception {
        Path sock = dir.resolve("notify.sock");
        Process receiver = new ProcessBuilder("python3", "-c", RECEIVER, sock.toString())
                .redirectErrorStream(true)
                .start();
        try {
            BufferedReader got =
                    new BufferedReader(new InputStreamReader(receiver.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("bound", got.readLine());
            try (DaemonProcess t = DaemonProcess.java(
                    Map.of("NOTIFY_SOCKET", sock.toString()),
                    "--listen",
                    "127.0.0.1:0",
                    "--nqn",
                    "nqn.2024-01.io.jbof:notify",
                    "--namespace",
                    dir.resolve("n.img") + ":4M",
                    "--rpc-socket",
                    "none")) {
                String ready = CompletableFuture.supplyAsync(() -> line(got)).get(60, TimeUnit.SECONDS);
                assertTrue(
                        ready.startsWith("READY=1 STATUS=jbof-target listening on tcp://127.0.0.1:" + t.port), ready);
                assertEquals(0, t.terminate());
                assertEquals(
                        "STOPPING=1",
                        CompletableFuture.supplyAsync(() -> line(got)).get(60, TimeUnit.SECONDS));
            }
        } finally {
            receiver.destroyForcibly();
        }
    }

    private static String line(BufferedReader r) {
        try {
            return r.readLine();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
