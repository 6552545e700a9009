package io.jbof.app;

import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import java.nio.file.Path;

/** Starts real targets on loopback (an ephemeral port) for the system tests. */
final class TestTargets {
    private TestTargets() {}

    static TargetConfig config(String nqn, Path... files) {
        TargetConfig cfg = TargetConfig.loopback(nqn, "16M", files);
        cfg.ioThreads = 2;
        cfg.maxIoQueues = 4;
        return cfg;
    }

    static TargetServer start(TargetConfig cfg) throws Exception {
        return TargetServer.start(cfg);
    }

    static int port(TargetServer t) {
        return t.boundAddresses().get(0).getPort();
    }
}
