package io.jbof.app;

import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;

import java.nio.file.Path;

/** Starts real targets on loopback (an ephemeral port) for the system tests. */
final class TestTargets {
    private TestTargets() {}

    static TargetConfig config(String nqn, Path... files) {
        TargetConfig cfg = new TargetConfig();
        cfg.listen.add("127.0.0.1:0");
        cfg.ioThreads = 2;
        cfg.maxIoQueues = 4;
        TargetConfig.SubsystemConfig s = new TargetConfig.SubsystemConfig();
        s.nqn = nqn;
        for (Path f : files) {
            TargetConfig.NamespaceConfig n = new TargetConfig.NamespaceConfig();
            n.path = f.toString();
            n.size = "16M";
            s.namespaces.add(n);
        }
        cfg.subsystems.add(s);
        return cfg;
    }

    static TargetServer start(TargetConfig cfg) throws Exception {
        return TargetServer.start(cfg);
    }

    static int port(TargetServer t) {
        return t.boundAddresses().get(0).getPort();
    }
}
