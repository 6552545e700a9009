package io.jbof.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the user's tools (dd, fio, mkfs, mount) against the mount, bounded in time. */
final class Shell {
    private Shell() {}

    record Result(int exit, String output) {}

    static Result run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(cmd)).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(10, TimeUnit.MINUTES), String.join(" ", cmd) + " finished");
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Runs a command that must succeed; returns its output. */
    static String ok(String... cmd) throws IOException, InterruptedException {
        Result r = run(cmd);
        assertEquals(0, r.exit(), String.join(" ", cmd) + " failed:\n" + r.output());
        return r.output();
    }

    static boolean has(String tool) {
        for (String dir : new String[] {"/usr/bin", "/usr/sbin", "/bin", "/sbin"}) {
            if (new java.io.File(dir, tool).canExecute()) return true;
        }
        return false;
    }
}
