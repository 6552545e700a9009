package io.jbof.nvme.auth;

import io.jbof.nvme.KeyInterchange;
import java.nio.charset.StandardCharsets;
import javax.crypto.Mac;

/**
 * A DH-HMAC-CHAP secret in the representation the Linux tools use (nvme gen-dhchap-key):
 * {@code DHHC-1:HH:BASE64:}, HH the hash the key is transformed with (00 none, 01 SHA-256,
 * 02 SHA-384, 03 SHA-512), BASE64 the 32, 48 or 64 key bytes followed by their CRC-32 (little endian).
 */
public final class DhchapKey {
    private static final byte[] TRANSFORM_SUFFIX = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;
    private final int hashId;

    private DhchapKey(byte[] key, int hashId) {
        this.key = key;
        this.hashId = hashId;
    }

    /** Parses a secret; the message of the exception says what is wrong with it (never the key). */
    public static DhchapKey parse(String secret) {
        if (secret == null || !secret.startsWith("DHHC-1:"))
            throw new IllegalArgumentException("a DH-HMAC-CHAP secret starts with DHHC-1:");
        String[] parts = secret.split(":");
        if (parts.length != 3 && parts.length != 4 || parts[1].length() != 2) {
            throw new IllegalArgumentException(
                    "a DH-HMAC-CHAP secret reads DHHC-1:HH:BASE64: (nvme gen-dhchap-key makes one)");
        }
        int hash;
        try {
            hash = Integer.parseInt(parts[1], 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("DH-HMAC-CHAP secret: key hash '" + parts[1] + "' is not 00..03");
        }
        if (hash < 0 || hash > 3)
            throw new IllegalArgumentException("DH-HMAC-CHAP secret: key hash " + hash + " is not 00..03");
        byte[] key = KeyInterchange.decode(parts[2], "DH-HMAC-CHAP secret", 32, 48, 64);
        return new DhchapKey(key, hash);
    }

    /** The representation of a key: what {@code nvme gen-dhchap-key} prints. */
    public static String format(byte[] key, int hashId) {
        return String.format("DHHC-1:%02x:%s:", hashId, KeyInterchange.encode(key));
    }

    public int hashId() {
        return hashId;
    }

    public int length() {
        return key.length;
    }

    /**
     * The key as the HMAC of the response uses it: as is with hash 00, otherwise
     * HMAC-hash(key, nqn || "NVMe-over-Fabrics"), nqn the owner's (the host's NQN for the host key,
     * the subsystem's for the controller key).
     */
    public byte[] transform(String nqn) {
        DhchapHash h = DhchapHash.of(hashId);
        if (h == null) return key.clone();
        Mac m = h.mac(key);
        m.update(nqn.getBytes(StandardCharsets.UTF_8));
        m.update(TRANSFORM_SUFFIX);
        return m.doFinal();
    }
}
