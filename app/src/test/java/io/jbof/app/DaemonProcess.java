package io.jbof.app;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A jbof daemon (a target, or a mount) in its own process, started the way a user starts it and
 * ready once it printed its ready line, so tests can signal it or kill -9 it.
 */
final class DaemonProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on tcp://[^:]+:(\\d+)");
    final Process process;
    final int port;
    final List<String> output = new ArrayList<>();

    private DaemonProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts a target ({@code command}: a java command line or a script) and waits for its "listening" line. */
    static DaemonProcess start(List<String> command) throws IOException {
        return start(command, LISTENING);
    }

    /** Starts {@code command} and waits for a line matching {@code ready} (group 1, if any, is the port). */
    static DaemonProcess start(List<String> command, Pattern ready) throws IOException {
        return start(command, ready, Map.of());
    }

    /** As {@link #start(List, Pattern)}, with {@code env} added to the environment. */
    static DaemonProcess start(List<String> command, Pattern ready, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        String line;
        while ((line = out.readLine()) != null) {
            seen.add(line);
            Matcher m = ready.matcher(line);
            if (m.find()) {
                DaemonProcess t = new DaemonProcess(p, m.groupCount() > 0 ? Integer.parseInt(m.group(1)) : -1);
                t.output.addAll(seen);
                Thread drain = new Thread(() -> t.drain(out), "daemon-output");
                drain.setDaemon(true);
                drain.start();
                return t;
            }
        }
        p.destroyForcibly();
        throw new IOException(command.get(0) + " exited before it was ready; its output:\n" + String.join("\n", seen));
    }

    /** The daemon in a child JVM on this test's class path. */
    static DaemonProcess java(String... args) throws IOException {
        return java(Map.of(), args);
    }

    /** The target in a child JVM, with {@code env} added to its environment. */
    static DaemonProcess java(Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                "io.jbof.target.cli.TargetMain"));
        cmd.addAll(List.of(args));
        return start(cmd, LISTENING, env);
    }

    private void drain(BufferedReader out) {
        try {
            String line;
            while ((line = out.readLine()) != null) {
                synchronized (output) {
                    output.add(line);
                }
            }
        } catch (IOException ignored) {
            // the process is gone
        }
    }

    /** SIGKILL: no shutdown hook, no flush, nothing the daemon can do about it. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) throw new IllegalStateException("process survived SIGKILL");
    }

    /** SIGTERM and the exit code. */
    int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("process did not stop within 60 s of SIGTERM; output:\n" + outputText());
        }
        return process.exitValue();
    }

    String outputText() {
        synchronized (output) {
            return String.join("\n", output);
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) kill9();
    }
}
