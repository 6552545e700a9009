package io.jbof.nvme.auth;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The Diffie-Hellman groups of DH-HMAC-CHAP: none, or the RFC 7919 finite-field groups (generator 2).
 * The primes are computed from RFC 7919's definition, p = 2^b - 2^(b-64) + (floor(2^(b-130) e) + X) 2^64 - 1
 * with each group's X, rather than carried as 8 KiB of hex; a unit test checks each is a safe prime.
 */
public enum FfdheGroup {
    NULL(0, 0, 0),
    FFDHE2048(1, 2048, 560316),
    FFDHE3072(2, 3072, 2625351),
    FFDHE4096(3, 4096, 5736041),
    FFDHE6144(4, 6144, 15705020),
    FFDHE8192(5, 8192, 10965728);

    private static final BigInteger G = BigInteger.TWO;
    /** Private exponents of 512 bits: twice the strength of the largest group. */
    private static final int PRIVATE_BITS = 512;

    public final int id;
    public final int bits;
    private final long x;
    private volatile BigInteger prime;

    FfdheGroup(int id, int bits, long x) {
        this.id = id;
        this.bits = bits;
        this.x = x;
    }

    public static FfdheGroup of(int id) {
        for (FfdheGroup g : values()) if (g.id == id) return g;
        return null;
    }

    /** Bytes of a public value or shared secret (0 for the NULL group). */
    public int valueLength() {
        return bits / 8;
    }

    public BigInteger prime() {
        BigInteger p = prime;
        if (p == null && bits > 0) {
            p = derive(bits, x);
            prime = p;
        }
        return p;
    }

    static BigInteger derive(int b, long x) {
        // floor(2^(b-130) e) from the series sum of 2^n / k!, with 64 guard bits against truncation.
        int n = b - 130 + 64;
        BigInteger term = BigInteger.ONE.shiftLeft(n);
        BigInteger sum = BigInteger.ZERO;
        for (int k = 1; term.signum() > 0; k++) {
            sum = sum.add(term);
            term = term.divide(BigInteger.valueOf(k));
        }
        BigInteger mid = sum.shiftRight(64).add(BigInteger.valueOf(x));
        return BigInteger.ONE
                .shiftLeft(b)
                .subtract(BigInteger.ONE.shiftLeft(b - 64))
                .add(mid.shiftLeft(64))
                .subtract(BigInteger.ONE);
    }

    /** A key pair: the private exponent and the public value g^x mod p, {@link #valueLength()} bytes. */
    public KeyPair keyPair(SecureRandom random) {
        BigInteger p = prime();
        BigInteger priv;
        do {
            priv = new BigInteger(PRIVATE_BITS, random);
        } while (priv.compareTo(BigInteger.TWO) < 0);
        return new KeyPair(priv, fixed(G.modPow(priv, p), valueLength()));
    }

    /**
     * The shared secret (peer^x mod p, {@link #valueLength()} bytes); throws when the peer's value is
     * not in 2..p-2 (a degenerate value would fix the secret).
     */
    public byte[] sharedSecret(BigInteger priv, byte[] peerPublic) {
        BigInteger p = prime();
        BigInteger y = new BigInteger(1, peerPublic);
        if (peerPublic.length != valueLength()
                || y.compareTo(BigInteger.ONE) <= 0
                || y.compareTo(p.subtract(BigInteger.ONE)) >= 0) {
            throw new IllegalArgumentException("the peer's DH value is not a valid " + name() + " element");
        }
        return fixed(y.modPow(priv, p), valueLength());
    }

    private static byte[] fixed(BigInteger v, int len) {
        byte[] b = v.toByteArray();
        if (b.length == len) return b;
        if (b.length == len + 1 && b[0] == 0) return Arrays.copyOfRange(b, 1, b.length);
        byte[] out = new byte[len];
        System.arraycopy(b, 0, out, len - b.length, b.length);
        return out;
    }

    public record KeyPair(BigInteger privateKey, byte[] publicValue) {}
}
