package io.jbof.nvme.auth;

import java.nio.charset.StandardCharsets;
import javax.crypto.Mac;

/**
 * The DH-HMAC-CHAP computations (NVMe Base Specification, in-band authentication), byte for byte as
 * Linux's nvme-auth and SPDK compute them.
 */
public final class Dhchap {
    private Dhchap() {}

    public static final String HOST_ROLE = "HostHost";
    public static final String CONTROLLER_ROLE = "Controller";

    /**
     * R = HMAC(key, C || le32(S) || le16(T_ID) || SC_C(0) || role || nqnA || 0 || nqnB): the host's
     * response (role HostHost, nqnA the host, nqnB the subsystem, key the transformed host key) or the
     * controller's (role Controller, nqnA the subsystem, nqnB the host, key the transformed controller key).
     */
    public static byte[] response(
            DhchapHash h,
            byte[] transformedKey,
            byte[] challenge,
            int seqnum,
            int tid,
            String role,
            String nqnA,
            String nqnB) {
        Mac m = h.mac(transformedKey);
        m.update(challenge);
        m.update(new byte[] {(byte) seqnum, (byte) (seqnum >>> 8), (byte) (seqnum >>> 16), (byte) (seqnum >>> 24)});
        m.update(new byte[] {(byte) tid, (byte) (tid >>> 8)});
        m.update((byte) 0); // SC_C: no secure channel concatenation
        m.update(role.getBytes(StandardCharsets.US_ASCII));
        m.update(nqnA.getBytes(StandardCharsets.UTF_8));
        m.update((byte) 0);
        m.update(nqnB.getBytes(StandardCharsets.UTF_8));
        return m.doFinal();
    }

    /** With a DH group the challenge is augmented: HMAC(hash(g^xy mod p), C). */
    public static byte[] augment(DhchapHash h, byte[] sharedSecret, byte[] challenge) {
        return h.mac(h.hash(sharedSecret)).doFinal(challenge);
    }

    /** Constant-time comparison of two responses. */
    public static boolean matches(byte[] expected, byte[] got, int offset, int length) {
        if (expected.length != length || got.length < offset + length) return false;
        int diff = 0;
        for (int i = 0; i < length; i++) diff |= expected[i] ^ got[offset + i];
        return diff == 0;
    }
}
