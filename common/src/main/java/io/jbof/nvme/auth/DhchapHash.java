package io.jbof.nvme.auth;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The hash functions of DH-HMAC-CHAP, by their NVMe identifiers. */
public enum DhchapHash {
    SHA256(1, "SHA-256", "HmacSHA256", 32),
    SHA384(2, "SHA-384", "HmacSHA384", 48),
    SHA512(3, "SHA-512", "HmacSHA512", 64);

    public final int id;
    public final String digest;
    public final String hmac;
    public final int length;

    DhchapHash(int id, String digest, String hmac, int length) {
        this.id = id;
        this.digest = digest;
        this.hmac = hmac;
        this.length = length;
    }

    /** The hash with this identifier, or null. */
    public static DhchapHash of(int id) {
        for (DhchapHash h : values()) if (h.id == id) return h;
        return null;
    }

    public Mac mac(byte[] key) {
        try {
            Mac m = Mac.getInstance(hmac);
            m.init(new SecretKeySpec(key, hmac));
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(hmac + " is missing from this JDK", e);
        }
    }

    public byte[] hash(byte[] data) {
        try {
            return MessageDigest.getInstance(digest).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(digest + " is missing from this JDK", e);
        }
    }
}
