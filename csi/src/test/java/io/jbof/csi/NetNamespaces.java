package io.jbof.csi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Network namespaces for a test: one "node" namespace joined by a veth pair to each of several "storage"
 * namespaces, on 10.231.N.0/24 (the node .1, storage host N .2). Every address lives inside a namespace;
 * the machine's own network is not touched. {@link #close()} deletes them, and their links with them.
 */
final class NetNamespaces implements AutoCloseable {
    private final String prefix;
    private final List<String> made = new ArrayList<>();

    /** Names start with a prefix unique to this JVM, so runs beside each other do not collide. */
    NetNamespaces() {
        this.prefix = "jcsi" + ProcessHandle.current().pid() % 1_000_000;
    }

    String node() {
        return prefix + "n";
    }

    String storage(int n) {
        return prefix + "s" + n;
    }

    /** Storage host {@code n}'s address, as the node reaches it. */
    static String storageAddress(int n) {
        return "10.231." + n + ".2";
    }

    /** Makes the node namespace and {@code count} storage namespaces (1..count), each with loopback up. */
    NetNamespaces create(int count) throws IOException {
        add(node());
        for (int n = 1; n <= count; n++) {
            add(storage(n));
            String nodeSide = prefix + "v" + n;
            String storageSide = prefix + "w" + n;
            run(
                    "ip",
                    "link",
                    "add",
                    nodeSide,
                    "netns",
                    node(),
                    "type",
                    "veth",
                    "peer",
                    "name",
                    storageSide,
                    "netns",
                    storage(n));
            run("ip", "-n", node(), "addr", "add", "10.231." + n + ".1/24", "dev", nodeSide);
            run("ip", "-n", storage(n), "addr", "add", storageAddress(n) + "/24", "dev", storageSide);
            run("ip", "-n", node(), "link", "set", nodeSide, "up");
            run("ip", "-n", storage(n), "link", "set", storageSide, "up");
        }
        return this;
    }

    /** {@code command} to run in namespace {@code ns}: only the network is entered, so mounts made there are the machine's. */
    static List<String> in(String ns, String... command) {
        List<String> c = new ArrayList<>(List.of("nsenter", "--net=/run/netns/" + ns));
        c.addAll(List.of(command));
        return c;
    }

    private void add(String ns) throws IOException {
        run("ip", "netns", "add", ns);
        made.add(ns);
        run("ip", "-n", ns, "link", "set", "lo", "up");
    }

    /** Runs {@code command} to its end; its output (stdout and stderr) when it succeeds. */
    static String run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (p.waitFor() != 0) throw new IOException(String.join(" ", command) + " failed: " + out.strip());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
        return out;
    }

    @Override
    public void close() {
        for (String ns : made) {
            try {
                run("ip", "netns", "del", ns);
            } catch (IOException e) {
                System.err.println("cannot delete network namespace " + ns + ": " + e.getMessage());
            }
        }
    }
}
