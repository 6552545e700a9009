package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The user's path, run from the packaged jar by the launcher scripts: start the daemon, write with
 * `jbof write`, stop it with SIGTERM (exit 0), start it again on the same file, read back with `jbof read`.
 */
class ScriptRestartIT {
    static final String NQN = "nqn.2024-01.io.jbof:scripts";
    static final Path ROOT =
            Path.of(System.getProperty("jbof.root", "..")).toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void dataWrittenThroughTheCliSurvivesARestartOfTheScriptedTarget() throws Exception {
        Path vol = dir.resolve("vol.img");
        byte[] data = new byte[300_000]; // not a multiple of the block size, at an unaligned offset
        new SplittableRandom(3).nextBytes(data);
        Path in = dir.resolve("in.bin");
        Files.write(in, data);
        List<String> daemon = List.of(
                script("jbof-target").toString(), "--listen", "127.0.0.1:0", "--nqn", NQN, "--namespace", vol + ":16M");

        try (DaemonProcess t = DaemonProcess.start(daemon)) {
            assertTrue(Files.size(vol) == 16L << 20, "the daemon created the volume file of the size asked for");
            run(
                    "jbof",
                    "write",
                    "-t",
                    "tcp",
                    "-a",
                    "127.0.0.1",
                    "-s",
                    String.valueOf(t.port),
                    "-n",
                    NQN,
                    "--offset",
                    "1000",
                    "--input",
                    in.toString());
            assertEquals(0, t.terminate(), "SIGTERM stops the daemon with exit code 0; output:\n" + t.outputText());
        }
        try (DaemonProcess t = DaemonProcess.start(daemon)) {
            Path out = dir.resolve("out.bin");
            run(
                    "jbof",
                    "read",
                    "--traddr",
                    "127.0.0.1",
                    "--trsvcid",
                    String.valueOf(t.port),
                    "--nqn",
                    NQN,
                    "--offset",
                    "1000",
                    "--length",
                    String.valueOf(data.length),
                    "--output",
                    out.toString());
            assertArrayEquals(data, Files.readAllBytes(out));
            String list = run("jbof", "list", "-a", "127.0.0.1", "-s", String.valueOf(t.port), "-n", NQN);
            assertTrue(list.contains("ns1"), list);
            assertEquals(0, t.terminate());
        }
    }

    private static Path script(String name) {
        return ROOT.resolve("scripts").resolve(name);
    }

    /** Runs a launcher from an unrelated working directory and returns its stdout; fails on a non-zero exit. */
    private String run(String name, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(script(name).toString());
        cmd.addAll(List.of(args));
        File log = dir.resolve(name + ".err").toFile();
        Process p = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectError(log)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(cmd + " did not finish");
        }
        String err = Files.readString(log.toPath());
        assertEquals(0, p.exitValue(), cmd + " failed: " + err);
        return new String(out);
    }
}
