package io.jbof.csi;

import io.jbof.csi.v1.CapacityRange;
import io.jbof.csi.v1.ControllerExpandVolumeRequest;
import io.jbof.csi.v1.ControllerExpandVolumeResponse;
import io.jbof.csi.v1.ControllerPublishVolumeRequest;
import io.jbof.csi.v1.ControllerPublishVolumeResponse;
import io.jbof.csi.v1.CreateVolumeRequest;
import io.jbof.csi.v1.CreateVolumeResponse;
import io.jbof.csi.v1.DeleteVolumeRequest;
import io.jbof.csi.v1.DeleteVolumeResponse;
import io.jbof.csi.v1.NodeGetVolumeStatsRequest;
import io.jbof.csi.v1.NodeGetVolumeStatsResponse;
import io.jbof.csi.v1.NodePublishVolumeRequest;
import io.jbof.csi.v1.NodePublishVolumeResponse;
import io.jbof.csi.v1.NodeStageVolumeRequest;
import io.jbof.csi.v1.NodeStageVolumeResponse;
import io.jbof.csi.v1.NodeUnpublishVolumeRequest;
import io.jbof.csi.v1.NodeUnpublishVolumeResponse;
import io.jbof.csi.v1.NodeUnstageVolumeRequest;
import io.jbof.csi.v1.NodeUnstageVolumeResponse;
import io.jbof.csi.v1.VolumeCapability;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The calls Kubernetes makes on a driver's socket for one node: the provisioner's and attacher's
 * (CreateVolume, ControllerPublishVolume, expand, delete) and kubelet's (stage, publish, stats). A
 * volume is its ID (key "id") with the publish context the node is given (nqn, portals, uuid).
 */
final class KubeletCalls {
    static final long MIB = 1 << 20;
    static final VolumeCapability EXT4 = VolumeCapability.newBuilder()
            .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
            .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                    .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .build();
    static final VolumeCapability BLOCK = VolumeCapability.newBuilder()
            .setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
            .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                    .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .build();

    private final CsiClient client;
    private final String node;
    /** Every (volume, staging path, target path) a test set up, for {@link #undoAll()}. */
    private final List<String[]> used = new ArrayList<>();

    KubeletCalls(CsiClient client, String node) {
        this.client = client;
        this.node = node;
    }

    /** CreateVolume of {@code bytes}; the volume's ID. */
    String create(String name, long bytes, VolumeCapability cap) {
        return client.call(
                        "Controller",
                        "CreateVolume",
                        CreateVolumeRequest.newBuilder()
                                .setName(name)
                                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                                .addVolumeCapabilities(cap)
                                .build(),
                        CreateVolumeResponse.getDefaultInstance())
                .getVolume()
                .getVolumeId();
    }

    /** ControllerPublishVolume to this node, as the attacher does; what the node is given. */
    Map<String, String> attach(String id, VolumeCapability cap) {
        Map<String, String> ctx = client.call(
                        "Controller",
                        "ControllerPublishVolume",
                        ControllerPublishVolumeRequest.newBuilder()
                                .setVolumeId(id)
                                .setNodeId(node)
                                .setVolumeCapability(cap)
                                .build(),
                        ControllerPublishVolumeResponse.getDefaultInstance())
                .getPublishContextMap();
        Map<String, String> v = new java.util.HashMap<>(ctx);
        v.put("id", id);
        return Map.copyOf(v);
    }

    /** CreateVolume of 64 MiB and ControllerPublishVolume to this node. */
    Map<String, String> provision(String name, VolumeCapability cap) {
        return attach(create(name, 64 * MIB, cap), cap);
    }

    long expand(String id, long bytes) {
        return client.call(
                        "Controller",
                        "ControllerExpandVolume",
                        ControllerExpandVolumeRequest.newBuilder()
                                .setVolumeId(id)
                                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                                .build(),
                        ControllerExpandVolumeResponse.getDefaultInstance())
                .getCapacityBytes();
    }

    void delete(String id) {
        client.call(
                "Controller",
                "DeleteVolume",
                DeleteVolumeRequest.newBuilder().setVolumeId(id).build(),
                DeleteVolumeResponse.getDefaultInstance());
    }

    void stage(Map<String, String> v, Path staging, VolumeCapability cap) {
        client.call(
                "Node",
                "NodeStageVolume",
                NodeStageVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .putAllPublishContext(context(v))
                        .setStagingTargetPath(staging.toString())
                        .setVolumeCapability(cap)
                        .build(),
                NodeStageVolumeResponse.getDefaultInstance());
    }

    /** The publish context within a volume's map: all but its ID. */
    static Map<String, String> context(Map<String, String> v) {
        Map<String, String> ctx = new java.util.HashMap<>(v);
        ctx.remove("id");
        return ctx;
    }

    void unstage(Map<String, String> v, Path staging) {
        client.call(
                "Node",
                "NodeUnstageVolume",
                NodeUnstageVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .setStagingTargetPath(staging.toString())
                        .build(),
                NodeUnstageVolumeResponse.getDefaultInstance());
    }

    void publish(Map<String, String> v, Path staging, Path target, VolumeCapability cap) {
        client.call(
                "Node",
                "NodePublishVolume",
                NodePublishVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .setStagingTargetPath(staging.toString())
                        .setTargetPath(target.toString())
                        .setVolumeCapability(cap)
                        .build(),
                NodePublishVolumeResponse.getDefaultInstance());
    }

    void unpublish(Map<String, String> v, Path target) {
        client.call(
                "Node",
                "NodeUnpublishVolume",
                NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .setTargetPath(target.toString())
                        .build(),
                NodeUnpublishVolumeResponse.getDefaultInstance());
    }

    /** NodeGetVolumeStats: the bytes the volume (its file system, or its device) holds in all. */
    long total(Map<String, String> v, Path path) {
        return client.call(
                        "Node",
                        "NodeGetVolumeStats",
                        NodeGetVolumeStatsRequest.newBuilder()
                                .setVolumeId(v.get("id"))
                                .setVolumePath(path.toString())
                                .build(),
                        NodeGetVolumeStatsResponse.getDefaultInstance())
                .getUsage(0)
                .getTotal();
    }

    /** Notes that the test attaches volume {@code id} at these paths, for {@link #undoAll()}. */
    void uses(String id, Path staging, Path target) {
        used.add(new String[] {id, staging.toString(), target.toString()});
    }

    /** Unpublishes and unstages every volume {@link #uses} named, whatever the test left, so no mount outlives it. */
    void undoAll() {
        for (String[] u : used) {
            try {
                unpublish(Map.of("id", u[0]), Path.of(u[2]));
                unstage(Map.of("id", u[0]), Path.of(u[1]));
            } catch (RuntimeException e) {
                System.err.println("cleanup of " + u[0] + ": " + e);
            }
        }
    }
}
