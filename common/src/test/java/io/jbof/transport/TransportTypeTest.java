package io.jbof.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.nvme.DiscoveryLog;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class TransportTypeTest {

    @Test
    void eachTransportIsFoundByItsNameAndByItsTrtype() {
        for (TransportType t : TransportType.values()) {
            assertSame(t, TransportType.parse(t.id()));
            assertEquals(t.id(), TransportType.nameOf(t.trtype()));
        }
        assertEquals(DiscoveryLog.TRTYPE_TCP, TransportType.TCP.trtype());
        assertEquals(DiscoveryLog.TRTYPE_RDMA, TransportType.RDMA.trtype());
    }

    @Test
    void anUnknownNameIsRefusedWithTheKnownOnesListed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TransportType.parse("fc"));
        assertEquals("transport 'fc' is unknown; use tcp or rdma", e.getMessage());
        assertEquals("trtype-2", TransportType.nameOf(2)); // FC, which jbof does not carry
    }

    @Test
    void onlyRdmaHasKeyedSglsAndOnlyTcpCanBeSecuredByTls() {
        assertTrue(TransportType.RDMA.keyedSgls());
        assertFalse(TransportType.TCP.keyedSgls());
        assertTrue(TransportType.TCP.supportsTls());
        assertFalse(TransportType.RDMA.supportsTls());
    }

    @Test
    void discoveryTsasSaysRdmaCmForRdmaAndTls13ForTcpOnlyWhenTlsIsOn() {
        ByteBuf b = Unpooled.buffer(256).writeZero(256);
        TransportType.RDMA.writeTsas(b, 0, false);
        assertEquals(1, b.getByte(0)); // RC
        assertEquals(1, b.getByte(1)); // no provider type
        assertEquals(1, b.getByte(2)); // RDMA CM
        ByteBuf t = Unpooled.buffer(256).writeZero(256);
        TransportType.TCP.writeTsas(t, 0, false);
        assertEquals(0, t.getByte(0));
        TransportType.TCP.writeTsas(t, 0, true);
        assertEquals(DiscoveryLog.TCP_SECTYPE_TLS13, t.getByte(0));
    }
}
