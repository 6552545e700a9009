package io.jbof.csi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The node's tools (mount, losetup, mkfs, blkid, resize2fs), each run to its end within a bound. */
final class Commands {
    private static final long TIMEOUT_S = 120;

    private Commands() {}

    /** Runs {@code cmd}; its standard output, or a {@link Failed} with its exit status and what it said. */
    static String run(List<String> cmd) throws IOException {
        Path out = Files.createTempFile("jbof-csi-", ".out");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            boolean done;
            try {
                done = p.waitFor(TIMEOUT_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException(String.join(" ", cmd) + ": interrupted", e);
            }
            if (!done) {
                p.destroyForcibly();
                throw new Failed(cmd, -1, "did not finish within " + TIMEOUT_S + " s");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) throw new Failed(cmd, p.exitValue(), text.strip());
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** A command that exited non-zero; {@link #status} is its exit status (-1: it ran out of time). */
    static final class Failed extends IOException {
        final int status;

        Failed(List<String> cmd, int status, String output) {
            super(String.join(" ", cmd) + " failed (" + (status < 0 ? "timeout" : "exit " + status) + "): " + output);
            this.status = status;
        }
    }
}
