package io.jbof.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Message;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.jbof.csi.v1.CapacityRange;
import io.jbof.csi.v1.ControllerExpandVolumeRequest;
import io.jbof.csi.v1.ControllerExpandVolumeResponse;
import io.jbof.csi.v1.ControllerGetCapabilitiesRequest;
import io.jbof.csi.v1.ControllerGetCapabilitiesResponse;
import io.jbof.csi.v1.ControllerPublishVolumeRequest;
import io.jbof.csi.v1.ControllerPublishVolumeResponse;
import io.jbof.csi.v1.ControllerServiceCapability;
import io.jbof.csi.v1.ControllerUnpublishVolumeRequest;
import io.jbof.csi.v1.ControllerUnpublishVolumeResponse;
import io.jbof.csi.v1.CreateVolumeRequest;
import io.jbof.csi.v1.CreateVolumeResponse;
import io.jbof.csi.v1.DeleteVolumeRequest;
import io.jbof.csi.v1.DeleteVolumeResponse;
import io.jbof.csi.v1.GetCapacityRequest;
import io.jbof.csi.v1.GetCapacityResponse;
import io.jbof.csi.v1.GetPluginCapabilitiesRequest;
import io.jbof.csi.v1.GetPluginCapabilitiesResponse;
import io.jbof.csi.v1.GetPluginInfoRequest;
import io.jbof.csi.v1.GetPluginInfoResponse;
import io.jbof.csi.v1.ListVolumesRequest;
import io.jbof.csi.v1.ListVolumesResponse;
import io.jbof.csi.v1.ProbeRequest;
import io.jbof.csi.v1.ProbeResponse;
import io.jbof.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.jbof.csi.v1.ValidateVolumeCapabilitiesResponse;
import io.jbof.csi.v1.Volume;
import io.jbof.csi.v1.VolumeCapability;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.mgmt.JsonRpcDispatcher;
import io.jbof.target.mgmt.ManagementService;
import io.jbof.target.mgmt.RpcHttpServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The driver's Identity and Controller services over its Unix socket, against two real targets as storage hosts. */
class ControllerServiceTest {
    /** A DH-HMAC-CHAP secret (32 zero bytes, SHA-256 transform), as nvme gen-dhchap-key prints one. */
    static final String SECRET = io.jbof.nvme.auth.DhchapKey.format(new byte[32], 1);

    static final long MIB = 1 << 20;
    static final String NODE_A = "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-0000-0000-00000000000a";
    static final String NODE_B = "nqn.2014-08.org.nvmexpress:uuid:bbbbbbbb-0000-0000-0000-00000000000b";
    static final VolumeCapability MOUNT_RW = VolumeCapability.newBuilder()
            .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
            .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                    .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .build();

    @TempDir
    Path dir;

    final List<StorageTarget> storage = new ArrayList<>();
    CsiServer csi;
    CsiClient client;

    @BeforeEach
    void start() throws Exception {
        List<StorageHost> hosts = new ArrayList<>();
        for (String name : List.of("s1", "s2")) {
            StorageTarget t = StorageTarget.start(dir, name);
            storage.add(t);
            // s1 holds 8 MiB of volumes, s2 64 MiB: the third 4 MiB volume goes to s2
            hosts.add(StorageHost.parse(t.option(name, name.equals("s1") ? "8M" : "64M")));
        }
        csi = new CsiServer(
                "unix://" + dir.resolve("csi/csi.sock"),
                List.of(IdentityService.bind(), new ControllerService(hosts).bind()));
        client = new CsiClient(csi.socket());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        csi.close();
        for (StorageTarget t : storage) t.close();
    }

    <Q extends Message, R extends Message> R call(String service, String method, Q request, R response) {
        return client.call(service, method, request, response);
    }

    CreateVolumeResponse create(String name, long required, long limit) {
        CreateVolumeRequest r = CreateVolumeRequest.newBuilder()
                .setName(name)
                .setCapacityRange(
                        CapacityRange.newBuilder().setRequiredBytes(required).setLimitBytes(limit))
                .addVolumeCapabilities(MOUNT_RW)
                .build();
        return call("Controller", "CreateVolume", r, CreateVolumeResponse.getDefaultInstance());
    }

    Status.Code codeOf(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    JsonNode subsystem(int host, String nqn) throws Exception {
        return new StorageHost(
                        "x", new ManagementClient("unix://" + storage.get(host).socket(), null), List.of("h:1"), "/", 0)
                .subsystem(nqn);
    }

    @Test
    void identityNamesTheDriverOffersTheControllerAndIsReady() {
        GetPluginInfoResponse info = call(
                "Identity",
                "GetPluginInfo",
                GetPluginInfoRequest.getDefaultInstance(),
                GetPluginInfoResponse.getDefaultInstance());
        assertEquals("csi.jbof.io", info.getName());
        assertFalse(info.getVendorVersion().isEmpty());
        GetPluginCapabilitiesResponse caps = call(
                "Identity",
                "GetPluginCapabilities",
                GetPluginCapabilitiesRequest.getDefaultInstance(),
                GetPluginCapabilitiesResponse.getDefaultInstance());
        assertTrue(caps.getCapabilitiesList().stream().anyMatch(c -> c.hasService()));
        assertTrue(call("Identity", "Probe", ProbeRequest.getDefaultInstance(), ProbeResponse.getDefaultInstance())
                .getReady()
                .getValue());
        ControllerGetCapabilitiesResponse cc = call(
                "Controller",
                "ControllerGetCapabilities",
                ControllerGetCapabilitiesRequest.getDefaultInstance(),
                ControllerGetCapabilitiesResponse.getDefaultInstance());
        Set<ControllerServiceCapability.RPC.Type> types = new HashSet<>();
        cc.getCapabilitiesList().forEach(c -> types.add(c.getRpc().getType()));
        assertTrue(types.contains(ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME));
        assertTrue(types.contains(ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME));
    }

    @Test
    void createVolumeIsIdempotentByNameAndHonoursTheCapacityRange() throws Exception {
        Volume v = create("pvc-1", 3 * MIB + 1, 0).getVolume();
        assertEquals(4 * MIB, v.getCapacityBytes(), "rounded up to whole MiB");
        assertTrue(v.getVolumeId().startsWith("s1:"));
        VolumeId id = VolumeId.parse(v.getVolumeId());
        assertEquals(
                4 * MIB, Files.size(storage.get(0).files().resolve(id.key() + ".img")), "the file on the storage host");
        assertEquals(v, create("pvc-1", 3 * MIB + 1, 0).getVolume(), "the same volume again");
        assertEquals(
                Status.Code.ALREADY_EXISTS,
                codeOf(() -> create("pvc-1", 0, 2 * MIB)),
                "same name, a capacity it does not have");
        assertEquals(id.nqn(), v.getVolumeContextMap().get("nqn"));
        assertEquals(
                subsystem(0, id.nqn()).path("namespaces").path(0).path("uuid").asText(),
                v.getVolumeContextMap().get("uuid"));
        assertFalse(
                subsystem(0, id.nqn()).path("allow_any_host").asBoolean(), "nobody may connect before it is published");
    }

    @Test
    void volumesFillTheFirstStorageHostThenTheNext() {
        assertTrue(create("a", 4 * MIB, 0).getVolume().getVolumeId().startsWith("s1:"));
        assertTrue(create("b", 4 * MIB, 0).getVolume().getVolumeId().startsWith("s1:"));
        assertTrue(create("c", 4 * MIB, 0).getVolume().getVolumeId().startsWith("s2:"), "s1's 8 MiB are taken");
        long left = call(
                        "Controller",
                        "GetCapacity",
                        GetCapacityRequest.getDefaultInstance(),
                        GetCapacityResponse.getDefaultInstance())
                .getAvailableCapacity();
        assertEquals(60 * MIB, left, "0 on s1, 64 - 4 MiB on s2");
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, codeOf(() -> create("d", 100 * MIB, 0)));
    }

    @Test
    void requestsMissingWhatTheSpecRequiresAreInvalidArgument() {
        assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> create("", MIB, 0)));
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                codeOf(() -> call(
                        "Controller",
                        "CreateVolume",
                        CreateVolumeRequest.newBuilder().setName("x").build(),
                        CreateVolumeResponse.getDefaultInstance())));
        assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> create("x", 8 * MIB, 4 * MIB)), "required above limit");
        VolumeCapability multiWriterMount = MOUNT_RW.toBuilder()
                .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                        .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
                .build();
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                codeOf(() -> call(
                        "Controller",
                        "CreateVolume",
                        CreateVolumeRequest.newBuilder()
                                .setName("x")
                                .addVolumeCapabilities(multiWriterMount)
                                .build(),
                        CreateVolumeResponse.getDefaultInstance())),
                "a file system mounted on several nodes would be corrupted");
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                codeOf(() -> call(
                        "Controller",
                        "DeleteVolume",
                        DeleteVolumeRequest.getDefaultInstance(),
                        DeleteVolumeResponse.getDefaultInstance())));
    }

    @Test
    void deleteVolumeRemovesTheSubsystemAndItsFileAndSaysOkAgain() throws Exception {
        Volume v = create("gone", 2 * MIB, 0).getVolume();
        VolumeId id = VolumeId.parse(v.getVolumeId());
        Path file = storage.get(0).files().resolve(id.key() + ".img");
        Files.write(file, new byte[] {42}, java.nio.file.StandardOpenOption.WRITE);
        DeleteVolumeRequest del =
                DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build();
        call("Controller", "DeleteVolume", del, DeleteVolumeResponse.getDefaultInstance());
        assertEquals(null, subsystem(0, id.nqn()));
        assertFalse(Files.exists(file), "its file is deleted with it");
        call("Controller", "DeleteVolume", del, DeleteVolumeResponse.getDefaultInstance());
        call(
                "Controller",
                "DeleteVolume",
                DeleteVolumeRequest.newBuilder().setVolumeId("s9:nothing").build(),
                DeleteVolumeResponse.getDefaultInstance());
        Volume again = create("gone", 2 * MIB, 0).getVolume();
        assertEquals(0, Files.readAllBytes(file)[0], "a volume made again under the name starts empty");
        assertNotEquals(
                v.getVolumeContextMap().get("uuid"), again.getVolumeContextMap().get("uuid"));
    }

    @Test
    void publishingAllowsTheNodeAndASingleNodeVolumeRefusesASecondNode() throws Exception {
        Volume v = create("pub", 2 * MIB, 0).getVolume();
        VolumeId id = VolumeId.parse(v.getVolumeId());
        ControllerPublishVolumeRequest toA = ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId())
                .setNodeId(NODE_A)
                .setVolumeCapability(MOUNT_RW)
                .build();
        ControllerPublishVolumeResponse r = call(
                "Controller", "ControllerPublishVolume", toA, ControllerPublishVolumeResponse.getDefaultInstance());
        assertEquals(id.nqn(), r.getPublishContextMap().get("nqn"));
        assertEquals(
                "127.0.0.1:" + storage.get(0).target().boundAddresses().get(0).getPort(),
                r.getPublishContextMap().get("portals"));
        assertEquals(
                r,
                call(
                        "Controller",
                        "ControllerPublishVolume",
                        toA,
                        ControllerPublishVolumeResponse.getDefaultInstance()));
        assertEquals(List.of(NODE_A), hosts(id));
        assertEquals(
                Status.Code.FAILED_PRECONDITION,
                codeOf(() -> call(
                        "Controller",
                        "ControllerPublishVolume",
                        toA.toBuilder().setNodeId(NODE_B).build(),
                        ControllerPublishVolumeResponse.getDefaultInstance())));
        assertEquals(
                Status.Code.NOT_FOUND,
                codeOf(() -> call(
                        "Controller",
                        "ControllerPublishVolume",
                        toA.toBuilder().setVolumeId("s1:" + "0".repeat(32)).build(),
                        ControllerPublishVolumeResponse.getDefaultInstance())));
        ControllerUnpublishVolumeRequest fromA = ControllerUnpublishVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId())
                .setNodeId(NODE_A)
                .build();
        call("Controller", "ControllerUnpublishVolume", fromA, ControllerUnpublishVolumeResponse.getDefaultInstance());
        assertEquals(List.of(), hosts(id));
        call("Controller", "ControllerUnpublishVolume", fromA, ControllerUnpublishVolumeResponse.getDefaultInstance());
    }

    List<String> hosts(VolumeId id) throws Exception {
        List<String> out = new ArrayList<>();
        subsystem(0, id.nqn()).path("hosts").forEach(h -> out.add(h.asText()));
        return out;
    }

    @Test
    void listVolumesPagesThroughEveryVolumeOnEveryHost() {
        Set<String> made = new HashSet<>();
        for (String n : List.of("l1", "l2", "l3"))
            made.add(create(n, 4 * MIB, 0).getVolume().getVolumeId());
        ListVolumesResponse first = call(
                "Controller",
                "ListVolumes",
                ListVolumesRequest.newBuilder().setMaxEntries(2).build(),
                ListVolumesResponse.getDefaultInstance());
        assertEquals(2, first.getEntriesCount());
        assertFalse(first.getNextToken().isEmpty());
        ListVolumesResponse rest = call(
                "Controller",
                "ListVolumes",
                ListVolumesRequest.newBuilder()
                        .setStartingToken(first.getNextToken())
                        .build(),
                ListVolumesResponse.getDefaultInstance());
        Set<String> listed = new HashSet<>();
        first.getEntriesList().forEach(e -> listed.add(e.getVolume().getVolumeId()));
        rest.getEntriesList().forEach(e -> listed.add(e.getVolume().getVolumeId()));
        assertEquals(made, listed);
        assertTrue(rest.getNextToken().isEmpty());
        assertEquals(
                Status.Code.ABORTED,
                codeOf(() -> call(
                        "Controller",
                        "ListVolumes",
                        ListVolumesRequest.newBuilder()
                                .setStartingToken("bogus")
                                .build(),
                        ListVolumesResponse.getDefaultInstance())));
    }

    @Test
    void validateConfirmsWhatJbofServesAndExpandGrowsTheFile() throws Exception {
        Volume v = create("grow", 2 * MIB, 0).getVolume();
        ValidateVolumeCapabilitiesResponse ok = call(
                "Controller",
                "ValidateVolumeCapabilities",
                ValidateVolumeCapabilitiesRequest.newBuilder()
                        .setVolumeId(v.getVolumeId())
                        .addVolumeCapabilities(MOUNT_RW)
                        .build(),
                ValidateVolumeCapabilitiesResponse.getDefaultInstance());
        assertTrue(ok.hasConfirmed());
        assertEquals(
                Status.Code.NOT_FOUND,
                codeOf(() -> call(
                        "Controller",
                        "ValidateVolumeCapabilities",
                        ValidateVolumeCapabilitiesRequest.newBuilder()
                                .setVolumeId("s2:" + "1".repeat(32))
                                .addVolumeCapabilities(MOUNT_RW)
                                .build(),
                        ValidateVolumeCapabilitiesResponse.getDefaultInstance())));
        ControllerExpandVolumeResponse grown = call(
                "Controller",
                "ControllerExpandVolume",
                ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(v.getVolumeId())
                        .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(6 * MIB))
                        .build(),
                ControllerExpandVolumeResponse.getDefaultInstance());
        assertEquals(6 * MIB, grown.getCapacityBytes());
        assertTrue(grown.getNodeExpansionRequired(), "a file system grows on the node");
        assertEquals(
                6 * MIB,
                Files.size(storage.get(0)
                        .files()
                        .resolve(VolumeId.parse(v.getVolumeId()).key() + ".img")));
    }

    @Test
    void concurrentCreatesOfOneNameMakeOneVolume() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> ids = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Callable<String> c =
                        () -> create("same", 2 * MIB, 0).getVolume().getVolumeId();
                ids.add(pool.submit(c));
            }
            Set<String> distinct = new HashSet<>();
            for (Future<String> f : ids) distinct.add(f.get(30, TimeUnit.SECONDS));
            assertEquals(1, distinct.size());
        } finally {
            pool.shutdownNow();
        }
        ListVolumesResponse all = call(
                "Controller",
                "ListVolumes",
                ListVolumesRequest.getDefaultInstance(),
                ListVolumesResponse.getDefaultInstance());
        assertEquals(1, all.getEntriesCount());
    }

    @Test
    void publishingWithDhchapSecretsMakesTheNodeAuthenticateAndAMalformedSecretIsInvalid() throws Exception {
        Volume v = create("auth", 2 * MIB, 0).getVolume();
        VolumeId id = VolumeId.parse(v.getVolumeId());
        ControllerPublishVolumeRequest toA = ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId())
                .setNodeId(NODE_A)
                .setVolumeCapability(MOUNT_RW)
                .putSecrets(DhchapSecrets.HOST_KEY, SECRET)
                .build();
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                codeOf(() -> call(
                        "Controller",
                        "ControllerPublishVolume",
                        toA.toBuilder()
                                .putSecrets(DhchapSecrets.HOST_KEY, "DHHC-1:01:not-base64:")
                                .build(),
                        ControllerPublishVolumeResponse.getDefaultInstance())));
        assertNull(storage.get(0).target().subsystem(id.nqn()).dhchapKeys(NODE_A), "nothing was allowed");
        call("Controller", "ControllerPublishVolume", toA, ControllerPublishVolumeResponse.getDefaultInstance());
        assertEquals(List.of(NODE_A), hosts(id));
        assertNotNull(storage.get(0).target().subsystem(id.nqn()).dhchapKeys(NODE_A), "the node must authenticate");
    }

    @Test
    void jbofCsiCallReadsItsRequestFromAFileAndPrintsTheAnswerAsJson() throws Exception {
        Path request = Files.writeString(
                dir.resolve("create.json"),
                "{\"name\": \"from-call\", \"capacityRange\": {\"requiredBytes\": \"2097152\"},"
                        + " \"volumeCapabilities\": [{\"mount\": {}, \"accessMode\": {\"mode\": \"SINGLE_NODE_WRITER\"}}]}");
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine call = CsiCall.commandLine();
        call.setOut(new java.io.PrintWriter(out, true));
        call.setErr(new java.io.PrintWriter(err, true));
        String endpoint = "unix://" + csi.socket();
        assertEquals(
                0, call.execute("--endpoint", endpoint, "Controller", "CreateVolume", "@" + request), err.toString());
        assertTrue(out.toString().contains("\"capacityBytes\": \"2097152\""), out.toString());
        assertEquals(1, call.execute("--endpoint", endpoint, "Controller", "DeleteVolume"), "volume_id missing");
        assertTrue(err.toString().contains("INVALID_ARGUMENT"), err.toString());
    }

    @Test
    void aStorageHostIsReachedOverHttpsWithATokenFileAndItsCertificate() throws Exception {
        SelfSignedCert tls = SelfSignedCert.make(dir, "127.0.0.1");
        Path cert = tls.cert();
        Path key = tls.key();
        String token = "csi-test-token-0123456789";
        Path tokenFile = Files.writeString(dir.resolve("token"), token + "\n");
        TargetServer t = storage.get(1).target();
        try (RpcHttpServer https = RpcHttpServer.start(
                "127.0.0.1:0",
                token,
                cert,
                key,
                new JsonRpcDispatcher(new ManagementService(t, new TargetConfig(), null)))) {
            String url = "https://127.0.0.1:" + https.address().getPort();
            StorageHost h = StorageHost.parse("s3=" + url + ",token=@" + tokenFile + ",cacert=" + cert
                    + ",portal=127.0.0.1:1,dir=" + storage.get(1).files());
            VolumeId id = new VolumeId("s3", VolumeId.keyOf("over-https"));
            h.create(
                    id.nqn(),
                    id.file(h.dir),
                    2 * MIB,
                    java.util.UUID.randomUUID().toString());
            assertEquals(id.nqn(), h.subsystem(id.nqn()).path("nqn").asText());
            StorageHost wrongToken =
                    StorageHost.parse("s4=" + url + ",token=wrong-token-0123456789,cacert=" + cert + ",portal=h:1");
            assertThrows(java.io.IOException.class, wrongToken::subsystems);
            StorageHost untrusted = StorageHost.parse("s5=" + url + ",token=@" + tokenFile + ",portal=h:1");
            assertThrows(
                    java.io.IOException.class,
                    untrusted::subsystems,
                    "a certificate the JVM does not trust is refused");
        }
    }

    @Test
    void anUnreachableStorageHostIsSkippedAndWithNoneLeftTheCallIsUnavailable() throws Exception {
        storage.get(0).close(); // s1's target and its management socket
        assertTrue(create("elsewhere", 2 * MIB, 0).getVolume().getVolumeId().startsWith("s2:"));
        storage.get(1).rpc().close(); // s2's management socket
        assertEquals(Status.Code.UNAVAILABLE, codeOf(() -> create("nowhere", 2 * MIB, 0)));
    }
}
