package io.jbof.initiator.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jbof.transport.rdma.RdmaNative;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class RdmaHostTransportTest {
    @Test
    void withoutADeviceTheHostTransportSaysWhatWasSearchedAndWhatToDo() {
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
        assertTrue(
                host.getMessage().contains("no RDMA device")
                        && host.getMessage().contains("/sys/class/infiniband")
                        && host.getMessage().contains("rdma_rxe"),
                host.getMessage());
    }
}
