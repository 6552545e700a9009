package io.jbof.app;

import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.mgmt.JsonRpcDispatcher;
import io.jbof.target.mgmt.ManagementService;
import io.jbof.target.mgmt.RpcSocketServer;
import java.nio.file.Path;

/** A real target with its management API on a Unix socket in a test's folder, saving every change to target.json there. */
final class ManagedTarget {
    final TargetServer target;
    final RpcSocketServer rpc;
    final Path socket;
    final Path configFile;

    private ManagedTarget(TargetServer target, RpcSocketServer rpc, Path socket, Path configFile) {
        this.target = target;
        this.rpc = rpc;
        this.socket = socket;
        this.configFile = configFile;
    }

    static ManagedTarget start(TargetConfig cfg, Path dir) throws Exception {
        TargetServer target = TargetServer.start(cfg, true);
        Path configFile = dir.resolve("target.json");
        Path socket = dir.resolve("rpc.sock");
        try {
            return new ManagedTarget(
                    target,
                    RpcSocketServer.start(
                            socket, new JsonRpcDispatcher(new ManagementService(target, cfg, configFile))),
                    socket,
                    configFile);
        } catch (Exception e) {
            target.close();
            throw e;
        }
    }
}
