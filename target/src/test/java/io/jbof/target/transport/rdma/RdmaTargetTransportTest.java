package io.jbof.target.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.transport.rdma.RdmaNative;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class RdmaTargetTransportTest {
    @Test
    void withoutADeviceTheTargetTransportSaysWhatWasSearchedAndWhatToDo() {
        String problem = RdmaNative.problem();
        if (problem != null) {
            assertTrue(problem.contains("rdma-native") && problem.contains("java.library.path"), problem);
            return;
        }
        assumeTrue(RdmaNative.deviceNames().length == 0, "this machine has an RDMA device");
        IOException target = assertThrows(
                IOException.class,
                () -> new RdmaTargetTransport(new RdmaTargetOptions(4096, 32, 1, 4096, 4), 1 << 20, 1));
        assertTrue(target.getMessage().contains("no RDMA device"), target.getMessage());
    }
}
