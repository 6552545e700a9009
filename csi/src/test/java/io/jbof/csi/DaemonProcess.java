package io.jbof.csi;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A daemon a test starts as its own process (a jbof target, the CSI driver): started, then waited for
 * until it prints the line that says it serves; everything it prints goes to a log file the failure
 * message names. {@link #kill()} is {@code kill -9}.
 */
final class DaemonProcess implements AutoCloseable {
    private static final long READY_SECONDS = 90;

    final Process process;
    final Path log;

    private DaemonProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts {@code command} and returns once it printed a line starting with {@code ready}; fails if it ends first. */
    static DaemonProcess start(List<String> command, String ready, Path log) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> serving = new CompletableFuture<>();
        Thread pump = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                                    new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                            PrintWriter out = new PrintWriter(Files.newBufferedWriter(log), true)) {
                        for (String line; (line = in.readLine()) != null; ) {
                            out.println(line);
                            if (line.startsWith(ready)) serving.complete(line);
                        }
                    } catch (IOException e) {
                        serving.completeExceptionally(e);
                    }
                    serving.completeExceptionally(new IOException("it ended before it was ready"));
                },
                "daemon-output");
        pump.setDaemon(true);
        pump.start();
        DaemonProcess d = new DaemonProcess(p, log);
        try {
            serving.get(READY_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            d.kill();
            throw new IOException(
                    String.join(" ", command) + ": not ready (" + e.getMessage() + "); its output:\n" + d.output(), e);
        } catch (InterruptedException e) {
            d.kill();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        return d;
    }

    long pid() {
        return process.pid();
    }

    /** SIGSTOP: it keeps its sockets, so calls to it hang as on a host that froze. */
    void freeze() throws IOException {
        NetNamespaces.run("kill", "-STOP", Long.toString(pid()));
    }

    /** SIGKILL (a frozen process too), and waits until it is gone. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    String output() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e.getMessage() + ")";
        }
    }

    /** SIGTERM, as a service manager stops it, then SIGKILL if it does not end. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) kill();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
    }
}
