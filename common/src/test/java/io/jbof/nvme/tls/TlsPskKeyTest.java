package io.jbof.nvme.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TlsPskKeyTest {
    static byte[] counting(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) i;
        return b;
    }

    @Test
    void formatsAsNvmeCliDoes() {
        // nvme gen-tls-key --secret 000102...1f -m 1 (nvme-cli 2.13) printed exactly this.
        assertEquals(
                "NVMeTLSkey-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
                TlsPskKey.of(counting(32), 1).format());
    }

    @Test
    void parsesWhatItFormats() {
        for (int hmac = 0; hmac <= 2; hmac++) {
            TlsPskKey k = TlsPskKey.generate(hmac);
            TlsPskKey back = TlsPskKey.parse(k.format());
            assertEquals(hmac, back.hmac());
            assertEquals(k.length(), back.length());
            assertEquals(k.format(), back.format());
        }
        assertEquals(2, TlsPskKey.of(counting(48), 0).cipher(), "an untransformed 48-byte key goes with SHA-384");
        assertEquals(1, TlsPskKey.of(counting(32), 0).cipher());
    }

    @Test
    void rejectsDamagedOrMalformedKeysWithoutEchoingThem() {
        String good = TlsPskKey.of(counting(32), 1).format();
        String damaged = good.substring(0, 20) + (good.charAt(20) == 'A' ? 'B' : 'A') + good.substring(21);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TlsPskKey.parse(damaged));
        assertTrue(e.getMessage().contains("CRC"), e.getMessage());
        assertFalse(e.getMessage().contains(damaged.substring(16, 40)), "the message never repeats the key");
        assertThrows(IllegalArgumentException.class, () -> TlsPskKey.parse("DHHC-1:01:abcd:"));
        assertThrows(IllegalArgumentException.class, () -> TlsPskKey.parse(good.replace(":01:", ":03:")));
        assertThrows(
                IllegalArgumentException.class,
                () -> TlsPskKey.parse(good.replace(":01:", ":02:")),
                "SHA-384 needs 48 bytes");
        assertThrows(
                IllegalArgumentException.class,
                () -> TlsPskKey.parse(good.substring(0, good.length() - 1)),
                "the closing colon");
        assertThrows(IllegalArgumentException.class, () -> TlsPskKey.parse("NVMeTLSkey-1:01:!!!!:"));
        assertThrows(IllegalArgumentException.class, () -> TlsPskKey.parse(null));
    }

    @Test
    void toStringNeverShowsTheKey() {
        TlsPskKey k = TlsPskKey.of(counting(32), 1);
        assertFalse(k.toString().contains("AAEC"));
    }
}
