package io.jbof.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.csi.v1.CapacityRange;
import io.jbof.csi.v1.ControllerExpandVolumeRequest;
import io.jbof.csi.v1.ControllerExpandVolumeResponse;
import io.jbof.csi.v1.ControllerPublishVolumeRequest;
import io.jbof.csi.v1.ControllerPublishVolumeResponse;
import io.jbof.csi.v1.CreateVolumeRequest;
import io.jbof.csi.v1.CreateVolumeResponse;
import io.jbof.csi.v1.NodeExpandVolumeRequest;
import io.jbof.csi.v1.NodeExpandVolumeResponse;
import io.jbof.csi.v1.NodeGetInfoRequest;
import io.jbof.csi.v1.NodeGetInfoResponse;
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
import io.jbof.csi.v1.Volume;
import io.jbof.csi.v1.VolumeCapability;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Node service with --attach jbof, as kubelet drives it after the controller's calls: a real target,
 * a real jbof mount process (scripts/jbof), a loop device, ext4 made and mounted, bind mounts; needs
 * root, /dev/fuse, losetup and mkfs.ext4 (skipped with the reason otherwise).
 */
class NodeServiceIT {
    static final long MIB = 1 << 20;
    static final String NODE = "nqn.2014-08.org.nvmexpress:uuid:cccccccc-0000-0000-0000-00000000000c";
    static final Path ROOT =
            Path.of(System.getProperty("jbof.root", "..")).toAbsolutePath().normalize();
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

    @TempDir
    Path dir;

    StorageTarget storage;
    CsiServer csi;
    CsiClient client;
    Path state;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        assumeTrue("root".equals(System.getProperty("user.name")), "the node service mounts: run as root");
        for (String tool : List.of("losetup", "mkfs.ext4", "blkid", "resize2fs")) {
            assumeTrue(
                    Files.isExecutable(Path.of("/usr/sbin", tool)) || Files.isExecutable(Path.of("/sbin", tool)),
                    tool + " is missing");
        }
        storage = StorageTarget.start(dir, "s1");
        state = dir.resolve("state");
        NodeService node = new NodeService(
                NODE, state, List.of(ROOT.resolve("scripts/jbof").toString()));
        ControllerService controller = new ControllerService(List.of(StorageHost.parse(storage.option("s1", null))));
        csi = new CsiServer(
                "unix://" + dir.resolve("csi.sock"), List.of(IdentityService.bind(), controller.bind(), node.bind()));
        client = new CsiClient(csi.socket());
    }

    /** Every (volume, staging, target) a test set up, undone after it whatever happened, so no mount outlives a failed test. */
    final List<String[]> used = new java.util.ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (String[] u : used) {
            try {
                unpublish(Map.of("id", u[0]), Path.of(u[2]));
                unstage(Map.of("id", u[0]), Path.of(u[1]));
            } catch (RuntimeException e) {
                System.err.println("cleanup of " + u[0] + ": " + e);
            }
        }
        if (client != null) client.close();
        if (csi != null) csi.close();
        if (storage != null) storage.close();
    }

    /** CreateVolume and ControllerPublishVolume to this node, as the provisioner and the attacher do; the publish context. */
    Map<String, String> provision(String name, VolumeCapability cap) {
        Volume v = client.call(
                        "Controller",
                        "CreateVolume",
                        CreateVolumeRequest.newBuilder()
                                .setName(name)
                                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                                .addVolumeCapabilities(cap)
                                .build(),
                        CreateVolumeResponse.getDefaultInstance())
                .getVolume();
        Map<String, String> ctx = client.call(
                        "Controller",
                        "ControllerPublishVolume",
                        ControllerPublishVolumeRequest.newBuilder()
                                .setVolumeId(v.getVolumeId())
                                .setNodeId(NODE)
                                .setVolumeCapability(cap)
                                .build(),
                        ControllerPublishVolumeResponse.getDefaultInstance())
                .getPublishContextMap();
        return Map.of("id", v.getVolumeId(), "nqn", ctx.get("nqn"), "portals", ctx.get("portals"));
    }

    void stage(Map<String, String> v, Path staging, VolumeCapability cap) {
        client.call(
                "Node",
                "NodeStageVolume",
                NodeStageVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .putPublishContext("nqn", v.get("nqn"))
                        .putPublishContext("portals", v.get("portals"))
                        .setStagingTargetPath(staging.toString())
                        .setVolumeCapability(cap)
                        .build(),
                NodeStageVolumeResponse.getDefaultInstance());
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

    @Test
    void aVolumeIsFormattedOnceMountedPublishedAndItsDataOutlivesUnstageAndStageAgain() throws Exception {
        assertEquals(
                NODE,
                client.call(
                                "Node",
                                "NodeGetInfo",
                                NodeGetInfoRequest.getDefaultInstance(),
                                NodeGetInfoResponse.getDefaultInstance())
                        .getNodeId());
        Map<String, String> v = provision("pvc-node", EXT4);
        Path staging = dir.resolve("staging");
        Path target = dir.resolve("pod/volume");
        used.add(new String[] {v.get("id"), staging.toString(), target.toString()});
        stage(v, staging, EXT4);
        stage(v, staging, EXT4); // kubelet retries: nothing changes
        assertEquals("ext4", Mounts.typeAt(staging));
        publish(v, staging, target, EXT4);
        Files.writeString(target.resolve("hello.txt"), "written through jbof\n");
        unpublish(v, target);
        assertFalse(Files.exists(target), "the target path is removed");
        unstage(v, staging);
        assertNull(Mounts.typeAt(staging));
        VolumeId id = VolumeId.parse(v.get("id"));
        assertFalse(Files.exists(state.resolve(id.key() + ".json")), "nothing is left attached");
        assertNull(Mounts.typeAt(state.resolve(id.key())), "its jbof mount is gone");
        unstage(v, staging); // again: still OK

        stage(v, staging, EXT4);
        publish(v, staging, target, EXT4);
        assertEquals(
                "written through jbof\n",
                Files.readString(target.resolve("hello.txt")),
                "not formatted again: the data is there");
        long before = total(v, target);
        // Offline expansion, as the driver declares it: the CO grows a volume while it is not published.
        unpublish(v, target);
        unstage(v, staging);
        ControllerExpandVolumeResponse grown = client.call(
                "Controller",
                "ControllerExpandVolume",
                ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(128 * MIB))
                        .build(),
                ControllerExpandVolumeResponse.getDefaultInstance());
        assertEquals(128 * MIB, grown.getCapacityBytes());
        stage(v, staging, EXT4);
        NodeExpandVolumeResponse onNode = client.call(
                "Node",
                "NodeExpandVolume",
                NodeExpandVolumeRequest.newBuilder()
                        .setVolumeId(v.get("id"))
                        .setVolumePath(staging.toString())
                        .setStagingTargetPath(staging.toString())
                        .setVolumeCapability(EXT4)
                        .build(),
                NodeExpandVolumeResponse.getDefaultInstance());
        assertEquals(128 * MIB, onNode.getCapacityBytes());
        publish(v, staging, target, EXT4);
        assertTrue(total(v, target) > before + 32 * MIB, "the file system grew: " + before + " -> " + total(v, target));
        assertEquals("written through jbof\n", Files.readString(target.resolve("hello.txt")));
        unpublish(v, target);
        unstage(v, staging);
    }

    @Test
    void aRawBlockVolumeIsPublishedAsADeviceFile() throws Exception {
        Map<String, String> v = provision("pvc-block", BLOCK);
        Path staging = dir.resolve("staging-b");
        Path target = dir.resolve("pod/dev");
        used.add(new String[] {v.get("id"), staging.toString(), target.toString()});
        stage(v, staging, BLOCK);
        publish(v, staging, target, BLOCK);
        assertEquals(64 * MIB, total(v, target));
        byte[] data = "raw block bytes".getBytes();
        try (FileChannel ch = FileChannel.open(target, StandardOpenOption.WRITE, StandardOpenOption.SYNC)) {
            ch.write(ByteBuffer.wrap(data), 4096);
        }
        unpublish(v, target);
        unstage(v, staging);
        stage(v, staging, BLOCK);
        publish(v, staging, target, BLOCK);
        ByteBuffer back = ByteBuffer.allocate(data.length);
        try (FileChannel ch = FileChannel.open(target, StandardOpenOption.READ)) {
            ch.read(back, 4096);
        }
        assertEquals(new String(data), new String(back.array()));
        unpublish(v, target);
        unstage(v, staging);
    }
}
