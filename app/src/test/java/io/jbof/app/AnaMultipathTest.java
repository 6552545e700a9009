package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.DiscoveryEntry;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.AnaLog;
import io.jbof.nvme.IdentifyController;
import io.jbof.nvme.IdentifyNamespace;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.mgmt.RpcSocketServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Listeners per subsystem and Asymmetric Namespace Access, driven through the management API, seen by real hosts on loopback. */
class AnaMultipathTest {
    static final String NQN = "nqn.2024-01.io.jbof:ana";
    /** AER completion dword 0: Notice (2), ANA change (03h), log page 0Ch. */
    static final int ANA_CHANGE_EVENT = 0x2 | (0x03 << 8) | (0x0C << 16);

    @TempDir
    Path dir;

    TargetServer target;
    RpcSocketServer rpc;
    Path socket;
    Path configFile;

    void start() throws Exception {
        ManagedTarget m = ManagedTarget.start(TestTargets.config(NQN, dir.resolve("a.img")), dir);
        target = m.target;
        rpc = m.rpc;
        socket = m.socket;
        configFile = m.configFile;
    }

    /** Starts the target and adds a second listener through the API; returns {first port, second port}. */
    int[] startWithTwoListeners() throws Exception {
        start();
        int second = freePort();
        RpcClient.ok(socket, "nvmf_subsystem_add_listener", listener(second));
        return new int[] {TestTargets.port(target), second};
    }

    @AfterEach
    void stop() {
        if (rpc != null) rpc.close();
        if (target != null) target.close();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static NvmeController connect(int port, String nqn) throws IOException {
        return NvmeController.connect(ConnectOptions.builder()
                .port(port)
                .subsystemNqn(nqn)
                .ioQueues(Nqn.DISCOVERY.equals(nqn) ? 0 : 1)
                .queueDepth(16)
                .build());
    }

    static ObjectNode listener(int port) {
        return RpcClient.params()
                .put("nqn", NQN)
                .set(
                        "listen_address",
                        RpcClient.params()
                                .put("trtype", "tcp")
                                .put("adrfam", "ipv4")
                                .put("traddr", "127.0.0.1")
                                .put("trsvcid", Integer.toString(port)));
    }

    /** Enables ANA change notices and leaves one Asynchronous Event Request outstanding. */
    static CompletableFuture<Long> awaitAnaEvent(NvmeController host) throws Exception {
        host.setFeatures(Opcodes.FEAT_ASYNC_EVENT_CONFIG, 1 << 11).get(10, TimeUnit.SECONDS);
        return host.passthru(true, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, 0, new int[0], null, 0, false);
    }

    /** The ANA log as group ID -> "state:nsid,nsid". */
    static Map<Integer, String> anaLog(NvmeController host) throws IOException {
        ByteBuf b = Unpooled.buffer(4096);
        host.getLogPage(Opcodes.LOG_ANA, 0xFFFFFFFF, 0, 4096, b);
        Map<Integer, String> out = new LinkedHashMap<>();
        int at = AnaLog.HEADER_SIZE;
        for (int g = 0; g < b.getShortLE(AnaLog.NGRPS); g++) {
            int n = b.getIntLE(at + AnaLog.D_NNSIDS);
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) ids.add(b.getIntLE(at + AnaLog.DESC_SIZE + 4 * i));
            out.put(b.getIntLE(at + AnaLog.D_GRPID), b.getByte(at + AnaLog.D_STATE) + ":" + ids);
            at += AnaLog.DESC_SIZE + 4 * n;
        }
        return out;
    }

    static int writeStatus(NvmeController host) throws Exception {
        try {
            host.namespace(1)
                    .write(0, 1, Unpooled.wrappedBuffer(new byte[4096]), false)
                    .get(10, TimeUnit.SECONDS);
            return Status.SUCCESS;
        } catch (ExecutionException e) {
            return ((NvmeException) e.getCause()).status();
        }
    }

    @Test
    void identifyReportsAnaAndEachNamespaceItsGroup() throws Exception {
        start();
        ObjectNode ns = RpcClient.params()
                .put("path", dir.resolve("b.img").toString())
                .put("size", "4M")
                .put("anagrpid", 7);
        RpcClient.ok(
                socket,
                "nvmf_subsystem_add_ns",
                RpcClient.params().put("nqn", NQN).set("namespace", ns));
        try (NvmeController host = connect(TestTargets.port(target), NQN)) {
            ByteBuf id = Unpooled.buffer(4096);
            host.identify(Opcodes.CNS_CONTROLLER, 0, id);
            assertEquals(
                    IdentifyController.CMIC_ANA, id.getByte(IdentifyController.CMIC) & IdentifyController.CMIC_ANA);
            assertEquals(IdentifyController.ANACAP_ALL_STATES, id.getByte(IdentifyController.ANACAP));
            assertEquals(AnaLog.MAX_GROUPS, id.getIntLE(IdentifyController.NANAGRPID));
            int mnan = id.getIntLE(IdentifyController.MNAN);
            assertTrue(
                    mnan > 0 && mnan <= id.getIntLE(IdentifyController.NN), "Linux refuses ANA unless 0 < MNAN <= NN");
            assertTrue((id.getIntLE(IdentifyController.OAES) & IdentifyController.OAES_ANA_CHANGE) != 0);
            ByteBuf n = Unpooled.buffer(4096);
            host.identify(Opcodes.CNS_NAMESPACE, 2, n);
            assertEquals(7, n.getIntLE(IdentifyNamespace.ANAGRPID));
            assertEquals(Map.of(1, "1:[1]", 7, "1:[2]"), anaLog(host), "each group with its NSIDs, optimized");
        }
    }

    @Test
    void listenerAddedByTheApiTakesConnectsAndRemovingItDropsItsHosts() throws Exception {
        int[] ports = startWithTwoListeners();
        int first = ports[0];
        int second = ports[1];
        try (NvmeController disc = connect(first, Nqn.DISCOVERY)) {
            List<String> listed = new ArrayList<>();
            for (DiscoveryEntry e : disc.discoveryLog()) listed.add(e.trsvcid());
            assertEquals(
                    List.of(Integer.toString(first), Integer.toString(second)),
                    listed,
                    "one discovery entry per listener");
        }
        NvmeController viaSecond = connect(second, NQN);
        try (NvmeController viaFirst = connect(first, NQN)) {
            assertEquals(Status.SUCCESS, writeStatus(viaSecond));
            RpcClient.ok(socket, "nvmf_subsystem_remove_listener", listener(second));
            assertThrows(
                    ExecutionException.class,
                    () -> viaSecond.getFeatures(Opcodes.FEAT_ASYNC_EVENT_CONFIG).get(10, TimeUnit.SECONDS),
                    "the controller that came through the removed listener is gone");
            assertEquals(Status.SUCCESS, writeStatus(viaFirst), "the other path serves on");
            NvmeException refused = assertThrows(NvmeException.class, () -> connect(second, NQN));
            assertEquals(
                    Status.CONNECT_INVALID_PARAMETERS, refused.status() & 0x7FF, "as nvmet: not linked to that port");
        } finally {
            viaSecond.close();
        }
        JsonNode err = RpcClient.call(socket, "nvmf_subsystem_remove_listener", listener(second));
        assertEquals(-32001, err.get("error").get("code").asInt(), "not found: " + err);
    }

    @Test
    void inaccessiblePathFailsIoWithThePathStatusTellsItsHostAndLeavesTheOtherServing() throws Exception {
        int[] ports = startWithTwoListeners();
        int first = ports[0];
        int second = ports[1];
        try (NvmeController a = connect(first, NQN);
                NvmeController b = connect(second, NQN)) {
            CompletableFuture<Long> eventA = awaitAnaEvent(a);
            CompletableFuture<Long> eventB = awaitAnaEvent(b);
            RpcClient.ok(
                    socket,
                    "nvmf_subsystem_listener_set_ana_state",
                    listener(first).put("ana_state", "inaccessible").put("anagrpid", 1));
            assertEquals(
                    ANA_CHANGE_EVENT, eventA.get(10, TimeUnit.SECONDS) & 0xFFFFFF, "the host on that path is told");
            assertFalse(eventB.isDone(), "the other path did not change");
            assertEquals(Map.of(1, "3:[1]"), anaLog(a));
            assertEquals(Map.of(1, "1:[1]"), anaLog(b));
            int status = writeStatus(a);
            assertEquals(Status.ANA_INACCESSIBLE, status & 0x7FF);
            assertFalse(Status.isDnr(status), "no DNR: the host retries on another path");
            assertEquals(Status.SUCCESS, writeStatus(b));

            CompletableFuture<Long> again = awaitAnaEvent(a); // the log was read: the notice may come again
            RpcClient.ok(
                    socket,
                    "nvmf_subsystem_listener_set_ana_state",
                    listener(first).put("ana_state", "optimized"));
            assertEquals(ANA_CHANGE_EVENT, again.get(10, TimeUnit.SECONDS) & 0xFFFFFF);
            assertEquals(Status.SUCCESS, writeStatus(a), "the path serves again");
        }
        JsonNode listeners = RpcClient.ok(
                socket, "nvmf_subsystem_get_listeners", RpcClient.params().put("nqn", NQN));
        assertEquals(
                "optimized",
                listeners.get(0).get("ana_states").get(0).get("ana_state").asText());
    }

    @Test
    void listenersAndAnaStatesAreSavedAndTheSavedFileRestoresThem() throws Exception {
        start();
        int second = freePort();
        RpcClient.ok(socket, "nvmf_subsystem_add_listener", listener(second));
        RpcClient.ok(
                socket,
                "nvmf_subsystem_listener_set_ana_state",
                listener(second).put("ana_state", "non_optimized"));
        TargetConfig saved = TargetConfig.read(configFile);
        rpc.close();
        target.close();
        target = TargetServer.start(saved, true);
        rpc = null;
        try (NvmeController host = connect(second, NQN)) {
            assertEquals(
                    Map.of(1, "2:[1]"), anaLog(host), "the restored target reports the saved state on that listener");
        }
        try (NvmeController host = connect(TestTargets.port(target), NQN)) {
            assertEquals(Map.of(1, "1:[1]"), anaLog(host));
        }
    }

    @Test
    void drainMakesEveryPathInaccessibleAndEndsOnceHostsStopSending() throws Exception {
        start();
        try (NvmeController host = connect(TestTargets.port(target), NQN)) {
            CompletableFuture<Long> event = awaitAnaEvent(host);
            assertEquals(Status.SUCCESS, writeStatus(host));
            target.drainForShutdown(30_000, 200);
            assertEquals(ANA_CHANGE_EVENT, event.get(10, TimeUnit.SECONDS) & 0xFFFFFF);
            assertEquals(Status.ANA_INACCESSIBLE, writeStatus(host) & 0x7FF);
            assertEquals(Map.of(1, "3:[1]"), anaLog(host));
        }
    }

    @Test
    void listenerBeyondLoopbackIsRefusedForASubsystemOpenToAnyHostByDefault() throws Exception {
        start();
        ObjectNode p = RpcClient.params()
                .put("nqn", NQN)
                .set(
                        "listen_address",
                        RpcClient.params().put("traddr", "0.0.0.0").put("trsvcid", Integer.toString(freePort())));
        JsonNode err = RpcClient.call(socket, "nvmf_subsystem_add_listener", p);
        assertEquals(-32602, err.get("error").get("code").asInt(), err.toString());
        assertTrue(err.get("error").get("message").asText().contains("add-host"), err.toString());
    }
}
