package io.jbof.target.namespace;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A Linux loop device over a file, attached by losetup for a test and detached when closed. */
final class LoopDevice implements AutoCloseable {
    private final Path device;

    private LoopDevice(Path device) {
        this.device = device;
    }

    /** Root (loop devices need it) and losetup on the path. */
    static boolean available() {
        return Files.isWritable(Path.of("/dev/loop-control")) && run("losetup", "--version").exitOk;
    }

    /** Attaches {@code file}; {@code options} go to losetup (e.g. --read-only, --sector-size 4096). */
    static LoopDevice attach(Path file, String... options) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("losetup", "--find", "--show"));
        cmd.addAll(List.of(options));
        cmd.add(file.toString());
        Result r = run(cmd.toArray(new String[0]));
        if (!r.exitOk) throw new IOException("losetup failed: " + r.output);
        return new LoopDevice(Path.of(r.output.trim()));
    }

    Path path() {
        return device;
    }

    /** Runs a command to its end; for mkfs, mount and stat beside losetup. */
    static Result run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(false, String.join(" ", cmd) + " did not end within 60 s");
            }
            return new Result(p.exitValue() == 0, out);
        } catch (IOException e) {
            return new Result(false, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(false, e.toString());
        }
    }

    record Result(boolean exitOk, String output) {}

    @Override
    public void close() throws IOException {
        Result r = run("losetup", "--detach", device.toString());
        if (!r.exitOk) throw new IOException("losetup --detach " + device + " failed: " + r.output);
    }
}
