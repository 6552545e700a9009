package io.jbof.nvme;

import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;

/**
 * The body shared by the NVMe key interchange formats ({@code DHHC-1:HH:...:} and {@code NVMeTLSkey-1:HH:...:}):
 * base64 of the key bytes followed by their CRC-32, little endian.
 */
public final class KeyInterchange {
    private KeyInterchange() {}

    /** base64(key || crc32(key) little endian). */
    public static String encode(byte[] key) {
        byte[] raw = Arrays.copyOf(key, key.length + 4);
        int crc = crc32(key);
        for (int i = 0; i < 4; i++) raw[key.length + i] = (byte) (crc >>> (8 * i));
        return Base64.getEncoder().encodeToString(raw);
    }

    /**
     * The key bytes of a base64 body; {@code what} prefixes the messages, which never repeat the key.
     *
     * @param lengths the key lengths the format allows
     * @throws IllegalArgumentException not base64, a length not allowed, or a CRC mismatch
     */
    public static byte[] decode(String body, String what, int... lengths) {
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(body);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": the key is not base64");
        }
        int len = Math.max(raw.length - 4, 0);
        if (Arrays.stream(lengths).noneMatch(l -> l == len)) {
            StringBuilder allowed = new StringBuilder();
            for (int i = 0; i < lengths.length; i++)
                allowed.append(i == 0 ? "" : i == lengths.length - 1 ? " or " : ", ")
                        .append(lengths[i]);
            throw new IllegalArgumentException(what + ": a key has " + allowed + " bytes, not " + len);
        }
        byte[] key = Arrays.copyOf(raw, len);
        int crc = (raw[len] & 0xFF)
                | (raw[len + 1] & 0xFF) << 8
                | (raw[len + 2] & 0xFF) << 16
                | (raw[len + 3] & 0xFF) << 24;
        if (crc != crc32(key)) throw new IllegalArgumentException(what + ": CRC mismatch (the key is damaged)");
        return key;
    }

    private static int crc32(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return (int) c.getValue();
    }
}
