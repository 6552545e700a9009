package io.jbof.nvme.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class FfdheGroupTest {
    @Test
    void derivedPrimesAreRfc7919SafePrimes() {
        // RFC 7919's ffdhe2048 begins with these words; every group's prime starts and ends with 64 one bits.
        assertTrue(FfdheGroup.FFDHE2048
                .prime()
                .toString(16)
                .toUpperCase()
                .startsWith("FFFFFFFFFFFFFFFFADF85458A2BB4A9AAFDC5620273D3CF1"));
        for (FfdheGroup g : FfdheGroup.values()) {
            if (g == FfdheGroup.NULL) continue;
            BigInteger p = g.prime();
            assertEquals(g.bits, p.bitLength(), g.name());
            assertEquals(
                    BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE),
                    p.and(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE)),
                    g.name());
            assertEquals(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE), p.shiftRight(g.bits - 64), g.name());
            // With a wrong X (RFC 7919's smallest offset making p a safe prime) these fail.
            assertTrue(p.isProbablePrime(8), g.name() + " prime");
            assertTrue(p.shiftRight(1).isProbablePrime(8), g.name() + " (p-1)/2 prime");
        }
    }

    @Test
    void bothSidesDeriveTheSameSecretAndDegenerateValuesAreRefused() {
        SecureRandom r = new SecureRandom();
        FfdheGroup g = FfdheGroup.FFDHE2048;
        FfdheGroup.KeyPair a = g.keyPair(r), b = g.keyPair(r);
        assertEquals(256, a.publicValue().length);
        assertArrayEquals(
                g.sharedSecret(a.privateKey(), b.publicValue()), g.sharedSecret(b.privateKey(), a.publicValue()));
        byte[] one = new byte[256];
        one[255] = 1;
        assertThrows(IllegalArgumentException.class, () -> g.sharedSecret(a.privateKey(), one));
        byte[] pMinus1 = g.prime().subtract(BigInteger.ONE).toByteArray();
        assertThrows(
                IllegalArgumentException.class,
                () -> g.sharedSecret(
                        a.privateKey(), Arrays.copyOfRange(pMinus1, pMinus1.length - 256, pMinus1.length)));
    }
}
