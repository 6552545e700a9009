package io.jbof.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.jbof.csi.v1.ControllerPublishVolumeRequest;
import io.jbof.csi.v1.ControllerPublishVolumeResponse;
import io.jbof.csi.v1.NodeExpandVolumeRequest;
import io.jbof.csi.v1.NodeExpandVolumeResponse;
import io.jbof.csi.v1.NodeGetInfoRequest;
import io.jbof.csi.v1.NodeGetInfoResponse;
import io.jbof.csi.v1.NodeStageVolumeRequest;
import io.jbof.csi.v1.NodeStageVolumeResponse;
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
    static final long MIB = KubeletCalls.MIB;
    static final String NODE = "nqn.2014-08.org.nvmexpress:uuid:cccccccc-0000-0000-0000-00000000000c";
    static final Path ROOT =
            Path.of(System.getProperty("jbof.root", "..")).toAbsolutePath().normalize();
    static final VolumeCapability EXT4 = KubeletCalls.EXT4;
    static final VolumeCapability BLOCK = KubeletCalls.BLOCK;

    @TempDir
    Path dir;

    StorageTarget storage;
    CsiServer csi;
    CsiClient client;
    KubeletCalls k;
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
        k = new KubeletCalls(client, NODE);
    }

    @AfterEach
    void stop() throws Exception {
        if (k != null) k.undoAll();
        if (client != null) client.close();
        if (csi != null) csi.close();
        if (storage != null) storage.close();
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
        Map<String, String> v = k.provision("pvc-node", EXT4);
        Path staging = dir.resolve("staging");
        Path target = dir.resolve("pod/volume");
        k.uses(v.get("id"), staging, target);
        k.stage(v, staging, EXT4);
        k.stage(v, staging, EXT4); // kubelet retries: nothing changes
        assertEquals("ext4", Mounts.typeAt(staging));
        k.publish(v, staging, target, EXT4);
        Files.writeString(target.resolve("hello.txt"), "written through jbof\n");
        k.unpublish(v, target);
        assertFalse(Files.exists(target), "the target path is removed");
        k.unstage(v, staging);
        assertNull(Mounts.typeAt(staging));
        VolumeId id = VolumeId.parse(v.get("id"));
        assertFalse(Files.exists(state.resolve(id.key() + ".json")), "nothing is left attached");
        assertNull(Mounts.typeAt(state.resolve(id.key())), "its jbof mount is gone");
        k.unstage(v, staging); // again: still OK

        k.stage(v, staging, EXT4);
        k.publish(v, staging, target, EXT4);
        assertEquals(
                "written through jbof\n",
                Files.readString(target.resolve("hello.txt")),
                "not formatted again: the data is there");
        long before = k.total(v, target);
        // Offline expansion, as the driver declares it: the CO grows a volume while it is not published.
        k.unpublish(v, target);
        k.unstage(v, staging);
        assertEquals(128 * MIB, k.expand(v.get("id"), 128 * MIB));
        k.stage(v, staging, EXT4);
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
        k.publish(v, staging, target, EXT4);
        assertTrue(
                k.total(v, target) > before + 32 * MIB,
                "the file system grew: " + before + " -> " + k.total(v, target));
        assertEquals("written through jbof\n", Files.readString(target.resolve("hello.txt")));
        k.unpublish(v, target);
        k.unstage(v, staging);
    }

    @Test
    void aVolumeWithDhchapSecretsIsStagedThroughTheFirstPortalThatAnswers() throws Exception {
        String secret = ControllerServiceTest.SECRET;
        String id = k.create("pvc-auth", 64 * MIB, EXT4);
        client.call(
                "Controller",
                "ControllerPublishVolume",
                ControllerPublishVolumeRequest.newBuilder()
                        .setVolumeId(id)
                        .setNodeId(NODE)
                        .setVolumeCapability(EXT4)
                        .putSecrets(DhchapSecrets.HOST_KEY, secret)
                        .build(),
                ControllerPublishVolumeResponse.getDefaultInstance());
        Map<String, String> published = k.attach(id, EXT4); // again, as the attacher may: the keys stay
        // A first portal where nothing listens, as a storage host's address that is down.
        Map<String, String> v =
                Map.of("id", id, "nqn", published.get("nqn"), "portals", "127.0.0.1:1," + published.get("portals"));
        Path staging = dir.resolve("staging-auth");
        Path target = dir.resolve("pod/auth");
        k.uses(id, staging, target);
        StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> k.stage(v, staging, EXT4));
        assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode());
        assertTrue(
                refused.getStatus().getDescription().contains("DH-HMAC-CHAP"),
                "without the secret the target refuses: " + refused.getStatus().getDescription());
        client.call(
                "Node",
                "NodeStageVolume",
                NodeStageVolumeRequest.newBuilder()
                        .setVolumeId(id)
                        .putAllPublishContext(KubeletCalls.context(v))
                        .setStagingTargetPath(staging.toString())
                        .setVolumeCapability(EXT4)
                        .putSecrets(DhchapSecrets.HOST_KEY, secret)
                        .build(),
                NodeStageVolumeResponse.getDefaultInstance());
        assertEquals("ext4", Mounts.typeAt(staging));
        k.publish(v, staging, target, EXT4);
        Files.writeString(target.resolve("auth.txt"), "authenticated\n");
        assertEquals("authenticated\n", Files.readString(target.resolve("auth.txt")));
        try (var left = Files.list(state)) {
            assertEquals(
                    List.of(),
                    left.map(f -> f.getFileName().toString())
                            .filter(n -> n.contains("dhchap"))
                            .toList(),
                    "no secret stays on the node's disk");
        }
        k.unpublish(v, target);
        k.unstage(v, staging);
    }

    @Test
    void aRawBlockVolumeIsPublishedAsADeviceFile() throws Exception {
        Map<String, String> v = k.provision("pvc-block", BLOCK);
        Path staging = dir.resolve("staging-b");
        Path target = dir.resolve("pod/dev");
        k.uses(v.get("id"), staging, target);
        k.stage(v, staging, BLOCK);
        k.publish(v, staging, target, BLOCK);
        assertEquals(64 * MIB, k.total(v, target));
        byte[] data = "raw block bytes".getBytes();
        try (FileChannel ch = FileChannel.open(target, StandardOpenOption.WRITE, StandardOpenOption.SYNC)) {
            ch.write(ByteBuffer.wrap(data), 4096);
        }
        k.unpublish(v, target);
        k.unstage(v, staging);
        k.stage(v, staging, BLOCK);
        k.publish(v, staging, target, BLOCK);
        ByteBuffer back = ByteBuffer.allocate(data.length);
        try (FileChannel ch = FileChannel.open(target, StandardOpenOption.READ)) {
            ch.read(back, 4096);
        }
        assertEquals(new String(data), new String(back.array()));
        k.unpublish(v, target);
        k.unstage(v, staging);
    }
}
