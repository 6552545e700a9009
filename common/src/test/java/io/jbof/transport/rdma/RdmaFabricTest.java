package io.jbof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RdmaFabricTest {
    @Test
    void verbsTransportTypesMapToFabrics() {
        assertEquals(RdmaFabric.INFINIBAND_OR_ROCE, RdmaFabric.fromTransportType(0));
        assertEquals(RdmaFabric.IWARP, RdmaFabric.fromTransportType(1));
        assertEquals(RdmaFabric.OTHER, RdmaFabric.fromTransportType(2));
        assertEquals(RdmaFabric.OTHER, RdmaFabric.fromTransportType(-1));
    }

    @Test
    void iwarpReadSinksAllowRemoteWriteAndRoceSinksDoNot() {
        assertEquals(RegisteredMemory.LOCAL_WRITE | RegisteredMemory.REMOTE_WRITE, RdmaFabric.IWARP.readSinkAccess());
        assertEquals(RegisteredMemory.LOCAL_WRITE, RdmaFabric.INFINIBAND_OR_ROCE.readSinkAccess());
    }

    @Test
    void onlyIwarpAnswersRemoteInvalidationByPlainSend() {
        assertEquals(false, RdmaFabric.IWARP.remoteInvalidate());
        assertEquals(true, RdmaFabric.INFINIBAND_OR_ROCE.remoteInvalidate());
    }

    @Test
    void theAckTimeoutIsSetOnRoceAndLeftToTcpOnIwarp() {
        assertEquals(true, RdmaFabric.INFINIBAND_OR_ROCE.hasAckTimeout());
        assertEquals(false, RdmaFabric.IWARP.hasAckTimeout());
    }
}
