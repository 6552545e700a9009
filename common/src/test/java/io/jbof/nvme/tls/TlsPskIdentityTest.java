package io.jbof.nvme.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TlsPskIdentityTest {
    @Test
    void parsesBothVersionsAndFormatsThemBack() {
        String v0 = "NVMe0R02 nqn.2014-08.org.nvmexpress:uuid:1 nqn.2024-01.io.jbof:s";
        TlsPskIdentity a = TlsPskIdentity.parse(v0);
        assertEquals(0, a.version());
        assertEquals(2, a.cipher());
        assertEquals("nqn.2014-08.org.nvmexpress:uuid:1", a.hostNqn());
        assertEquals("nqn.2024-01.io.jbof:s", a.subsysNqn());
        assertNull(a.digest());
        assertEquals(v0, a.toString());

        String v1 = "NVMe1G01 nqn.a:h nqn.b:s dGhpcyBpcyBhIGRpZ2VzdA==";
        TlsPskIdentity b = TlsPskIdentity.parse(v1);
        assertEquals(1, b.version());
        assertTrue(b.generated());
        assertEquals("dGhpcyBpcyBhIGRpZ2VzdA==", b.digest());
        assertEquals(v1, b.toString());
    }

    @Test
    void rejectsWhatIsNotAnNvmeIdentity() {
        assertNull(TlsPskIdentity.parse("Client_identity"));
        assertNull(TlsPskIdentity.parse("NVMe2R01 h s"), "unknown version");
        assertNull(TlsPskIdentity.parse("NVMe0X01 h s"), "neither retained nor generated");
        assertNull(TlsPskIdentity.parse("NVMe0R03 h s"), "no such hash");
        assertNull(TlsPskIdentity.parse("NVMe0R01 h"), "version 0 names host and subsystem");
        assertNull(TlsPskIdentity.parse("NVMe1R01 h s"), "version 1 carries a digest");
        assertNull(TlsPskIdentity.parse("NVMe0R01 h  s"), "empty field");
        assertNull(TlsPskIdentity.parse("NVMe0R01 h s " + "x".repeat(700)), "too long");
        assertNull(TlsPskIdentity.parse(null));
    }
}
