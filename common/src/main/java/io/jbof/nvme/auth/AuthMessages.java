package io.jbof.nvme.auth;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The in-band authentication messages carried by Authentication Send and Receive (little endian).
 * Layouts as Linux's include/linux/nvme.h: negotiate 8 + 64 per protocol descriptor; challenge, reply,
 * success1 and success2 a 16-byte header; failure 8 bytes.
 */
public final class AuthMessages {
    private AuthMessages() {}

    /** Security protocol of Authentication Send/Receive (SECP) and its specific fields. */
    public static final int SECP = 0xE9, SPSP0 = 0x01, SPSP1 = 0x01;
    /** Connect response DW0: authentication required (ATR); secure channel concatenation (ASCR). */
    public static final int CONNECT_AUTHREQ_ATR = 1 << 17, CONNECT_AUTHREQ_ASCR = 1 << 18;

    public static final int TYPE_COMMON = 0x00, TYPE_DHCHAP = 0x01;
    public static final int NEGOTIATE = 0x00,
            CHALLENGE = 0x01,
            REPLY = 0x02,
            SUCCESS1 = 0x03,
            SUCCESS2 = 0x04,
            FAILURE2 = 0xF0,
            FAILURE1 = 0xF1;
    public static final int AUTH_ID_DHCHAP = 0x01;
    public static final int HEADER = 16, NEGOTIATE_HEADER = 8, DESCRIPTOR = 64, FAILURE_SIZE = 8;
    // Reason codes of a failure message (rescode 1 = authentication failure, then the explanation).
    public static final int RESCODE_FAILED = 0x01;
    public static final int FAILED = 0x01,
            NOT_USABLE = 0x02,
            CONCAT_MISMATCH = 0x03,
            HASH_UNUSABLE = 0x04,
            DHGROUP_UNUSABLE = 0x05,
            INCORRECT_PAYLOAD = 0x06,
            INCORRECT_PROTOCOL = 0x07;

    public static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    public static int type(byte[] m) {
        return m.length > 0 ? m[0] & 0xFF : -1;
    }

    public static int id(byte[] m) {
        return m.length > 1 ? m[1] & 0xFF : -1;
    }

    public static int tid(byte[] m) {
        return m.length >= 6 ? le(m).getShort(4) & 0xFFFF : -1;
    }

    /** The length of a controller-to-host message (challenge, success1, failure) from its own header. */
    public static int length(byte[] m) {
        ByteBuffer b = le(m);
        if (type(m) == TYPE_COMMON) return FAILURE_SIZE;
        if (id(m) == CHALLENGE) return HEADER + (b.get(6) & 0xFF) + (b.getShort(10) & 0xFFFF);
        if (id(m) == SUCCESS1) return HEADER + ((m[8] & 0xFF) == 1 ? b.get(6) & 0xFF : 0);
        return HEADER;
    }

    /** AUTH_Negotiate with one DH-HMAC-CHAP descriptor listing the hashes and groups offered. */
    public static byte[] negotiate(int tid, int[] hashes, int[] groups) {
        byte[] m = new byte[NEGOTIATE_HEADER + DESCRIPTOR];
        ByteBuffer b = le(m);
        b.put(0, (byte) TYPE_COMMON).put(1, (byte) NEGOTIATE).putShort(4, (short) tid);
        b.put(6, (byte) 0); // SC_C: no secure channel
        b.put(7, (byte) 1); // NAPD
        int d = NEGOTIATE_HEADER;
        b.put(d, (byte) AUTH_ID_DHCHAP).put(d + 2, (byte) hashes.length).put(d + 3, (byte) groups.length);
        for (int i = 0; i < hashes.length; i++) b.put(d + 4 + i, (byte) hashes[i]);
        for (int i = 0; i < groups.length; i++) b.put(d + 4 + 30 + i, (byte) groups[i]);
        return m;
    }

    public static byte[] challenge(int tid, DhchapHash h, FfdheGroup g, int seqnum, byte[] c, byte[] dhv) {
        byte[] m = new byte[HEADER + h.length + dhv.length];
        ByteBuffer b = le(m);
        b.put(0, (byte) TYPE_DHCHAP)
                .put(1, (byte) CHALLENGE)
                .putShort(4, (short) tid)
                .put(6, (byte) h.length)
                .put(8, (byte) h.id)
                .put(9, (byte) g.id)
                .putShort(10, (short) dhv.length)
                .putInt(12, seqnum);
        System.arraycopy(c, 0, m, HEADER, h.length);
        System.arraycopy(dhv, 0, m, HEADER + h.length, dhv.length);
        return m;
    }

    /** AUTH reply: the response, then the host's challenge (valid if {@code c2} is non-null), then its DH value. */
    public static byte[] reply(int tid, int hl, byte[] response, byte[] c2, int seqnum, byte[] dhv) {
        byte[] m = new byte[HEADER + 2 * hl + dhv.length];
        ByteBuffer b = le(m);
        b.put(0, (byte) TYPE_DHCHAP)
                .put(1, (byte) REPLY)
                .putShort(4, (short) tid)
                .put(6, (byte) hl)
                .put(8, (byte) (c2 != null ? 1 : 0))
                .putShort(10, (short) dhv.length)
                .putInt(12, c2 != null ? seqnum : 0);
        System.arraycopy(response, 0, m, HEADER, hl);
        if (c2 != null) System.arraycopy(c2, 0, m, HEADER + hl, hl);
        System.arraycopy(dhv, 0, m, HEADER + 2 * hl, dhv.length);
        return m;
    }

    public static byte[] success1(int tid, int hl, byte[] controllerResponse) {
        byte[] m = new byte[HEADER + (controllerResponse != null ? hl : 0)];
        ByteBuffer b = le(m);
        b.put(0, (byte) TYPE_DHCHAP)
                .put(1, (byte) SUCCESS1)
                .putShort(4, (short) tid)
                .put(6, (byte) hl)
                .put(8, (byte) (controllerResponse != null ? 1 : 0));
        if (controllerResponse != null) System.arraycopy(controllerResponse, 0, m, HEADER, hl);
        return m;
    }

    public static byte[] success2(int tid) {
        byte[] m = new byte[HEADER];
        le(m).put(0, (byte) TYPE_DHCHAP).put(1, (byte) SUCCESS2).putShort(4, (short) tid);
        return m;
    }

    public static byte[] failure(int id, int tid, int explanation) {
        byte[] m = new byte[FAILURE_SIZE];
        le(m).put(0, (byte) TYPE_COMMON)
                .put(1, (byte) id)
                .putShort(4, (short) tid)
                .put(6, (byte) RESCODE_FAILED)
                .put(7, (byte) explanation);
        return m;
    }

    public static String explain(int explanation) {
        switch (explanation) {
            case FAILED:
                return "authentication failed (wrong secret?)";
            case NOT_USABLE:
                return "authentication protocol not usable";
            case CONCAT_MISMATCH:
                return "secure channel concatenation mismatch";
            case HASH_UNUSABLE:
                return "no hash function in common";
            case DHGROUP_UNUSABLE:
                return "no DH group in common";
            case INCORRECT_PAYLOAD:
                return "incorrect payload";
            case INCORRECT_PROTOCOL:
                return "unexpected protocol message";
            default:
                return "reason 0x" + Integer.toHexString(explanation);
        }
    }
}
