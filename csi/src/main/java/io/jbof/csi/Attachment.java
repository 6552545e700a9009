package io.jbof.csi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * What a staged volume holds on this node, kept in STATE_DIR/KEY.json so that a restarted driver can
 * still undo it: the block device it is attached as, the subsystem, and what the attacher made (a jbof
 * mount's process and folder; nothing more for the kernel's nvme-tcp, whose controllers are found by
 * subsystem NQN in sysfs).
 */
record Attachment(String device, String nqn, long pid, String mountDir) {
    void save(Path file) throws IOException {
        ObjectNode o =
                ManagementClient.JSON.createObjectNode().put("device", device).put("nqn", nqn);
        if (mountDir != null) o.put("pid", pid).put("mount_dir", mountDir);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, o.toString());
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The attachment saved in {@code file}, or null when there is none. */
    static Attachment load(Path file) throws IOException {
        if (!Files.exists(file)) return null;
        JsonNode o = ManagementClient.JSON.readTree(Files.readString(file));
        return new Attachment(
                o.path("device").asText(null),
                o.path("nqn").asText(null),
                o.path("pid").asLong(),
                o.path("mount_dir").asText(null));
    }
}
