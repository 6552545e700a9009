package io.jbof.nvme.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class DhchapTest {
    /** Key bytes 0..31, transformed with SHA-256: the form nvme gen-dhchap-key prints (CRC-32 appended). */
    static final String SECRET = "DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";

    @Test
    void secretsParseAndFormatAsTheLinuxToolsWriteThem() {
        DhchapKey k = DhchapKey.parse(SECRET);
        assertEquals(1, k.hashId());
        assertEquals(32, k.length());
        byte[] raw = new byte[32];
        for (int i = 0; i < 32; i++) raw[i] = (byte) i;
        assertEquals(SECRET, DhchapKey.format(raw, 1));
    }

    @Test
    void damagedOrMalformedSecretsAreRefusedWithoutRepeatingThem() {
        String flipped = SECRET.replace("AAEC", "AAED");
        IllegalArgumentException crc = assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse(flipped));
        assertTrue(crc.getMessage().contains("CRC"), crc.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse("DHHC-2:01:AAAA:"));
        assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse("DHHC-1:07:" + SECRET.substring(10)));
        IllegalArgumentException len =
                assertThrows(IllegalArgumentException.class, () -> DhchapKey.parse("DHHC-1:00:AAECAwQFBgc=:"));
        assertTrue(
                len.getMessage().contains("32, 48 or 64") && !len.getMessage().contains("AAEC"), len.getMessage());
    }

    /**
     * Pinned outputs of the transform and of both responses, computed by this code after it interoperated
     * with Linux 6.12's host and target (scripts/interop dhchap): a change that breaks the wire fails here.
     */
    @Test
    void transformAndResponsesMatchTheValuesProvenAgainstLinux() {
        DhchapKey k = DhchapKey.parse(SECRET);
        byte[] transformed = k.transform("nqn.2024-01.io.jbof:host");
        byte[] challenge = new byte[32];
        for (int i = 0; i < 32; i++) challenge[i] = (byte) (0xA0 + i);
        byte[] host = Dhchap.response(
                DhchapHash.SHA256,
                transformed,
                challenge,
                0x01020304,
                7,
                Dhchap.HOST_ROLE,
                "nqn.2024-01.io.jbof:host",
                "nqn.2024-01.io.jbof:sub");
        byte[] ctrl = Dhchap.response(
                DhchapHash.SHA256,
                transformed,
                challenge,
                0x01020304,
                7,
                Dhchap.CONTROLLER_ROLE,
                "nqn.2024-01.io.jbof:sub",
                "nqn.2024-01.io.jbof:host");
        byte[] aug = Dhchap.augment(DhchapHash.SHA384, new byte[] {1, 2, 3}, challenge);
        assertEquals(PINNED_TRANSFORM, HexFormat.of().formatHex(transformed));
        assertEquals(PINNED_HOST, HexFormat.of().formatHex(host));
        assertEquals(PINNED_CTRL, HexFormat.of().formatHex(ctrl));
        assertEquals(PINNED_AUG, HexFormat.of().formatHex(aug));
        assertTrue(Dhchap.matches(host, host, 0, 32));
        byte[] other = host.clone();
        other[31] ^= 1;
        assertTrue(!Dhchap.matches(host, other, 0, 32));
        assertArrayEquals(k.transform("x"), k.transform("x"));
    }

    static final String PINNED_TRANSFORM = "fafd8b2ccc3ff976aa118da7293c676efc8fbc9f1095acd2c24319a93798d969";
    static final String PINNED_HOST = "36d3833f94a2c9e1bfcff547bdbc6746a290b5b9026fddb46231e70e2eea3e72";
    static final String PINNED_CTRL = "a9f0372adeb3816d36791eed594187322a9d6a60578de52775b7cd4623360ab4";
    static final String PINNED_AUG =
            "d46104498ee75d2a8e12387f5546a4312837f61191e5d8a126a324e90d80e76e97ae8f607c9b6c5a95114d59ace98c73";
}
