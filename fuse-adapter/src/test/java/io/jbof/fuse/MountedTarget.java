package io.jbof.fuse;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A real target on loopback (in this JVM) with its namespaces mounted through FUSE in a temp folder. */
final class MountedTarget implements AutoCloseable {
    static final String NQN = "nqn.2024-01.io.jbof:fuse-test";
    final TargetServer target;
    final NvmeController controller;
    final FuseMount mount;
    final Path dir;

    private MountedTarget(TargetServer target, NvmeController controller, FuseMount mount, Path dir) {
        this.target = target;
        this.controller = controller;
        this.mount = mount;
        this.dir = dir;
    }

    /** Skips (with the reason) on machines that cannot mount FUSE: jbof's own FUSE server needs only /dev/fuse and root. */
    static void assumeFuse() {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine");
        assumeTrue("root".equals(System.getProperty("user.name")), "FUSE mounts in these tests need root");
    }

    /** {@code namespaces}: size and block size pairs, e.g. {"64M", "4096", "16M", "512"}; "ro:" before a size makes it read-only. */
    static MountedTarget start(Path dir, FuseMount.Options options, String... namespaces) throws Exception {
        assumeFuse();
        TargetConfig cfg = new TargetConfig();
        cfg.listen.add("127.0.0.1:0");
        cfg.ioThreads = 2;
        TargetConfig.SubsystemConfig s = new TargetConfig.SubsystemConfig();
        s.nqn = NQN;
        for (int i = 0; i < namespaces.length; i += 2) {
            TargetConfig.NamespaceConfig n = new TargetConfig.NamespaceConfig();
            n.path = dir.resolve("ns" + (i / 2 + 1) + ".img").toString();
            boolean ro = namespaces[i].startsWith("ro:");
            String size = ro ? namespaces[i].substring(3) : namespaces[i];
            if (ro) {
                try (var f = new java.io.RandomAccessFile(n.path, "rw")) {
                    f.setLength(io.jbof.util.Sizes.parse(size));
                }
                n.readOnly = true;
            } else {
                n.size = size;
            }
            n.blockSize = Integer.parseInt(namespaces[i + 1]);
            s.namespaces.add(n);
        }
        cfg.subsystems.add(s);
        return start(dir, options, cfg);
    }

    /** Starts a target of {@code cfg} (subsystem {@link #NQN}) and mounts its namespaces. */
    static MountedTarget start(Path dir, FuseMount.Options options, TargetConfig cfg) throws Exception {
        assumeFuse();
        TargetServer t = TargetServer.start(cfg);
        NvmeController c = null;
        try {
            c = NvmeController.connect(options(t));
            Path mnt = Files.createDirectories(dir.resolve("mnt"));
            return new MountedTarget(t, c, FuseMount.mount(c, mnt, options), dir);
        } catch (Exception e) {
            if (c != null) c.close();
            t.close();
            throw e;
        }
    }

    static ConnectOptions options(TargetServer t) {
        return ConnectOptions.builder()
                .port(t.boundAddresses().get(0).getPort())
                .subsystemNqn(NQN)
                .ioQueues(2)
                .commandTimeoutMillis(10_000)
                .build();
    }

    Path file(int nsid) {
        return mount.mountPoint().resolve("ns" + nsid);
    }

    Path backingFile(int nsid) {
        return dir.resolve("ns" + nsid + ".img");
    }

    @Override
    public void close() throws IOException {
        try {
            mount.close();
        } finally {
            controller.close();
            target.close();
        }
    }
}
