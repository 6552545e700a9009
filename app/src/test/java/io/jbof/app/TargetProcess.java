package io.jbof.app;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A jbof target daemon in its own JVM, started the way a user starts it, so tests can kill -9 it. */
final class TargetProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on tcp://[^:]+:(\\d+)");
    final Process process;
    final int port;
    final List<String> output = new ArrayList<>();

    private TargetProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts {@code command} (a java command line or a script) and waits for its "listening" line. */
    static TargetProcess start(List<String> command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        String line;
        while ((line = out.readLine()) != null) {
            seen.add(line);
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                TargetProcess t = new TargetProcess(p, Integer.parseInt(m.group(1)));
                t.output.addAll(seen);
                Thread drain = new Thread(() -> t.drain(out), "target-output");
                drain.setDaemon(true);
                drain.start();
                return t;
            }
        }
        p.destroyForcibly();
        throw new IOException("target exited before listening; its output:\n" + String.join("\n", seen));
    }

    /** The daemon in a child JVM on this test's class path. */
    static TargetProcess java(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                "io.jbof.target.cli.TargetMain"));
        cmd.addAll(List.of(args));
        return start(cmd);
    }

    private void drain(BufferedReader out) {
        try {
            String line;
            while ((line = out.readLine()) != null) {
                synchronized (output) { output.add(line); }
            }
        } catch (IOException ignored) {
            // the process is gone
        }
    }

    /** SIGKILL: no shutdown hook, no flush, nothing the daemon can do about it. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) throw new IllegalStateException("target survived SIGKILL");
    }

    /** SIGTERM and the exit code. */
    int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("target did not stop within 60 s of SIGTERM; output:\n" + outputText());
        }
        return process.exitValue();
    }

    String outputText() {
        synchronized (output) { return String.join("\n", output); }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) kill9();
    }
}
