package io.jbof.csi;

import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CSI Node service: a volume is attached as a block device by its {@link VolumeAttacher} (a jbof mount
 * and a loop device, or the kernel's nvme-tcp), formatted only when blank and mounted at the staging path;
 * publishing bind-mounts it. What a volume holds on the node is written to STATE_DIR/KEY.json, so a
 * restarted driver can still undo it, and an unstage that cannot prove the volume detached fails instead
 * of reporting success.
 */
final class NodeService {
    private static final Logger log = LoggerFactory.getLogger(NodeService.class);
    /** How long a grown namespace may take to reach the node's device (the kernel rescans asynchronously). */
    private static final long GROW_MS = 30_000;

    private final String nodeId;
    private final Path stateDir;
    private final VolumeAttacher attacher;
    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();

    /** With {@code --attach jbof}; {@code jbof}: the command that runs jbof (its launcher script, or java -jar ...). */
    NodeService(String nodeId, Path stateDir, List<String> jbof) throws IOException {
        this(nodeId, stateDir, dir -> new JbofMountAttacher(nodeId, dir, jbof));
    }

    /** {@code attacher}: made for the state folder, once it exists. */
    NodeService(String nodeId, Path stateDir, Function<Path, VolumeAttacher> attacher) throws IOException {
        this.nodeId = nodeId;
        try {
            this.stateDir = Files.createDirectories(stateDir);
        } catch (IOException e) {
            throw new IOException(
                    "cannot create the state folder " + stateDir + " (--state-dir): "
                            + e.getClass().getSimpleName(),
                    e);
        }
        this.attacher = attacher.apply(this.stateDir);
    }

    /** Whether volumes grow while staged: the Identity service's VolumeExpansion says ONLINE, else OFFLINE. */
    boolean growsOnline() {
        return attacher.growsOnline();
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
        String uuid = ctx.get(ControllerService.CTX_UUID);
        if (nqn == null || portals == null) {
            throw ControllerService.invalid(
                    "publish_context lacks nqn and portals: was the volume published to this node?");
        }
        DhchapSecrets auth = DhchapSecrets.of(r.getSecretsMap());
        Path staging = Path.of(r.getStagingTargetPath());
        synchronized (lock(id.key())) {
            Attachment a = Attachment.load(stateFile(id));
            if (a == null || !attacher.alive(a)) {
                if (a != null) detach(id, a); // an attachment that died (the driver or the node restarted): start over
                a = attacher.attach(id, nqn, uuid, List.of(portals.split(",")), auth);
                a.save(stateFile(id));
            }
            if (r.getVolumeCapability().hasMount() && !Mounts.isMountPoint(staging)) {
                VolumeCapability.MountVolume m = r.getVolumeCapability().getMount();
                String fs = m.getFsType().isEmpty() ? "ext4" : m.getFsType();
                if (Devices.blank(a.device())) {
                    log.info("volume {}: formatting {} as {}", id, a.device(), fs);
                    Commands.run(List.of("mkfs", "-t", fs, a.device()));
                } else if (fs.startsWith("ext") && Devices.extBytes(a.device()) < Devices.bytes(a.device())) {
                    // Grown while unpublished (offline expansion): the file system takes the space before it is
                    // mounted.
                    log.info("volume {}: growing its {} to the device's {} bytes", id, fs, Devices.bytes(a.device()));
                    try {
                        Commands.run(List.of("e2fsck", "-f", "-p", a.device()));
                    } catch (Commands.Failed e) {
                        if (e.status != 1) throw e; // 1: errors corrected
                    }
                    Commands.run(List.of("resize2fs", a.device()));
                }
                Files.createDirectories(staging);
                List<String> mount = new ArrayList<>(List.of("mount", "-t", fs));
                if (m.getMountFlagsCount() > 0) mount.addAll(List.of("-o", String.join(",", m.getMountFlagsList())));
                mount.addAll(List.of(a.device(), staging.toString()));
                Commands.run(mount);
            }
            log.info("volume {} staged at {} ({})", id, staging, a.device());
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

    /** Detaches and forgets the volume; fails, leaving its state, when the attacher cannot prove it gone. */
    private void detach(VolumeId id, Attachment a) throws IOException {
        attacher.detach(id, a, othersOn(id, a.nqn()));
        Files.deleteIfExists(stateFile(id));
        log.info("volume {} detached", id);
    }

    /** How many other volumes staged here attach through subsystem {@code nqn}. */
    private int othersOn(VolumeId id, String nqn) throws IOException {
        int n = 0;
        try (Stream<Path> states = Files.list(stateDir)) {
            for (Path f : states.filter(f -> f.getFileName().toString().endsWith(".json"))
                    .toList()) {
                if (f.equals(stateFile(id))) continue;
                Attachment other = Attachment.load(f);
                if (other != null && nqn != null && nqn.equals(other.nqn())) n++;
            }
        }
        return n;
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
                source = a.device();
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
            long size = Devices.bytes(p.toString());
            b.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.BYTES).setTotal(size));
        }
        return b.build();
    }

    private NodeExpandVolumeResponse expand(NodeExpandVolumeRequest r) throws IOException {
        VolumeId id = volumeId(r.getVolumeId());
        if (r.getVolumePath().isEmpty()) throw ControllerService.invalid("volume_path is required");
        if (!Files.exists(Path.of(r.getVolumePath())))
            throw ControllerService.notFound("nothing at volume_path " + r.getVolumePath());
        synchronized (lock(id.key())) {
            Attachment a = Attachment.load(stateFile(id));
            if (a == null) throw ControllerService.notFound("volume " + id + " is not staged on this node");
            boolean block = r.hasVolumeCapability()
                    ? r.getVolumeCapability().hasBlock()
                    : !Files.isDirectory(Path.of(r.getVolumePath()));
            long want = r.getCapacityRange().getRequiredBytes();
            long size = attacher.refreshSize(a);
            long deadline = System.currentTimeMillis() + GROW_MS;
            while (attacher.growsOnline() && size < want && System.currentTimeMillis() < deadline) {
                try {
                    Thread.sleep(
                            100); // the kernel resizes the device from its rescan a moment later; no event says when
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
                size = Devices.bytes(a.device());
            }
            // A file system grown at stage (the usual offline case) is left alone; one still smaller grows online.
            if (!block && Devices.extBytes(a.device()) < size) Commands.run(List.of("resize2fs", a.device()));
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
}
