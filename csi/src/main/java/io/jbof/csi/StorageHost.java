package io.jbof.csi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jbof.util.SecretText;
import io.jbof.util.Sizes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One storage host the controller places volumes on: a jbof target reached through its management API,
 * the portals hosts connect to for its volumes (NVMe/TCP HOST:PORT), the folder on it where volume
 * files go, and an optional quota on the bytes of volumes placed there.
 */
final class StorageHost {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,31}");
    static final String DEFAULT_DIR = "/var/lib/jbof/csi";

    final String name;
    final ManagementClient api;
    final List<String> portals;
    final String dir;
    /** Bytes of volumes this host may hold; 0: bounded only by its file system's free space. */
    final long quota;

    StorageHost(String name, ManagementClient api, List<String> portals, String dir, long quota) {
        this.name = name;
        this.api = api;
        this.portals = List.copyOf(portals);
        this.dir = dir;
        this.quota = quota;
    }

    /**
     * Parses {@code NAME=ENDPOINT[,token=TOKEN|@FILE][,cacert=PEM][,portal=HOST:PORT]...[,dir=PATH][,capacity=SIZE]}.
     *
     * @throws IllegalArgumentException with what is wrong and what to write instead
     */
    static StorageHost parse(String spec) {
        int eq = spec.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException(
                    "--storage-host '" + spec + "': write NAME=ENDPOINT[,token=@FILE][,portal=HOST:PORT]...");
        }
        String name = spec.substring(0, eq);
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "--storage-host name '" + name + "': letters, digits, '.', '_' and '-', at most 32");
        }
        String[] parts = spec.substring(eq + 1).split(",");
        String endpoint = parts[0];
        String token = null;
        Path cacert = null;
        String dir = DEFAULT_DIR;
        long quota = 0;
        List<String> portals = new ArrayList<>();
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            int k = p.indexOf('=');
            String key = k < 0 ? p : p.substring(0, k);
            String value = k < 0 ? "" : p.substring(k + 1);
            switch (key) {
                case "token" -> token = SecretText.resolve(value);
                case "portal" -> {
                    if (value.lastIndexOf(':') <= 0) {
                        throw new IllegalArgumentException(
                                "--storage-host " + name + ": portal '" + value + "' is not HOST:PORT");
                    }
                    portals.add(value);
                }
                case "cacert" -> cacert = Path.of(value);
                case "dir" -> dir = value;
                case "capacity" -> quota = Sizes.parse(value);
                default ->
                    throw new IllegalArgumentException("--storage-host " + name + ": unknown option '" + key
                            + "' (token, cacert, portal, dir, capacity)");
            }
        }
        if (portals.isEmpty()) {
            throw new IllegalArgumentException(
                    "--storage-host " + name + ": give at least one portal=HOST:PORT hosts connect to");
        }
        return new StorageHost(name, new ManagementClient(endpoint, token, cacert), portals, dir, quota);
    }

    /** The subsystems of the target, as nvmf_get_subsystems returns them. */
    JsonNode subsystems() throws IOException {
        return api.call("nvmf_get_subsystems", null);
    }

    /** The subsystem named {@code nqn}, or null. */
    JsonNode subsystem(String nqn) throws IOException {
        for (JsonNode s : subsystems()) {
            if (nqn.equals(s.path("nqn").asText())) return s;
        }
        return null;
    }

    /** Bytes a new volume may still take here: the quota less what volumes hold, and no more than the folder's free space. */
    long available() throws IOException {
        long used = 0;
        for (JsonNode s : subsystems()) {
            if (!VolumeId.isVolumeNqn(s.path("nqn").asText())) continue;
            for (JsonNode ns : s.path("namespaces")) used += ns.path("size").asLong();
        }
        long free = Long.MAX_VALUE;
        for (JsonNode f : api.call("jbof_get_capacity", null)) {
            if (dir.equals(f.path("folder").asText()))
                free = f.path("usable_bytes").asLong(free);
        }
        long left = quota > 0 ? Math.max(0, quota - used) : Long.MAX_VALUE;
        return Math.min(left, free);
    }

    /** Creates the volume's subsystem (only the hosts it is published to may connect) and its namespace file. */
    void create(String nqn, String path, long size, String uuid) throws IOException {
        ObjectNode p = ManagementClient.params()
                .put("nqn", nqn)
                .put("allow_any_host", false)
                .put("model_number", "jbof csi volume");
        api.call("nvmf_create_subsystem", p);
        ObjectNode ns = ManagementClient.params()
                .put("path", path)
                .put("size", Long.toString(size))
                .put("uuid", uuid);
        ObjectNode q = ManagementClient.params().put("nqn", nqn);
        q.set("namespace", ns);
        try {
            api.call("nvmf_subsystem_add_ns", q);
        } catch (IOException e) {
            // The subsystem is ours (we just made it): take it away, so that a retry starts clean.
            try {
                delete(nqn);
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /** Deletes the volume's subsystem and its namespace file, so a volume made later under the same name starts empty. */
    void delete(String nqn) throws IOException {
        api.call(
                "nvmf_delete_subsystem",
                ManagementClient.params().put("nqn", nqn).put("delete_files", true));
    }

    long resize(String nqn, int nsid, long size) throws IOException {
        ObjectNode p =
                ManagementClient.params().put("nqn", nqn).put("nsid", nsid).put("size", Long.toString(size));
        return api.call("jbof_subsystem_resize_ns", p).asLong();
    }

    /** Allows {@code hostNqn}; with {@code auth}, only after DH-HMAC-CHAP with its keys (which replace earlier ones). */
    void addHost(String nqn, String hostNqn, DhchapSecrets auth) throws IOException {
        ObjectNode p = ManagementClient.params().put("nqn", nqn).put("host", hostNqn);
        if (auth != null) {
            p.put("dhchap_key", auth.host());
            if (auth.ctrl() != null) p.put("dhchap_ctrlr_key", auth.ctrl());
        }
        api.call("nvmf_subsystem_add_host", p);
    }

    void removeHost(String nqn, String hostNqn) throws IOException {
        api.call(
                "nvmf_subsystem_remove_host",
                ManagementClient.params().put("nqn", nqn).put("host", hostNqn));
    }
}
