package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --cntlid-range: two targets serving one subsystem never hand out the same controller ID. */
class ControllerIdRangeTest {
    static final String NQN = "nqn.2024-01.io.jbof:cntlid";

    @TempDir
    Path dir;

    @Test
    void controllerIdsStayInsideTheTargetsRange() throws Exception {
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("a.img"));
        cfg.cntlidRange = "300-301";
        try (TargetServer t = TestTargets.start(cfg)) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(TestTargets.port(t))
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .queueDepth(8)
                    .build();
            try (NvmeController a = NvmeController.connect(o);
                    NvmeController b = NvmeController.connect(o)) {
                assertEquals(Set.of(300, 301), Set.of(a.controllerId(), b.controllerId()));
                NvmeException full = assertThrows(
                        NvmeException.class, () -> NvmeController.connect(o), "every ID of the range is taken");
                assertEquals(Status.CONNECT_CONTROLLER_BUSY, full.status() & 0x7FF);
            }
        }
    }

    @Test
    void aRangeOutsideTheControllerIdsIsRefusedAtStart() {
        TargetConfig cfg = TestTargets.config(NQN, dir.resolve("b.img"));
        cfg.cntlidRange = "0-70000";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TestTargets.start(cfg));
        assertTrue(e.getMessage().contains("1-65519"), e.getMessage());
    }
}
