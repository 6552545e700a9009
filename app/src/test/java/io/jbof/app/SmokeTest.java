package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SmokeTest {
    @TempDir
    Path dir;

    @Test
    void writesAndReadsBack() throws Exception {
        try (TargetServer t =
                TestTargets.start(TestTargets.config("nqn.2024-01.io.jbof:smoke", dir.resolve("a.img")))) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(TestTargets.port(t))
                    .subsystemNqn("nqn.2024-01.io.jbof:smoke")
                    .ioQueues(2)
                    .build();
            try (NvmeController c = NvmeController.connect(o)) {
                Namespace ns = c.namespace(1);
                assertEquals(4096, ns.blockSize());
                for (int size : new int[] {1, 2, 64}) {
                    ByteBuf w = Unpooled.buffer(size * 4096);
                    for (int i = 0; i < size * 4096; i++) w.writeByte(i * 7 + size);
                    ns.writeBlocking(10, size, w, false);
                    ByteBuf r = Unpooled.buffer(size * 4096);
                    ns.readBlocking(10, size, r);
                    assertEquals(w, r);
                }
                ns.flushBlocking();
            }
        }
    }
}
