package io.jbof.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.jbof.csi.v1.ListVolumesRequest;
import io.jbof.csi.v1.ListVolumesResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Kubernetes does with the driver, across hosts: two jbof targets, each in its own network
 * namespace, are the storage hosts; the driver (scripts/jbof-csi, controller and node) runs in a third as
 * the node, reaching their management APIs over HTTPS with a token and their volumes over NVMe/TCP on the
 * veth links. Needs root, /dev/fuse, ip, nsenter, ss, openssl and the ext4 tools (skipped otherwise).
 */
class CsiLifecycleIT {
    static final long MIB = KubeletCalls.MIB;
    static final String NODE = "nqn.2014-08.org.nvmexpress:uuid:dddddddd-0000-0000-0000-00000000000d";
    static final Path ROOT =
            Path.of(System.getProperty("jbof.root", "..")).toAbsolutePath().normalize();
    static final int RPC_PORT = 8443;
    static final int NVME_PORT = 4420;

    @TempDir
    Path dir;

    NetNamespaces net;
    final DaemonProcess[] storage = new DaemonProcess[3];
    DaemonProcess driver;
    CsiClient client;
    KubeletCalls k;

    @BeforeEach
    void start() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "network namespaces and mounts: run as root");
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        for (String tool : List.of("ip", "nsenter", "ss", "openssl", "losetup", "mkfs.ext4", "blkid", "resize2fs")) {
            assumeTrue(
                    Stream.of("/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/")
                            .anyMatch(d -> Files.isExecutable(Path.of(d + tool))),
                    tool + " is missing");
        }
        net = new NetNamespaces().create(2);
        SelfSignedCert.make(dir, NetNamespaces.storageAddress(1), NetNamespaces.storageAddress(2));
        Files.writeString(dir.resolve("token"), "lifecycle-token-0123456789abcdef\n");
        storage[1] = startStorage(1);
        storage[2] = startStorage(2);
        driver = DaemonProcess.start(
                NetNamespaces.in(
                        net.node(),
                        ROOT.resolve("scripts/jbof-csi").toString(),
                        "--endpoint",
                        "unix://" + dir.resolve("csi.sock"),
                        "--node-id",
                        NODE,
                        "--state-dir",
                        dir.resolve("state").toString(),
                        "--storage-host",
                        storageHost(1, "96m"),
                        "--storage-host",
                        storageHost(2, "1g")),
                "jbof-csi: serving",
                dir.resolve("driver.log"));
        client = new CsiClient(dir.resolve("csi.sock"));
        k = new KubeletCalls(client, NODE);
    }

    DaemonProcess startStorage(int n) throws IOException {
        String addr = NetNamespaces.storageAddress(n);
        Files.createDirectories(dir.resolve("s" + n));
        return DaemonProcess.start(
                NetNamespaces.in(
                        net.storage(n),
                        ROOT.resolve("scripts/jbof-target").toString(),
                        "--listen",
                        addr + ":" + NVME_PORT,
                        "--config",
                        dir.resolve("s" + n + ".json").toString(),
                        "--rpc-socket",
                        dir.resolve("s" + n + ".sock").toString(),
                        "--rpc-listen",
                        addr + ":" + RPC_PORT,
                        "--rpc-token",
                        "@" + dir.resolve("token"),
                        "--rpc-tls-cert",
                        dir.resolve("cert.pem").toString(),
                        "--rpc-tls-key",
                        dir.resolve("key.pem").toString()),
                "jbof-target listening",
                dir.resolve("s" + n + ".log"));
    }

    String storageHost(int n, String capacity) {
        String addr = NetNamespaces.storageAddress(n);
        return "s" + n + "=https://" + addr + ":" + RPC_PORT + ",token=@" + dir.resolve("token") + ",cacert="
                + dir.resolve("cert.pem") + ",portal=" + addr + ":" + NVME_PORT + ",dir=" + dir.resolve("s" + n)
                + ",capacity=" + capacity;
    }

    @AfterEach
    void stop() throws Exception {
        if (k != null) k.undoAll();
        if (client != null) client.close();
        if (driver != null) driver.close();
        for (DaemonProcess s : storage) if (s != null) s.close();
        if (net != null) net.close();
    }

    @Test
    void volumesArePlacedAcrossStorageHostsAttachedOverTheNetworkAndOutliveAStorageHostKilledMidCall()
            throws Exception {
        // Placement: the first host with room; s1 may hold 96 MiB.
        String a = k.create("pvc-a", 64 * MIB, KubeletCalls.EXT4);
        String b = k.create("pvc-b", 64 * MIB, KubeletCalls.EXT4);
        String c = k.create("pvc-c", 16 * MIB, KubeletCalls.EXT4);
        assertTrue(a.startsWith("s1:"), a);
        assertTrue(b.startsWith("s2:"), "s1 has 32 MiB left, so the next 64 MiB go to s2: " + b);
        assertTrue(c.startsWith("s1:"), "16 MiB still fit on s1: " + c);

        // Attach over the veth link: publish, stage, write, unstage, stage again, read back.
        Map<String, String> va = k.attach(a, KubeletCalls.EXT4);
        assertEquals(NetNamespaces.storageAddress(1) + ":" + NVME_PORT, va.get("portals"));
        Path staging = dir.resolve("staging-a");
        Path target = dir.resolve("pod-a/volume");
        k.uses(a, staging, target);
        k.stage(va, staging, KubeletCalls.EXT4);
        k.publish(va, staging, target, KubeletCalls.EXT4);
        Files.writeString(target.resolve("across.txt"), "from the node to storage host s1\n");
        k.unpublish(va, target);
        k.unstage(va, staging);
        assertNull(Mounts.typeAt(staging));
        k.stage(va, staging, KubeletCalls.EXT4);
        k.publish(va, staging, target, KubeletCalls.EXT4);
        assertEquals("from the node to storage host s1\n", Files.readString(target.resolve("across.txt")));
        long before = k.total(va, target);
        k.unpublish(va, target);
        k.unstage(va, staging);

        // Expand (offline, as the driver declares it), then the file system is grown at stage.
        assertEquals(80 * MIB, k.expand(a, 80 * MIB));

        // Concurrent calls on one volume, as a kubelet retrying while its first call still runs.
        List<Callable<Object>> stages = new ArrayList<>();
        for (int i = 0; i < 6; i++)
            stages.add(() -> {
                k.stage(va, staging, KubeletCalls.EXT4);
                return null;
            });
        allSucceed(stages);
        assertEquals(1, mountsAt(staging), "six stages, one mount");
        k.publish(va, staging, target, KubeletCalls.EXT4);
        assertTrue(k.total(va, target) > before + 8 * MIB, "grown: " + before + " -> " + k.total(va, target));
        assertEquals("from the node to storage host s1\n", Files.readString(target.resolve("across.txt")));
        k.unpublish(va, target);
        List<Callable<Object>> unstages = new ArrayList<>();
        for (int i = 0; i < 6; i++)
            unstages.add(() -> {
                k.unstage(va, staging);
                return null;
            });
        allSucceed(unstages);
        assertEquals(0, mountsAt(staging));

        // Storage host s2 freezes with a call in flight, then is killed: the call fails as UNAVAILABLE
        // (s1 has no room for it), and once s2 is back the retried call places the volume there.
        storage[2].freeze();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Status.Code> inFlight =
                    pool.submit(() -> codeOf(() -> k.create("pvc-d", 64 * MIB, KubeletCalls.EXT4)));
            awaitRequestQueuedAt(2);
            storage[2].kill();
            assertEquals(Status.Code.UNAVAILABLE, inFlight.get(60, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        storage[2] = startStorage(2);
        String d = retried(() -> k.create("pvc-d", 64 * MIB, KubeletCalls.EXT4));
        assertTrue(d.startsWith("s2:"), d);
        assertEquals(List.of(a, b, c, d).stream().sorted().toList(), volumes(), "s2 kept pvc-b across its restart");

        // Delete: concurrently for one volume, then the rest; nothing is left on either host.
        List<Callable<Object>> deletes = new ArrayList<>();
        for (int i = 0; i < 6; i++)
            deletes.add(() -> {
                k.delete(a);
                return null;
            });
        allSucceed(deletes);
        for (String v : List.of(b, c, d)) k.delete(v);
        assertEquals(List.of(), volumes());
        try (Stream<Path> s1 = Files.list(dir.resolve("s1"));
                Stream<Path> s2 = Files.list(dir.resolve("s2"))) {
            assertEquals(0, s1.count() + s2.count(), "every volume's file is deleted with it");
        }
    }

    /** Runs the calls at once; fails with the first failure. */
    static void allSucceed(List<Callable<Object>> calls) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(calls.size());
        try {
            for (Future<Object> f : pool.invokeAll(calls, 120, TimeUnit.SECONDS)) f.get();
        } finally {
            pool.shutdownNow();
        }
    }

    /** How many mounts the kernel lists at {@code path}. */
    static long mountsAt(Path path) throws IOException {
        String field = " " + path.toAbsolutePath().normalize() + " ";
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/mountinfo"))) {
            return lines.filter(l -> l.contains(field)).count();
        }
    }

    static Status.Code codeOf(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    /** A call the CO retries while it answers UNAVAILABLE (a connection the restart broke), at most five times. */
    static String retried(Callable<String> call) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.call();
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || attempt == 5) throw e;
            }
        }
    }

    List<String> volumes() {
        return client
                .call(
                        "Controller",
                        "ListVolumes",
                        ListVolumesRequest.getDefaultInstance(),
                        ListVolumesResponse.getDefaultInstance())
                .getEntriesList()
                .stream()
                .map(e -> e.getVolume().getVolumeId())
                .sorted()
                .toList();
    }

    /**
     * Waits until storage host {@code n}'s management port holds bytes nobody read: the driver's request
     * reached the frozen host. Polls the kernel's socket table, for at most a minute.
     */
    void awaitRequestQueuedAt(int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            String out = NetNamespaces.run(NetNamespaces.in(
                            net.storage(n), "ss", "-Htn", "state", "established", "( sport = :" + RPC_PORT + " )")
                    .toArray(String[]::new));
            for (String line : out.strip().split("\n")) {
                String[] f = line.strip().split("\\s+");
                if (f.length > 1 && Long.parseLong(f[0]) > 0) return;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no request reached storage host s" + n);
    }
}
