package io.jbof.csi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.jbof.csi.v1.NodeExpandVolumeRequest;
import io.jbof.csi.v1.NodeExpandVolumeResponse;
import io.jbof.csi.v1.NodeGetCapabilitiesRequest;
import io.jbof.csi.v1.NodeGetCapabilitiesResponse;
import io.jbof.csi.v1.NodeGetInfoRequest;
import io.jbof.csi.v1.NodeGetInfoResponse;
import io.jbof.csi.v1.NodeGetVolumeStatsRequest;
import io.jbof.csi.v1.NodeGetVolumeStatsResponse;
import io.jbof.csi.v1.NodePublishVolumeRequest;
import io.jbof.csi.v1.NodePublishVolumeResponse;
import io.jbof.csi.v1.NodeServiceCapability;
import io.jbof.csi.v1.NodeStageVolumeRequest;
import io.jbof.csi.v1.NodeStageVolumeResponse;
import io.jbof.csi.v1.NodeUnpublishVolumeRequest;
import io.jbof.csi.v1.NodeUnpublishVolumeResponse;
import io.jbof.csi.v1.NodeUnstageVolumeRequest;
import io.jbof.csi.v1.NodeUnstageVolumeResponse;
import io.jbof.csi.v1.VolumeCapability;
import io.jbof.csi.v1.VolumeUsage;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CSI Node service with {@code --attach jbof}: a volume is attached by a {@code jbof mount} process
 * of its own (so it outlives a restart of the driver) and a loop device over the mount's file, then
 * formatted only when blank and mounted at the staging path; publishing bind-mounts it. What a volume
 * holds on the node is written to STATE_DIR/KEY.json, so a restarted driver can still undo it, and an
 * unstage that cannot prove the volume detached fails instead of reporting success.
 */
final class NodeService {
    private static final Logger log = LoggerFactory.getLogger(NodeService.class);
    /** How long a jbof mount may take to show its file. */
    private static final long ATTACH_TIMEOUT_MS = 60_000;

    private final String nodeId;
    private final Path stateDir;
    private final List<String> jbof;
    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();

    /** {@code jbof}: the command that runs jbof (its launcher script, or java -jar ...). */
    NodeService(String nodeId, Path stateDir, List<String> jbof) throws IOException {
        this.nodeId = nodeId;
        try {
            this.stateDir = Files.createDirectories(stateDir);
        } catch (IOException e) {
            throw new IOException(
                    "cannot create the state folder " + stateDir + " (--state-dir): "
                            + e.getClass().getSimpleName(),
                    e);
        }
        this.jbof = List.copyOf(jbof);
    }

    ServerServiceDefinition bind() {
        return new CsiMethods.Binder("Node")
                .unary(
                        "NodeStageVolume",
                        NodeStageVolumeRequest.getDefaultInstance(),
                        NodeStageVolumeResponse.getDefaultInstance(),
                        this::stage)
                .unary(
                        "NodeUnstageVolume",
                        NodeUnstageVolumeRequest.getDefaultInstance(),
                        NodeUnstageVolumeResponse.getDefaultInstance(),
                        this::unstage)
                .unary(
                        "NodePublishVolume",
                        NodePublishVolumeRequest.getDefaultInstance(),
                        NodePublishVolumeResponse.getDefaultInstance(),
                        this::publish)
                .unary(
                        "NodeUnpublishVolume",
                        NodeUnpublishVolumeRequest.getDefaultInstance(),
                        NodeUnpublishVolumeResponse.getDefaultInstance(),
                        this::unpublish)
                .unary(
                        "NodeGetVolumeStats",
                        NodeGetVolumeStatsRequest.getDefaultInstance(),
                        NodeGetVolumeStatsResponse.getDefaultInstance(),
                        this::stats)
                .unary(
                        "NodeExpandVolume",
                        NodeExpandVolumeRequest.getDefaultInstance(),
                        NodeExpandVolumeResponse.getDefaultInstance(),
                        this::expand)
                .unary(
                        "NodeGetCapabilities",
                        NodeGetCapabilitiesRequest.getDefaultInstance(),
                        NodeGetCapabilitiesResponse.getDefaultInstance(),
                        r -> capabilities())
                .unary(
                        "NodeGetInfo",
                        NodeGetInfoRequest.getDefaultInstance(),
                        NodeGetInfoResponse.getDefaultInstance(),
                        r -> NodeGetInfoResponse.newBuilder().setNodeId(nodeId).build())
                .build();
    }

    // ---- stage / unstage ----

    private NodeStageVolumeResponse stage(NodeStageVolumeRequest r) throws IOException {
        VolumeId id = volumeId(r.getVolumeId());
        if (r.getStagingTargetPath().isEmpty()) throw ControllerService.invalid("staging_target_path is required");
        if (!r.hasVolumeCapability()) throw ControllerService.invalid("volume_capability is required");
        String why = ControllerService.unsupported(r.getVolumeCapability());
        if (why != null) throw ControllerService.invalid(why);
        Map<String, String> ctx = r.getPublishContextCount() > 0 ? r.getPublishContextMap() : r.getVolumeContextMap();
        String nqn = ctx.get(ControllerService.CTX_NQN);
        String portals = ctx.get(ControllerService.CTX_PORTALS);
        if (nqn == null || portals == null) {
            throw ControllerService.invalid(
                    "publish_context lacks nqn and portals: was the volume published to this node?");
        }
        DhchapSecrets auth = DhchapSecrets.of(r.getSecretsMap());
        Path staging = Path.of(r.getStagingTargetPath());
        synchronized (lock(id.key())) {
            Attachment a = Attachment.load(stateFile(id));
            if (a == null || !a.alive()) {
                if (a != null) detach(id, a); // a mount that died (the driver or the node restarted): start over
                a = attach(id, nqn, List.of(portals.split(",")), auth);
            }
            if (r.getVolumeCapability().hasMount() && !Mounts.isMountPoint(staging)) {
                VolumeCapability.MountVolume m = r.getVolumeCapability().getMount();
                String fs = m.getFsType().isEmpty() ? "ext4" : m.getFsType();
                if (blank(a.device)) {
                    log.info("volume {}: formatting {} as {}", id, a.device, fs);
                    Commands.run(List.of("mkfs", "-t", fs, a.device));
                } else if (fs.startsWith("ext") && extBytes(a.device) < deviceBytes(a.device)) {
                    // Grown while unpublished (offline expansion): the file system takes the space before it is
                    // mounted.
                    log.info("volume {}: growing its {} to the device's {} bytes", id, fs, deviceBytes(a.device));
                    try {
                        Commands.run(List.of("e2fsck", "-f", "-p", a.device));
                    } catch (Commands.Failed e) {
                        if (e.status != 1) throw e; // 1: errors corrected
                    }
                    Commands.run(List.of("resize2fs", a.device));
                }
                Files.createDirectories(staging);
                List<String> mount = new ArrayList<>(List.of("mount", "-t", fs));
                if (m.getMountFlagsCount() > 0) mount.addAll(List.of("-o", String.join(",", m.getMountFlagsList())));
                mount.addAll(List.of(a.device, staging.toString()));
                Commands.run(mount);
            }
            log.info("volume {} staged at {} ({})", id, staging, a.device);
        }
        return NodeStageVolumeResponse.getDefaultInstance();
    }

    private NodeUnstageVolumeResponse unstage(NodeUnstageVolumeRequest r) throws IOException {
        VolumeId id = volumeId(r.getVolumeId());
        if (r.getStagingTargetPath().isEmpty()) throw ControllerService.invalid("staging_target_path is required");
        Path staging = Path.of(r.getStagingTargetPath());
        synchronized (lock(id.key())) {
            if (Mounts.isMountPoint(staging)) Commands.run(List.of("umount", staging.toString()));
            Attachment a = Attachment.load(stateFile(id));
            if (a != null) detach(id, a);
        }
        return NodeUnstageVolumeResponse.getDefaultInstance();
    }

    /**
     * Starts the volume's jbof mount through the first of its portals that answers, waits for its file, and
     * puts a loop device over it. DH-HMAC-CHAP secrets reach the mount as @FILE (mode 0600, removed once it
     * runs), never on its command line.
     */
    private Attachment attach(VolumeId id, String nqn, List<String> portals, DhchapSecrets auth) throws IOException {
        Path dir = Files.createDirectories(stateDir.resolve(id.key()));
        if (Mounts.isMountPoint(dir))
            Commands.run(List.of("umount", "-l", dir.toString())); // a mount whose process died
        List<Path> secretFiles = new ArrayList<>();
        try {
            List<String> authArgs = new ArrayList<>();
            if (auth != null) {
                authArgs.addAll(List.of("--dhchap-secret", "@" + secretFile(id, "dhchap", auth.host(), secretFiles)));
                if (auth.ctrl() != null) {
                    authArgs.addAll(List.of(
                            "--dhchap-ctrl-secret", "@" + secretFile(id, "dhchap-ctrl", auth.ctrl(), secretFiles)));
                }
            }
            List<String> failures = new ArrayList<>();
            for (String portal : portals) {
                try {
                    return attachVia(id, nqn, portal.strip(), authArgs, dir);
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) throw e;
                    failures.add(e.getStatus().getDescription());
                    log.warn("volume {}: {}", id, e.getStatus().getDescription());
                }
            }
            throw Status.UNAVAILABLE
                    .withDescription("no portal of " + nqn + " could be attached: " + String.join("; ", failures))
                    .asRuntimeException();
        } finally {
            for (Path f : secretFiles) Files.deleteIfExists(f);
        }
    }

    /** Writes {@code secret} to a file only root reads, for a jbof mount's @FILE option. */
    private Path secretFile(VolumeId id, String kind, String secret, List<Path> made) throws IOException {
        Path f = stateDir.resolve(id.key() + "." + kind);
        Files.deleteIfExists(f);
        Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        made.add(f);
        Files.writeString(f, secret + "\n");
        return f;
    }

    /** One portal's try: the jbof mount process, ready or failed (UNAVAILABLE when it ended). */
    private Attachment attachVia(VolumeId id, String nqn, String portal, List<String> authArgs, Path dir)
            throws IOException {
        int colon = portal.lastIndexOf(':');
        List<String> cmd = new ArrayList<>(jbof);
        cmd.addAll(List.of(
                "mount",
                "-a",
                portal.substring(0, colon),
                "-s",
                portal.substring(colon + 1),
                "-n",
                nqn,
                "-q",
                nodeId,
                "--direct-io"));
        cmd.addAll(authArgs);
        cmd.add(dir.toString());
        Path logFile = stateDir.resolve(id.key() + ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(logFile.toFile())
                .start();
        Path file = dir.resolve("ns1");
        long deadline = System.currentTimeMillis() + ATTACH_TIMEOUT_MS;
        try {
            // The mount is ready when the kernel shows it and its file is there; the process ending first is a failure.
            while (!isFuse(Mounts.typeAt(dir)) || !Files.isRegularFile(file)) {
                if (p.waitFor(50, TimeUnit.MILLISECONDS)) {
                    throw Status.UNAVAILABLE
                            .withDescription("jbof mount of " + nqn + " at " + portal + " ended: "
                                    + Files.readString(logFile).strip())
                            .asRuntimeException();
                }
                if (System.currentTimeMillis() > deadline) {
                    p.destroyForcibly();
                    throw Status.DEADLINE_EXCEEDED
                            .withDescription("jbof mount of " + nqn + " at " + portal + " showed no file within 60 s")
                            .asRuntimeException();
                }
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while attaching " + id, e);
        }
        String device = Commands.run(List.of("losetup", "--find", "--show", "--direct-io=on", file.toString()))
                .strip();
        Attachment a = new Attachment(p.pid(), dir.toString(), device);
        a.save(stateFile(id));
        log.info("volume {} attached: jbof mount (pid {}) at {}, {}", id, p.pid(), dir, device);
        return a;
    }

    /** Undoes {@link #attach}; fails, rather than say success, unless the mount process is gone and nothing is left mounted. */
    private void detach(VolumeId id, Attachment a) throws IOException {
        if (a.device != null && isLoopOver(a.device, Path.of(a.mountDir).resolve("ns1")))
            Commands.run(List.of("losetup", "-d", a.device));
        Path dir = Path.of(a.mountDir);
        if (Mounts.isMountPoint(dir)) {
            List<String> cmd = new ArrayList<>(jbof);
            cmd.addAll(List.of("umount", dir.toString()));
            Commands.run(cmd);
        }
        Optional<ProcessHandle> p = ProcessHandle.of(a.pid);
        if (p.isPresent()) {
            try {
                p.get().onExit().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw Status.INTERNAL
                        .withDescription(
                                "volume " + id + ": its jbof mount (pid " + a.pid + ") did not end after umount")
                        .asRuntimeException();
            }
        }
        if (Mounts.isMountPoint(dir)) {
            throw Status.INTERNAL
                    .withDescription("volume " + id + " is still mounted at " + dir + " after its detach")
                    .asRuntimeException();
        }
        Files.deleteIfExists(stateFile(id));
        Files.deleteIfExists(dir);
        log.info("volume {} detached", id);
    }

    // ---- publish / unpublish ----

    private NodePublishVolumeResponse publish(NodePublishVolumeRequest r) throws IOException {
        VolumeId id = volumeId(r.getVolumeId());
        if (r.getTargetPath().isEmpty()) throw ControllerService.invalid("target_path is required");
        if (!r.hasVolumeCapability()) throw ControllerService.invalid("volume_capability is required");
        if (r.getStagingTargetPath().isEmpty()) {
            throw Status.FAILED_PRECONDITION
                    .withDescription("staging_target_path is required: the volume is staged first")
                    .asRuntimeException();
        }
        Path target = Path.of(r.getTargetPath());
        synchronized (lock(id.key())) {
            Attachment a = Attachment.load(stateFile(id));
            if (a == null)
                throw Status.FAILED_PRECONDITION
                        .withDescription("volume " + id + " is not staged on this node")
                        .asRuntimeException();
            if (Mounts.isMountPoint(target)) return NodePublishVolumeResponse.getDefaultInstance();
            String source;
            if (r.getVolumeCapability().hasBlock()) {
                Files.createDirectories(target.toAbsolutePath().getParent());
                if (!Files.exists(target)) Files.createFile(target);
                source = a.device;
            } else {
                Files.createDirectories(target);
                source = r.getStagingTargetPath();
            }
            Commands.run(List.of("mount", "--bind", source, target.toString()));
            if (r.getReadonly()) Commands.run(List.of("mount", "-o", "remount,bind,ro", target.toString()));
        }
        return NodePublishVolumeResponse.getDefaultInstance();
    }

    private NodeUnpublishVolumeResponse unpublish(NodeUnpublishVolumeRequest r) throws IOException {
        VolumeId id = volumeId(r.getVolumeId());
        if (r.getTargetPath().isEmpty()) throw ControllerService.invalid("target_path is required");
        Path target = Path.of(r.getTargetPath());
        synchronized (lock(id.key())) {
            if (Mounts.isMountPoint(target)) Commands.run(List.of("umount", target.toString()));
            Files.deleteIfExists(target);
        }
        return NodeUnpublishVolumeResponse.getDefaultInstance();
    }

    // ---- stats / expand / capabilities ----

    private NodeGetVolumeStatsResponse stats(NodeGetVolumeStatsRequest r) throws IOException {
        volumeId(r.getVolumeId());
        if (r.getVolumePath().isEmpty()) throw ControllerService.invalid("volume_path is required");
        Path p = Path.of(r.getVolumePath());
        if (!Files.exists(p)) throw ControllerService.notFound("nothing at " + p);
        NodeGetVolumeStatsResponse.Builder b = NodeGetVolumeStatsResponse.newBuilder();
        if (Files.isDirectory(p)) {
            FileStore fs = Files.getFileStore(p);
            b.addUsage(VolumeUsage.newBuilder()
                    .setUnit(VolumeUsage.Unit.BYTES)
                    .setTotal(fs.getTotalSpace())
                    .setAvailable(fs.getUsableSpace())
                    .setUsed(fs.getTotalSpace() - fs.getUnallocatedSpace()));
        } else {
            long size = deviceBytes(p.toString());
            b.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.BYTES).setTotal(size));
        }
        return b.build();
    }

    private NodeExpandVolumeResponse expand(NodeExpandVolumeRequest r) throws IOException {
        VolumeId id = volumeId(r.getVolumeId());
        if (r.getVolumePath().isEmpty()) throw ControllerService.invalid("volume_path is required");
        synchronized (lock(id.key())) {
            Attachment a = Attachment.load(stateFile(id));
            if (a == null) throw ControllerService.notFound("volume " + id + " is not staged on this node");
            Commands.run(List.of("losetup", "--set-capacity", a.device)); // the loop device takes the mount's file size
            boolean block = r.hasVolumeCapability()
                    ? r.getVolumeCapability().hasBlock()
                    : !Files.isDirectory(Path.of(r.getVolumePath()));
            long size = deviceBytes(a.device);
            // A file system grown at stage (the usual offline case) is left alone; one still smaller grows online.
            if (!block && extBytes(a.device) < size) Commands.run(List.of("resize2fs", a.device));
            return NodeExpandVolumeResponse.newBuilder().setCapacityBytes(size).build();
        }
    }

    private static NodeGetCapabilitiesResponse capabilities() {
        NodeGetCapabilitiesResponse.Builder b = NodeGetCapabilitiesResponse.newBuilder();
        for (NodeServiceCapability.RPC.Type t : List.of(
                NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME,
                NodeServiceCapability.RPC.Type.GET_VOLUME_STATS,
                NodeServiceCapability.RPC.Type.EXPAND_VOLUME)) {
            b.addCapabilities(NodeServiceCapability.newBuilder()
                    .setRpc(NodeServiceCapability.RPC.newBuilder().setType(t)));
        }
        return b.build();
    }

    // ---- helpers ----

    /** Whether {@code device} holds no file system, partition table or other signature blkid knows: only then is it formatted. */
    private static boolean blank(String device) throws IOException {
        try {
            Commands.run(List.of("blkid", "-p", device));
            return false;
        } catch (Commands.Failed e) {
            if (e.status == 2) return true; // blkid: nothing found
            throw e;
        }
    }

    private static long deviceBytes(String device) throws IOException {
        return Long.parseLong(
                Commands.run(List.of("blockdev", "--getsize64", device)).strip());
    }

    /** The size of the ext2/3/4 file system on {@code device} (its superblock's block count times block size). */
    private static long extBytes(String device) throws IOException {
        long blocks = -1;
        long blockSize = -1;
        for (String line : Commands.run(List.of("dumpe2fs", "-h", device)).split("\n")) {
            if (line.startsWith("Block count:"))
                blocks = Long.parseLong(line.substring(12).strip());
            if (line.startsWith("Block size:"))
                blockSize = Long.parseLong(line.substring(11).strip());
        }
        if (blocks < 0 || blockSize < 0)
            throw new IOException("dumpe2fs -h " + device + " gave no block count and size");
        return blocks * blockSize;
    }

    private static boolean isLoopOver(String device, Path file) {
        try {
            return Commands.run(List.of("losetup", "--noheadings", "--output", "BACK-FILE", device))
                    .strip()
                    .equals(file.toString());
        } catch (IOException e) {
            return false; // no such loop device any more
        }
    }

    private static VolumeId volumeId(String raw) {
        if (raw.isEmpty()) throw ControllerService.invalid("volume_id is required");
        VolumeId id = VolumeId.parse(raw);
        if (id == null) throw ControllerService.notFound("volume " + raw + " is not one this driver made");
        return id;
    }

    private Path stateFile(VolumeId id) {
        return stateDir.resolve(id.key() + ".json");
    }

    private Object lock(String key) {
        return locks.computeIfAbsent(key, k -> new Object());
    }

    /** What a staged volume holds on this node: its jbof mount process, that mount's folder, its loop device. */
    record Attachment(long pid, String mountDir, String device) {
        boolean alive() throws IOException {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
                    && Mounts.isMountPoint(Path.of(mountDir));
        }

        void save(Path file) throws IOException {
            ObjectNode o = ManagementClient.JSON
                    .createObjectNode()
                    .put("pid", pid)
                    .put("mount_dir", mountDir)
                    .put("device", device);
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, o.toString());
            Files.move(
                    tmp,
                    file,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }

        static Attachment load(Path file) throws IOException {
            if (!Files.exists(file)) return null;
            JsonNode o = ManagementClient.JSON.readTree(Files.readString(file));
            return new Attachment(
                    o.path("pid").asLong(),
                    o.path("mount_dir").asText(),
                    o.path("device").asText(null));
        }
    }

    private static boolean isFuse(String type) {
        return type != null && (type.equals("fuse") || type.startsWith("fuse."));
    }
}
