package io.jbof.nvme.tls;

import io.jbof.nvme.KeyInterchange;
import java.security.SecureRandom;

/**
 * A configured NVMe/TCP TLS PSK in the PSK interchange format the Linux tools use
 * ({@code nvme gen-tls-key}): {@code NVMeTLSkey-1:HH:BASE64:}, HH the hash that turns the configured PSK
 * into the retained PSK (00 none, 01 SHA-256, 02 SHA-384), BASE64 the 32 or 48 key bytes followed by
 * their CRC-32 (little endian).
 */
public final class TlsPskKey {
    public static final String PREFIX = "NVMeTLSkey-1:";

    private final byte[] key;
    private final int hmac;

    private TlsPskKey(byte[] key, int hmac) {
        this.key = key;
        this.hmac = hmac;
    }

    /** Parses a key; the message of the exception says what is wrong with it (never the key). */
    public static TlsPskKey parse(String text) {
        if (text == null || !text.startsWith(PREFIX)) {
            throw new IllegalArgumentException(
                    "a TLS PSK reads NVMeTLSkey-1:HH:BASE64: (nvme gen-tls-key or jbof gen-tls-key makes one)");
        }
        String[] parts = text.split(":");
        if (parts.length != 3 || parts[1].length() != 2 || !text.endsWith(":")) {
            throw new IllegalArgumentException(
                    "a TLS PSK reads NVMeTLSkey-1:HH:BASE64: (nvme gen-tls-key or jbof gen-tls-key makes one)");
        }
        int hmac;
        try {
            hmac = Integer.parseInt(parts[1], 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("TLS PSK: hash '" + parts[1] + "' is not 00, 01 or 02");
        }
        if (hmac < 0 || hmac > 2)
            throw new IllegalArgumentException("TLS PSK: hash " + parts[1] + " is not 00, 01 or 02");
        byte[] key = KeyInterchange.decode(parts[2], "TLS PSK", 32, 48);
        int len = key.length;
        if (hmac == 1 && len != 32 || hmac == 2 && len != 48) {
            throw new IllegalArgumentException(
                    "TLS PSK: hash " + parts[1] + " needs a " + (hmac == 1 ? 32 : 48) + "-byte key, not " + len);
        }
        return new TlsPskKey(key, hmac);
    }

    /** A new random key of the hash's length (SHA-384: 48 bytes, otherwise 32). */
    public static TlsPskKey generate(int hmac) {
        if (hmac < 0 || hmac > 2) throw new IllegalArgumentException("TLS PSK: hash " + hmac + " is not 0, 1 or 2");
        byte[] key = new byte[hmac == 2 ? 48 : 32];
        new SecureRandom().nextBytes(key);
        return new TlsPskKey(key, hmac);
    }

    /** A key from its raw bytes (tests, known-answer vectors). */
    public static TlsPskKey of(byte[] key, int hmac) {
        if (key.length != 32 && key.length != 48)
            throw new IllegalArgumentException("TLS PSK: a key has 32 or 48 bytes, not " + key.length);
        return new TlsPskKey(key.clone(), hmac);
    }

    /** The interchange format: what {@code nvme gen-tls-key} prints. */
    public String format() {
        return String.format("%s%02d:%s:", PREFIX, hmac, KeyInterchange.encode(key));
    }

    /** The transform hash of the key: 0 none, 1 SHA-256, 2 SHA-384. */
    public int hmac() {
        return hmac;
    }

    /**
     * The hash of the TLS cipher suite this key is used with (1: TLS_AES_128_GCM_SHA256, 2:
     * TLS_AES_256_GCM_SHA384): the transform hash, or for an untransformed key the one its length fits.
     */
    public int cipher() {
        return hmac != 0 ? hmac : key.length == 48 ? 2 : 1;
    }

    public int length() {
        return key.length;
    }

    byte[] bytes() {
        return key;
    }

    @Override
    public String toString() {
        return "TlsPskKey[hash=" + hmac + ", " + key.length + " bytes]"; // never the key itself
    }
}
