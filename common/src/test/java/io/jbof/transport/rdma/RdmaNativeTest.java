package io.jbof.transport.rdma;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RdmaNativeTest {
    @Test
    void withoutADeviceTheTransportsSayWhatWasSearchedAndWhatToDo() {
        String problem = RdmaNative.problem();
        if (problem != null) {
            // No libdisni.so here: the message says how to build it and where it was looked for.
            assertTrue(problem.contains("rdma-native") && problem.contains("java.library.path"), problem);
            IOException e = assertThrows(IOException.class, () -> new RdmaHostTransport(1));
            assertTrue(e.getMessage().contains("libdisni"), e.getMessage());
            return;
        }
        assumeTrue(RdmaNative.deviceNames().length == 0, "this machine has an RDMA device");
        IOException host = assertThrows(IOException.class, () -> new RdmaHostTransport(1));
        assertTrue(host.getMessage().contains("no RDMA device") && host.getMessage().contains("/sys/class/infiniband")
                && host.getMessage().contains("rdma_rxe"), host.getMessage());
        IOException target = assertThrows(IOException.class,
                () -> new RdmaTargetTransport(new RdmaTargetOptions(4096, 32, 1, 4096, 4), 1 << 20, 1));
        assertTrue(target.getMessage().contains("no RDMA device"), target.getMessage());
    }
}
