package io.jbof.csi;

import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.mgmt.JsonRpcDispatcher;
import io.jbof.target.mgmt.ManagementService;
import io.jbof.target.mgmt.RpcSocketServer;
import java.nio.file.Files;
import java.nio.file.Path;

/** A storage host for tests: a real target on loopback, empty, its management API on a socket, its volume files in their own folder. */
record StorageTarget(TargetServer target, RpcSocketServer rpc, Path socket, Path files) implements AutoCloseable {
    static StorageTarget start(Path dir, String name) throws Exception {
        TargetConfig cfg = new TargetConfig();
        cfg.listen.add("127.0.0.1:0");
        TargetServer t = TargetServer.start(cfg, true);
        Path socket = dir.resolve(name + ".sock");
        RpcSocketServer rpc = RpcSocketServer.start(socket, new JsonRpcDispatcher(new ManagementService(t, cfg, null)));
        return new StorageTarget(t, rpc, socket, Files.createDirectories(dir.resolve(name)));
    }

    int port() {
        return target.boundAddresses().get(0).getPort();
    }

    /** The --storage-host option that names it. */
    String option(String name, String quota) {
        return name + "=unix://" + socket + ",portal=127.0.0.1:" + port() + ",dir=" + files
                + (quota == null ? "" : ",capacity=" + quota);
    }

    @Override
    public void close() {
        rpc.close();
        target.close();
    }
}
