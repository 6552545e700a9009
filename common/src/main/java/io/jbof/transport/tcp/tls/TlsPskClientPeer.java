package io.jbof.transport.tcp.tls;

import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskIdentity;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.AlertLevel;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsUtils;

/** The host end of the handshake: TLS 1.3 only, one external PSK, no certificates. */
public final class TlsPskClientPeer extends AbstractTlsClient implements TlsPskPeer {
    private final TlsPskDerivation.Derived key;
    /** Bind a SHA-384 PSK to SHA-256 and offer SHA-256 suites, as tlshd with gnutls before 3.8.10 does. */
    private final boolean sha256Binder;

    private volatile boolean established;
    private volatile String alert;

    public TlsPskClientPeer(TlsPskDerivation.Derived key, boolean sha256Binder) {
        super(TlsPskPeer.crypto());
        this.key = key;
        this.sha256Binder = sha256Binder;
    }

    private int hash() {
        return sha256Binder ? 1 : key.identity().cipher();
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return ProtocolVersion.TLSv13.only();
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        // Only the suite of the PSK's hash: a PSK is bound to one hash (RFC 8446 4.2.11).
        if (hash() == 1 && key.identity().cipher() == 2) {
            // What tlshd offers for a SHA-384 PSK; with a SHA-256 binder only ChaCha20-Poly1305 fits.
            return TlsUtils.getSupportedCipherSuites(
                    getCrypto(),
                    new int[] {CipherSuite.TLS_AES_256_GCM_SHA384, CipherSuite.TLS_CHACHA20_POLY1305_SHA256});
        }
        return TlsUtils.getSupportedCipherSuites(getCrypto(), new int[] {TlsPskPeer.cipherSuite(hash())});
    }

    @Override
    public Vector getExternalPSKs() {
        Vector<Object> v = new Vector<>(1);
        v.add(new BasicTlsPSKExternal(
                key.identity().toString().getBytes(StandardCharsets.UTF_8),
                getCrypto().createSecret(key.psk()),
                TlsPskPeer.prf(hash())));
        return v;
    }

    @Override
    public TlsAuthentication getAuthentication() throws IOException {
        // Reached only if the target answers with a certificate: NVMe/TCP TLS here is PSK only.
        throw new TlsFatalAlert(
                AlertDescription.handshake_failure, "the target did not accept the PSK (it offered a certificate)");
    }

    @Override
    public void notifyHandshakeComplete() {
        established = true;
    }

    @Override
    public void notifyAlertReceived(short level, short description) {
        if (level == AlertLevel.fatal) alert = "target sent alert " + AlertDescription.getText(description);
    }

    @Override
    public TlsPskIdentity identity() {
        return established ? key.identity() : null;
    }

    @Override
    public String failureDetail() {
        String a = alert;
        return (a == null ? "" : a + "; ") + "offered PSK identity " + key.identity()
                + (sha256Binder ? " with a SHA-256 binder" : "");
    }
}
