package io.jbof.nvme.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jbof.nvme.auth.DhchapHash;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class TlsPskDerivationTest {
    static final HexFormat HEX = HexFormat.of();

    @Test
    void hkdfMatchesRfc5869TestCase3() {
        // RFC 5869 A.3: SHA-256, zero-length salt (= HashLen zeros), empty info.
        byte[] ikm = new byte[22];
        java.util.Arrays.fill(ikm, (byte) 0x0b);
        byte[] prk = TlsPskDerivation.extract(DhchapHash.SHA256, ikm);
        assertEquals("19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04", HEX.formatHex(prk));
        assertEquals(
                "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
                HEX.formatHex(TlsPskDerivation.expand(DhchapHash.SHA256, prk, new byte[0], 42)));
    }

    @Test
    void expandLabelEncodesTheTls13HkdfLabel() {
        // RFC 8446 7.1: struct { uint16 length; opaque label<7..255> = "tls13 " + Label; opaque context<0..255>; }
        byte[] prk = new byte[32];
        byte[] got = TlsPskDerivation.expandLabel(DhchapHash.SHA256, prk, "HostNQN", "h", 32, false);
        byte[] info = HEX.parseHex(
                "0020" + "0d" + HEX.formatHex("tls13 HostNQN".getBytes()) + "01" + HEX.formatHex("h".getBytes()));
        assertArrayEquals(TlsPskDerivation.expand(DhchapHash.SHA256, prk, info, 32), got);
        // libnvme before 1.11: little-endian length, no length bytes before label and context.
        byte[] compat = HEX.parseHex("2000" + HEX.formatHex("tls13 HostNQNh".getBytes()));
        assertArrayEquals(
                TlsPskDerivation.expand(DhchapHash.SHA256, prk, compat, 32),
                TlsPskDerivation.expandLabel(DhchapHash.SHA256, prk, "HostNQN", "h", 32, true));
    }

    @Test
    void identityCarriesHashNqnsAndDigest() {
        TlsPskKey key = TlsPskKey.of(TlsPskKeyTest.counting(48), 2);
        TlsPskDerivation.Derived v1 =
                TlsPskDerivation.derive(key, "nqn.a:host", "nqn.b:sub", 1, TlsPskDerivation.Labels.RFC8446);
        assertEquals("NVMe1R02 nqn.a:host nqn.b:sub ", v1.identity().toString().substring(0, 30));
        assertEquals(64, v1.identity().digest().length(), "base64 of a SHA-384 HMAC");
        assertEquals(48, v1.psk().length);
        TlsPskDerivation.Derived v0 =
                TlsPskDerivation.derive(key, "nqn.a:host", "nqn.b:sub", 0, TlsPskDerivation.Labels.RFC8446);
        assertEquals("NVMe0R02 nqn.a:host nqn.b:sub", v0.identity().toString());
        assertFalse(java.util.Arrays.equals(v0.psk(), v1.psk()), "the identity is part of the derivation");
        assertFalse(
                java.util.Arrays.equals(
                        v1.psk(),
                        TlsPskDerivation.derive(key, "nqn.a:host", "nqn.b:other", 1, TlsPskDerivation.Labels.RFC8446)
                                .psk()),
                "another subsystem gets another PSK");
    }

    @Test
    void matchesLibnvme113AndTheLinuxKernelsHandshake() {
        // Inserted by nvme-cli 2.13 / libnvme 1.13 (Debian 13) with check-tls-key --identity=1 --insert: the
        // keyring held this identity, and the kernel host's TLS handshake with it against the jbof target
        // succeeded (scripts/interop tls), which proves the TLS PSK too.
        TlsPskKey key = TlsPskKey.parse("NVMeTLSkey-1:01:G3VAYR5I/I1qURx6i3if2VjUL9qvvXSUCwvCGKO7U4nX6lav:");
        String host = "nqn.2014-08.org.nvmexpress:uuid:6a626f66-0000-4000-8000-000000000002";
        String sub = "nqn.2024-01.io.jbof:interop";
        TlsPskDerivation.Derived v1 = TlsPskDerivation.derive(key, host, sub, 1, TlsPskDerivation.Labels.LEGACY);
        assertEquals(
                "NVMe1R01 " + host + " " + sub + " 4w0a4fDSQML5A4KqYhkk3bmphV49QQx8LnpT+WoMgaA=",
                v1.identity().toString());
        assertEquals("9648a5e57aed28e3a12abd80afd93a5990cf9f53329cf67412d52468f4258c66", HEX.formatHex(v1.psk()));
        // The RFC 8446 encoding gives another retained key, hence another digest: how a target tells them apart.
        assertFalse(v1.identity()
                .equals(TlsPskDerivation.derive(key, host, sub, 1, TlsPskDerivation.Labels.RFC8446)
                        .identity()));
    }

    @Test
    void untransformedKeyIsItsOwnRetainedKey() {
        TlsPskKey key = TlsPskKey.of(TlsPskKeyTest.counting(32), 0);
        assertArrayEquals(TlsPskKeyTest.counting(32), TlsPskDerivation.retained(key, "nqn.a:host", false));
        assertEquals(
                "NVMe0R01 nqn.a:host nqn.b:sub",
                TlsPskDerivation.derive(key, "nqn.a:host", "nqn.b:sub", 0, TlsPskDerivation.Labels.RFC8446)
                        .identity()
                        .toString());
    }
}
