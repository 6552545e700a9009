package io.jbof.transport.tcp.tls;

import io.jbof.nvme.tls.TlsPskIdentity;
import java.security.SecureRandom;
import java.security.Security;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;

/** What the TLS stage asks of either end: who the peer proved to be, and why a handshake failed. */
public interface TlsPskPeer {
    /** The identity whose PSK the handshake used; null before it completes. */
    TlsPskIdentity identity();

    /** A hint for the log when the handshake fails (an identity without a key, ...); null if none. */
    String failureDetail();

    /**
     * The JDK's providers do the cryptography (AES-GCM with the CPU's AES and carry-less multiply
     * instructions); BouncyCastle runs the TLS 1.3 state machine, which the JDK cannot do with an
     * external PSK. BouncyCastle's provider is added last, for ChaCha20-Poly1305 alone (under names the
     * JDK lacks): tlshd offers only that SHA-256 suite with a SHA-384 key.
     */
    static TlsCrypto crypto() {
        return Shared.CRYPTO;
    }

    /**
     * One crypto for every connection (as BouncyCastle's own JSSE shares one per context: it holds no
     * per-connection state), made once after adding BouncyCastle's provider behind the JDK's, which keep
     * precedence for everything they offer.
     */
    final class Shared {
        static final TlsCrypto CRYPTO;

        static {
            if (Security.getProvider("BC") == null) Security.addProvider(new BouncyCastleProvider());
            CRYPTO = new JcaTlsCryptoProvider().create(new SecureRandom());
        }

        private Shared() {}
    }

    /** The cipher suite of an NVMe PSK hash: 1 SHA-256, 2 SHA-384 (NVMe/TCP 3.6.1.2). */
    static int cipherSuite(int cipher) {
        return cipher == 2 ? CipherSuite.TLS_AES_256_GCM_SHA384 : CipherSuite.TLS_AES_128_GCM_SHA256;
    }

    /** The hash of a TLS 1.3 cipher suite, in NVMe's numbering (1 SHA-256, 2 SHA-384). */
    static int suiteHash(int suite) {
        return suite == CipherSuite.TLS_AES_256_GCM_SHA384 ? 2 : 1;
    }

    static int prf(int cipher) {
        return cipher == 2 ? PRFAlgorithm.tls13_hkdf_sha384 : PRFAlgorithm.tls13_hkdf_sha256;
    }
}
