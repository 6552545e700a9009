package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.IdentifyNamespace;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.mgmt.JsonRpcDispatcher;
import io.jbof.target.mgmt.ManagementService;
import io.jbof.target.mgmt.RpcHttpServer;
import io.jbof.target.mgmt.RpcSocketServer;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The management API on its Unix socket, against a real target and a real host on loopback. */
class ManagementApiTest {
    static final String NQN = "nqn.2024-01.io.jbof:mgmt";
    static final String PRIVATE = "nqn.2024-01.io.jbof:mgmt-private";
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-2222-3333-4444-555555555555";
    static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:bbbbbbbb-2222-3333-4444-555555555555";
    /** AER completion dword 0: Notice (2), Namespace Attribute Changed (0), log page 04h. */
    static final int NS_CHANGED_EVENT = 0x2 | (0x04 << 16);

    @TempDir
    Path dir;

    TargetServer target;
    RpcSocketServer rpc;
    Path socket;
    Path configFile;

    /** A target exporting {@code files} (16 MiB each) with its management API, saving to {@link #configFile}. */
    void start(String... files) throws Exception {
        Path[] paths = new Path[files.length];
        for (int i = 0; i < files.length; i++) paths[i] = dir.resolve(files[i]);
        ManagedTarget m = ManagedTarget.start(TestTargets.config(NQN, paths), dir);
        target = m.target;
        rpc = m.rpc;
        socket = m.socket;
        configFile = m.configFile;
    }

    @AfterEach
    void stop() {
        if (rpc != null) rpc.close();
        if (target != null) target.close();
    }

    NvmeController connect(String nqn, String host) throws IOException {
        ConnectOptions.Builder b = ConnectOptions.builder()
                .port(TestTargets.port(target))
                .subsystemNqn(nqn)
                .ioQueues(Nqn.DISCOVERY.equals(nqn) ? 0 : 1)
                .queueDepth(16);
        if (host != null) b.hostNqn(host);
        return NvmeController.connect(b.build());
    }

    /** Enables namespace notices and leaves one Asynchronous Event Request outstanding. */
    static CompletableFuture<Long> awaitEvent(NvmeController host) throws Exception {
        host.setFeatures(Opcodes.FEAT_ASYNC_EVENT_CONFIG, 1 << 8).get(10, TimeUnit.SECONDS);
        return host.passthru(true, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, 0, new int[0], null, 0, false);
    }

    static List<Integer> idList(NvmeController host, boolean changedLog) throws IOException {
        ByteBuf b = Unpooled.buffer(4096);
        if (changedLog) host.getLogPage(Opcodes.LOG_CHANGED_NAMESPACES, 0xFFFFFFFF, 0, 4096, b);
        else host.identify(Opcodes.CNS_ACTIVE_NAMESPACES, 0, b);
        List<Integer> ids = new ArrayList<>();
        for (int at = 0; at < 4096 && b.getIntLE(at) != 0; at += 4) ids.add(b.getIntLE(at));
        return ids;
    }

    static long sizeBlocks(NvmeController host, int nsid) throws IOException {
        ByteBuf b = Unpooled.buffer(4096);
        host.identify(Opcodes.CNS_NAMESPACE, nsid, b);
        return b.getLongLE(IdentifyNamespace.NSZE);
    }

    ObjectNode nsParams(String nqn, String file, String size) {
        ObjectNode ns = RpcClient.params().put("path", dir.resolve(file).toString());
        if (size != null) ns.put("size", size);
        return RpcClient.params().put("nqn", nqn).set("namespace", ns);
    }

    static int errorCode(JsonNode response) {
        assertTrue(response.has("error"), "an error, not " + response);
        return response.get("error").get("code").asInt();
    }

    @Test
    void namespaceAddedWhileAHostIsConnectedRaisesTheNoticeAndJoinsTheActiveList() throws Exception {
        start("a.img");
        try (NvmeController host = connect(NQN, null)) {
            CompletableFuture<Long> event = awaitEvent(host);
            assertFalse(event.isDone());
            int nsid = RpcClient.ok(socket, "nvmf_subsystem_add_ns", nsParams(NQN, "b.img", "8M"))
                    .asInt();
            assertEquals(2, nsid, "the lowest free NSID");
            assertEquals(NS_CHANGED_EVENT, event.get(10, TimeUnit.SECONDS) & 0xFFFFFF);
            assertEquals(List.of(2), idList(host, true), "the Changed Namespace List names it");
            assertEquals(List.of(1, 2), idList(host, false));
            assertEquals(8 << 20 >> 12, sizeBlocks(host, 2));
        }
    }

    @Test
    void removedNamespaceLeavesTheActiveListAndItsCommandsFailWithInvalidNamespace() throws Exception {
        start("a.img", "b.img");
        try (NvmeController host = connect(NQN, null)) {
            CompletableFuture<Long> event = awaitEvent(host);
            RpcClient.ok(
                    socket,
                    "nvmf_subsystem_remove_ns",
                    RpcClient.params().put("nqn", NQN).put("nsid", 1));
            assertEquals(NS_CHANGED_EVENT, event.get(10, TimeUnit.SECONDS) & 0xFFFFFF);
            assertEquals(List.of(1), idList(host, true));
            assertEquals(List.of(2), idList(host, false));
            ExecutionException e = assertThrows(
                    ExecutionException.class,
                    () -> host.passthru(
                                    false, Opcodes.IO_READ, 1, new int[] {0, 0, 0}, Unpooled.buffer(4096), 4096, false)
                            .get(10, TimeUnit.SECONDS));
            assertEquals(Status.INVALID_NAMESPACE, ((NvmeException) e.getCause()).status() & 0x7FF);
            assertEquals(
                    -32001,
                    errorCode(RpcClient.call(
                            socket,
                            "nvmf_subsystem_remove_ns",
                            RpcClient.params().put("nqn", NQN).put("nsid", 1))),
                    "removing it again: not found");
        }
    }

    @Test
    void resizeGrowsWhatIdentifyReportsAndShrinkingIsRefused() throws Exception {
        start("a.img");
        try (NvmeController host = connect(NQN, null)) {
            CompletableFuture<Long> event = awaitEvent(host);
            JsonNode size = RpcClient.ok(
                    socket,
                    "jbof_subsystem_resize_ns",
                    RpcClient.params().put("nqn", NQN).put("nsid", 1).put("size", "32M"));
            assertEquals(32L << 20, size.asLong());
            assertEquals(NS_CHANGED_EVENT, event.get(10, TimeUnit.SECONDS) & 0xFFFFFF);
            assertEquals(32L << 20 >> 12, sizeBlocks(host, 1));
            assertEquals(32L << 20, Files.size(dir.resolve("a.img")));
            JsonNode shrink = RpcClient.call(
                    socket,
                    "jbof_subsystem_resize_ns",
                    RpcClient.params().put("nqn", NQN).put("nsid", 1).put("size", "8M"));
            assertEquals(-32602, errorCode(shrink));
            assertTrue(shrink.get("error").get("message").asText().contains("can grow, not shrink"), shrink.toString());
        }
    }

    @Test
    void removedHostLosesItsControllerAndCannotConnectAgain() throws Exception {
        start("a.img");
        RpcClient.ok(socket, "nvmf_create_subsystem", RpcClient.params().put("nqn", PRIVATE));
        RpcClient.ok(socket, "nvmf_subsystem_add_ns", nsParams(PRIVATE, "p.img", "4M"));
        RpcClient.ok(
                socket,
                "nvmf_subsystem_add_host",
                RpcClient.params().put("nqn", PRIVATE).put("host", HOST));
        NvmeException stranger = assertThrows(NvmeException.class, () -> connect(PRIVATE, OTHER_HOST));
        assertEquals(Status.CONNECT_INVALID_HOST, stranger.status() & 0x7FF);
        try (NvmeController host = connect(PRIVATE, HOST)) {
            assertEquals(List.of(1), idList(host, false));
            RpcClient.ok(
                    socket,
                    "nvmf_subsystem_remove_host",
                    RpcClient.params().put("nqn", PRIVATE).put("host", HOST));
            assertThrows(
                    ExecutionException.class,
                    () -> host.getFeatures(Opcodes.FEAT_ASYNC_EVENT_CONFIG).get(10, TimeUnit.SECONDS),
                    "its controller was torn down");
        }
        NvmeException again = assertThrows(NvmeException.class, () -> connect(PRIVATE, HOST));
        assertEquals(Status.CONNECT_INVALID_HOST, again.status() & 0x7FF);
    }

    @Test
    void aHostAddedWithADhchapKeyMustAuthenticateAndTheKeyIsNeitherReturnedNorLost() throws Exception {
        start("a.img");
        String secret = DhchapAuthenticationTest.newSecret(1, 32);
        RpcClient.ok(socket, "nvmf_create_subsystem", RpcClient.params().put("nqn", PRIVATE));
        RpcClient.ok(socket, "nvmf_subsystem_add_ns", nsParams(PRIVATE, "p.img", "4M"));
        JsonNode bad = RpcClient.call(
                socket,
                "nvmf_subsystem_add_host",
                RpcClient.params().put("nqn", PRIVATE).put("host", HOST).put("dhchap_key", "@/etc/shadow"));
        assertEquals(-32602, errorCode(bad), "a file name is not a key, and the target never reads it");
        RpcClient.ok(
                socket,
                "nvmf_subsystem_add_host",
                RpcClient.params().put("nqn", PRIVATE).put("host", HOST).put("dhchap_key", secret));
        IOException unauthenticated = assertThrows(IOException.class, () -> connect(PRIVATE, HOST));
        assertTrue(unauthenticated.getMessage().contains("requires DH-HMAC-CHAP"), unauthenticated.getMessage());
        try (NvmeController host = NvmeController.connect(ConnectOptions.builder()
                .port(TestTargets.port(target))
                .subsystemNqn(PRIVATE)
                .hostNqn(HOST)
                .ioQueues(1)
                .queueDepth(16)
                .dhchapSecret(secret)
                .build())) {
            assertEquals(List.of(1), idList(host, false));
        }
        String listed = RpcClient.ok(socket, "nvmf_get_subsystems", null).toString();
        assertFalse(listed.contains(secret.substring(10, 30)), "the key is not handed out: " + listed);
        String running = RpcClient.ok(socket, "save_config", null).toString();
        assertFalse(running.contains(secret.substring(10, 30)), "nor with the configuration: " + running);
        assertTrue(running.contains(ManagementService.REDACTED), running);
        assertTrue(Files.readString(configFile).contains(secret), "saved with the configuration, for a restart");
    }

    @Test
    void deletedSubsystemDropsItsControllersAndLeavesTheDiscoveryLog() throws Exception {
        start("a.img");
        long generation = RpcClient.ok(socket, "nvmf_get_stats", null)
                .get("discovery_generation")
                .asLong();
        try (NvmeController host = connect(NQN, null);
                NvmeController disc = connect(Nqn.DISCOVERY, null)) {
            assertEquals(1, disc.discoveryLog().size());
            disc.setFeatures(Opcodes.FEAT_ASYNC_EVENT_CONFIG, 1 << 31).get(10, TimeUnit.SECONDS);
            CompletableFuture<Long> discoveryEvent =
                    disc.passthru(true, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, 0, new int[0], null, 0, false);
            RpcClient.ok(socket, "nvmf_delete_subsystem", RpcClient.params().put("nqn", NQN));
            assertEquals(
                    0x2 | (0xF0 << 8) | (0x70 << 16),
                    discoveryEvent.get(10, TimeUnit.SECONDS) & 0xFFFFFF,
                    "Discovery Log Page Change notice to the discovery controller");
            assertThrows(
                    ExecutionException.class,
                    () -> host.getFeatures(Opcodes.FEAT_ASYNC_EVENT_CONFIG).get(10, TimeUnit.SECONDS));
            assertEquals(0, disc.discoveryLog().size());
        }
        assertTrue(
                RpcClient.ok(socket, "nvmf_get_stats", null)
                                .get("discovery_generation")
                                .asLong()
                        > generation,
                "the discovery log's generation counter moved");
        NvmeException gone = assertThrows(NvmeException.class, () -> connect(NQN, null));
        assertEquals(Status.CONNECT_INVALID_PARAMETERS, gone.status() & 0x7FF);
        assertEquals(0, RpcClient.ok(socket, "nvmf_get_subsystems", null).size());
    }

    /** Completes when every one of {@code fs} has, successfully or not; fails the test if one hangs. */
    static int failuresAmong(List<CompletableFuture<Void>> fs) throws Exception {
        int failed = 0;
        for (CompletableFuture<Void> f : fs) {
            try {
                f.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                failed++;
            }
        }
        return failed;
    }

    static List<CompletableFuture<Void>> writes(Namespace ns, int n) {
        List<CompletableFuture<Void>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(ns.write(i, 1, Unpooled.wrappedBuffer(new byte[ns.blockSize()]), false));
        return out;
    }

    @Test
    void removingANamespaceUnderLoadEndsItsCommandsAndLeavesTheOtherServing() throws Exception {
        start("a.img", "b.img");
        try (NvmeController host = connect(NQN, null)) {
            List<CompletableFuture<Void>> onB = writes(host.namespace(2), 64);
            RpcClient.ok(
                    socket,
                    "nvmf_subsystem_remove_ns",
                    RpcClient.params().put("nqn", NQN).put("nsid", 2));
            onB.addAll(writes(host.namespace(2), 64));
            List<CompletableFuture<Void>> onA = writes(host.namespace(1), 128);
            int failedOnB = failuresAmong(onB);
            assertTrue(failedOnB >= 64, "every write after the removal fails (Invalid Namespace): " + failedOnB);
            assertEquals(0, failuresAmong(onA), "the other namespace keeps serving on the same queue");
        }
    }

    @Test
    void deletingASubsystemUnderLoadEndsEveryCommandAndHangsNothing() throws Exception {
        start("a.img");
        try (NvmeController host = connect(NQN, null)) {
            List<CompletableFuture<Void>> inFlight = writes(host.namespace(1), 256);
            RpcClient.ok(socket, "nvmf_delete_subsystem", RpcClient.params().put("nqn", NQN));
            failuresAmong(inFlight); // each ends, one way or the other, within the bound
        }
        assertEquals(0, RpcClient.ok(socket, "nvmf_get_subsystems", null).size());
    }

    @Test
    void everyChangeIsSavedAndTheSavedFileStartsTheSameTarget() throws Exception {
        start("a.img");
        RpcClient.ok(socket, "nvmf_create_subsystem", RpcClient.params().put("nqn", PRIVATE));
        ObjectNode p = nsParams(PRIVATE, "p.img", "4M");
        ((ObjectNode) p.get("namespace")).put("nsid", 5).put("uuid", "0f0e0d0c-0b0a-4908-8706-050403020100");
        RpcClient.ok(socket, "nvmf_subsystem_add_ns", p);
        RpcClient.ok(socket, "nvmf_subsystem_add_ns", nsParams(PRIVATE, "q.img", "4M"));
        RpcClient.ok(
                socket,
                "nvmf_subsystem_add_host",
                RpcClient.params().put("nqn", PRIVATE).put("host", HOST));
        TargetConfig saved = TargetConfig.read(configFile);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(configFile)));
        try (TargetServer again = TargetServer.start(saved, true)) {
            assertEquals(describe(target), describe(again), "the saved file loads into what was running");
        }
        assertEquals(
                "0f0e0d0c-0b0a-4908-8706-050403020100",
                target.subsystem(PRIVATE).namespace(5).uuid().toString());
        JsonNode saveReply = RpcClient.ok(
                socket,
                "save_config",
                RpcClient.params().put("file", dir.resolve("copy.json").toString()));
        assertEquals(2, saveReply.get("subsystems").size());
        assertEquals(Files.readString(configFile), Files.readString(dir.resolve("copy.json")));
    }

    /** Subsystem by subsystem: namespaces (NSID, path, size, UUID) and allowed hosts. */
    static Map<String, String> describe(TargetServer t) {
        Map<String, String> out = new TreeMap<>();
        for (Subsystem s : t.subsystems()) {
            StringBuilder b =
                    new StringBuilder("hosts=" + new TreeSet<>(s.allowedHosts()) + " any=" + s.allowsAnyHost());
            for (TargetNamespace ns : s.namespaces())
                b.append(" ns")
                        .append(ns.nsid())
                        .append('=')
                        .append(ns.path())
                        .append(',')
                        .append(ns.sizeBytes())
                        .append(',')
                        .append(ns.uuid());
            out.put(s.nqn(), b.toString());
        }
        return out;
    }

    @Test
    void hundredConcurrentCallsLeaveTheSavedFileEqualToWhatRuns() throws Exception {
        start("a.img");
        ExecutorService pool = Executors.newFixedThreadPool(32);
        try {
            List<Future<?>> calls = new ArrayList<>();
            AtomicInteger failures = new AtomicInteger();
            for (int i = 0; i < 100; i++) {
                int n = i;
                calls.add(pool.submit(() -> {
                    int nsid = RpcClient.ok(socket, "nvmf_subsystem_add_ns", nsParams(NQN, "c" + n + ".img", "1M"))
                            .asInt();
                    if (n % 4 == 0)
                        RpcClient.ok(
                                socket,
                                "nvmf_subsystem_remove_ns",
                                RpcClient.params().put("nqn", NQN).put("nsid", nsid));
                    return null;
                }));
            }
            for (Future<?> f : calls) {
                try {
                    f.get(120, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failures.incrementAndGet();
                }
            }
            assertEquals(0, failures.get());
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1 + 75, target.subsystem(NQN).namespaces().size());
        try (TargetServer again = TargetServer.start(TargetConfig.read(configFile), true)) {
            assertEquals(describe(target), describe(again));
        }
    }

    @Test
    void malformedOrImpossibleCallsGetTypedErrorsAndTheApiKeepsServing() throws Exception {
        start("a.img");
        assertEquals(-32700, errorCode(RpcClient.raw(socket, "{not json")));
        assertEquals(-32600, errorCode(RpcClient.raw(socket, "{\"id\": 1, \"method\": \"nvmf_get_subsystems\"}")));
        assertEquals(-32601, errorCode(RpcClient.call(socket, "nvmf_no_such_method", null)));
        assertEquals(
                -32602,
                errorCode(RpcClient.call(
                        socket,
                        "nvmf_delete_subsystem",
                        RpcClient.params().put("nqn", NQN).put("nqm", "typo"))));
        assertEquals(
                -32001,
                errorCode(RpcClient.call(
                        socket, "nvmf_subsystem_add_ns", nsParams("nqn.2024-01.io.jbof:nobody", "x.img", "1M"))));
        ObjectNode taken = nsParams(NQN, "y.img", "1M");
        ((ObjectNode) taken.get("namespace")).put("nsid", 1);
        assertEquals(-32002, errorCode(RpcClient.call(socket, "nvmf_subsystem_add_ns", taken)));
        assertEquals(
                -32002,
                errorCode(RpcClient.call(socket, "nvmf_subsystem_add_ns", nsParams(NQN, "a.img", null))),
                "one file, two namespaces");
        JsonNode missing = RpcClient.call(socket, "nvmf_subsystem_add_ns", nsParams(NQN, "absent.img", null));
        assertEquals(-32003, errorCode(missing));
        assertTrue(missing.get("error").get("message").asText().contains("no size was given"), missing.toString());
        assertFalse(Files.exists(dir.resolve("y.img")), "a refused namespace leaves no file behind");
        assertEquals(
                1,
                RpcClient.ok(socket, "nvmf_get_subsystems", null)
                        .get(0)
                        .get("namespaces")
                        .size());
    }

    @Test
    void targetKilledMidChangeRestartsFromTheOldOrTheNewConfiguration() throws Exception {
        Path cfg = dir.resolve("killed.json");
        Path sock = dir.resolve("killed.sock");
        int acked = 0;
        try (DaemonProcess t = DaemonProcess.java(
                "--listen", "127.0.0.1:0", "--config", cfg.toString(), "--rpc-socket", sock.toString())) {
            RpcClient.ok(
                    sock,
                    "nvmf_create_subsystem",
                    RpcClient.params().put("nqn", NQN).put("allow_any_host", true));
            CompletableFuture<Void> killed = new CompletableFuture<>();
            // kill -9 lands while the 21st change is in flight or about to be
            Thread killer = new Thread(() -> {
                try {
                    killed.get();
                    t.kill9();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            killer.start();
            try {
                for (int i = 0; i < 200; i++) {
                    RpcClient.ok(sock, "nvmf_subsystem_add_ns", nsParams(NQN, "k" + i + ".img", "1M"));
                    acked++;
                    if (acked == 20) killed.complete(null);
                }
            } catch (IOException | AssertionError e) {
                // the target died under the call
            }
            killer.join(60_000);
        }
        TargetConfig after = TargetConfig.read(cfg);
        int saved = after.subsystems.get(0).namespaces.size();
        assertTrue(
                saved == acked || saved == acked + 1,
                "every acknowledged change and at most the one in flight: " + saved + " saved, " + acked + " acked");
        try (DaemonProcess again = DaemonProcess.java(
                "--listen", "127.0.0.1:0", "--config", cfg.toString(), "--rpc-socket", sock.toString())) {
            assertEquals(
                    saved,
                    RpcClient.ok(sock, "nvmf_get_subsystems", null)
                            .get(0)
                            .get("namespaces")
                            .size(),
                    "the restarted target serves them");
            assertEquals(0, again.terminate());
        }
    }

    @Test
    void httpApiWantsTheTokenAndTlsBeyondLoopback() throws Exception {
        start("a.img");
        JsonRpcDispatcher d = new JsonRpcDispatcher(
                new ManagementService(target, TestTargets.config(NQN, dir.resolve("a.img")), null));
        String token = "0123456789abcdef-token";
        IllegalArgumentException clear = assertThrows(
                IllegalArgumentException.class, () -> RpcHttpServer.start("0.0.0.0:0", token, null, null, d));
        assertTrue(clear.getMessage().contains("--rpc-tls-cert"), clear.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RpcHttpServer.start("127.0.0.1:0", "short", null, null, d));
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Process openssl = new ProcessBuilder(
                        "openssl",
                        "req",
                        "-x509",
                        "-newkey",
                        "ec",
                        "-pkeyopt",
                        "ec_paramgen_curve:prime256v1",
                        "-nodes",
                        "-keyout",
                        key.toString(),
                        "-out",
                        cert.toString(),
                        "-days",
                        "1",
                        "-subj",
                        "/CN=127.0.0.1",
                        "-addext",
                        "subjectAltName=IP:127.0.0.1")
                .redirectErrorStream(true)
                .start();
        String opensslOut = new String(openssl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, openssl.waitFor(), opensslOut);
        try (RpcHttpServer https = RpcHttpServer.start("127.0.0.1:0", token, cert, key, d)) {
            String url = "https://127.0.0.1:" + https.address().getPort() + "/";
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            try (InputStream in = Files.newInputStream(cert)) {
                trust.setCertificateEntry(
                        "rpc", CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            HttpClient client = HttpClient.newBuilder().sslContext(ctx).build();
            String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nvmf_get_subsystems\"}";
            for (String auth : new String[] {null, "Bearer wrong-token-0123456789"}) {
                HttpRequest.Builder r =
                        HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.ofString(body));
                if (auth != null) r.header("Authorization", auth);
                assertEquals(
                        401,
                        client.send(r.build(), HttpResponse.BodyHandlers.ofString())
                                .statusCode(),
                        "token " + auth);
            }
            HttpResponse<String> ok = client.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header("Authorization", "Bearer " + token)
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ok.statusCode());
            assertEquals(
                    NQN,
                    RpcClient.JSON
                            .readTree(ok.body())
                            .get("result")
                            .get(0)
                            .get("nqn")
                            .asText());
            Files.writeString(dir.resolve("token"), token);
            List<String> cmd = List.of(
                    ScriptRestartIT.ROOT.resolve("scripts/jbof-ctl").toString(),
                    "--url",
                    url,
                    "--token",
                    "@" + dir.resolve("token"),
                    "--cacert",
                    cert.toString(),
                    "ls");
            Process ctl = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(ctl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, ctl.waitFor(), out);
            assertTrue(out.contains(NQN), out);
        }
    }

    @Test
    void jbofCtlDrivesTheTargetAndExitsNonZeroWithTheMessage() throws Exception {
        start("a.img");
        Ctl add = ctl(
                "add-namespace", "--nqn", NQN, "--path", dir.resolve("ctl.img").toString(), "--size", "2M");
        assertEquals(0, add.code, add.err);
        assertEquals("2", add.out.trim());
        Ctl ls = ctl("ls");
        assertEquals(0, ls.code, ls.err);
        JsonNode subsystems = RpcClient.JSON.readTree(ls.out);
        assertEquals(2, subsystems.get(0).get("namespaces").size());
        Ctl bad = ctl("remove-namespace", "--nqn", "nqn.2024-01.io.jbof:nobody", "--nsid", "1");
        assertEquals(1, bad.code);
        assertTrue(bad.err.contains("no subsystem nqn.2024-01.io.jbof:nobody"), bad.err);
        Ctl unreachable = Ctl.run(dir.resolve("none.sock"), "ls");
        assertEquals(2, unreachable.code);
        assertTrue(unreachable.err.contains("cannot reach the target"), unreachable.err);
    }

    record Ctl(int code, String out, String err) {
        static Ctl run(Path socket, String... args) throws Exception {
            List<String> cmd = new ArrayList<>(List.of(
                    ScriptRestartIT.ROOT.resolve("scripts/jbof-ctl").toString(), "--socket", socket.toString()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).start();
            byte[] out = p.getInputStream().readAllBytes();
            byte[] err = p.getErrorStream().readAllBytes();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            return new Ctl(
                    p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
        }
    }

    Ctl ctl(String... args) throws Exception {
        return Ctl.run(socket, args);
    }
}
