package io.jbof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class RdmaPrivateDataTest {
    @Test
    void aRequestRoundTripsWithLinuxsFieldsAndLayout() throws Exception {
        byte[] req = RdmaPrivateData.encodeRequest(3, 128);
        assertEquals(32, req.length);
        // RECFMT 0, QID 3, HRQSIZE 128, HSQSIZE 127, little endian, 24 reserved bytes.
        assertArrayEquals(new byte[] {0, 0, 3, 0, (byte) 128, 0, 127, 0}, java.util.Arrays.copyOf(req, 8));
        RdmaPrivateData.Request r = RdmaPrivateData.decodeRequest(req, 8, 128);
        assertEquals(3, r.qid());
        assertEquals(128, r.queueEntries());
    }

    @Test
    void badRequestsAreRejectedWithTheirStatus() {
        assertEquals(
                RdmaPrivateData.STS_INVALID_LENGTH,
                assertThrows(RdmaPrivateData.Rejected.class, () -> RdmaPrivateData.decodeRequest(new byte[4], 8, 128))
                        .status);
        byte[] fmt = RdmaPrivateData.encodeRequest(1, 32);
        fmt[0] = 1;
        assertEquals(
                RdmaPrivateData.STS_INVALID_RECFMT,
                assertThrows(RdmaPrivateData.Rejected.class, () -> RdmaPrivateData.decodeRequest(fmt, 8, 128)).status);
        assertEquals(
                RdmaPrivateData.STS_INVALID_QID,
                assertThrows(
                                RdmaPrivateData.Rejected.class,
                                () -> RdmaPrivateData.decodeRequest(RdmaPrivateData.encodeRequest(9, 32), 8, 128))
                        .status);
        assertEquals(
                RdmaPrivateData.STS_INVALID_HSQSIZE,
                assertThrows(
                                RdmaPrivateData.Rejected.class,
                                () -> RdmaPrivateData.decodeRequest(RdmaPrivateData.encodeRequest(0, 64), 8, 128))
                        .status,
                "the admin queue holds at most 32 entries");
        assertEquals(
                RdmaPrivateData.STS_INVALID_HSQSIZE,
                assertThrows(
                                RdmaPrivateData.Rejected.class,
                                () -> RdmaPrivateData.decodeRequest(RdmaPrivateData.encodeRequest(1, 256), 8, 128))
                        .status);
    }

    @Test
    void acceptAndRejectRoundTrip() throws Exception {
        assertEquals(128, RdmaPrivateData.decodeAccept(RdmaPrivateData.encodeAccept(128)));
        byte[] rej = RdmaPrivateData.encodeReject(RdmaPrivateData.STS_NO_RESOURCES);
        assertEquals(4, rej.length);
        assertEquals(RdmaPrivateData.STS_NO_RESOURCES, RdmaPrivateData.decodeReject(rej));
        assertEquals(-1, RdmaPrivateData.decodeReject(new byte[2]));
    }
}
