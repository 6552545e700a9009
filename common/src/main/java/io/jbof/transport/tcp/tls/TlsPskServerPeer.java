package io.jbof.transport.tcp.tls;

import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskIdentity;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsServer;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.AlertLevel;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.ExtensionType;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsExtensionsUtils;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsUtils;
import org.bouncycastle.util.Arrays;

/** The target end of the handshake: accepts the first offered NVMe identity it holds a key for. */
public final class TlsPskServerPeer extends AbstractTlsServer implements TlsPskPeer {
    /** Finds the TLS PSK for an offered identity; null when this target has no key for it. */
    @FunctionalInterface
    public interface KeyLookup {
        TlsPskDerivation.Derived find(TlsPskIdentity offered);
    }

    private final KeyLookup keys;
    /** Binder length of each offered identity, from the ClientHello's pre_shared_key extension. */
    private int[] binderLengths = new int[0];

    private volatile TlsPskIdentity selected;
    /** Hash the selected PSK is bound to (1 SHA-256, 2 SHA-384): the cipher suite must use the same. */
    private int selectedHash;

    private volatile boolean established;
    private volatile String detail;

    public TlsPskServerPeer(KeyLookup keys) {
        super(TlsPskPeer.crypto());
        this.keys = keys;
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return ProtocolVersion.TLSv13.only();
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        return TlsUtils.getSupportedCipherSuites(getCrypto(), new int[] {
            CipherSuite.TLS_AES_256_GCM_SHA384,
            CipherSuite.TLS_AES_128_GCM_SHA256,
            CipherSuite.TLS_CHACHA20_POLY1305_SHA256
        });
    }

    /**
     * Notes the binder length of each offered PSK from the ClientHello in {@code b} (the first bytes the
     * host sent). BouncyCastle asks for the PSK before it looks at the binders, so they are read here;
     * a ClientHello that is not whole in these bytes leaves the identity's own hash in force.
     */
    void peekClientHello(byte[] b, int off, int len) {
        try {
            ByteBuffer r = ByteBuffer.wrap(b, off, len);
            if (r.remaining() < 9 || r.get() != 0x16) return;
            r.getShort(); // legacy record version
            int recordLen = r.getShort() & 0xFFFF;
            if (recordLen > r.remaining() || r.get() != 1) return; // whole record, ClientHello
            int helloLen = (r.get() & 0xFF) << 16 | (r.getShort() & 0xFFFF);
            if (helloLen > r.remaining()) return;
            r.position(r.position() + 2 + 32); // legacy version, random
            skip(r, r.get() & 0xFF); // session id
            skip(r, r.getShort() & 0xFFFF); // cipher suites
            skip(r, r.get() & 0xFF); // compression methods
            int extensions = r.getShort() & 0xFFFF;
            int end = r.position() + extensions;
            while (r.position() + 4 <= end) {
                int type = r.getShort() & 0xFFFF, n = r.getShort() & 0xFFFF;
                if (type != ExtensionType.pre_shared_key) {
                    skip(r, n);
                    continue;
                }
                byte[] ext = new byte[n];
                r.get(ext);
                Vector<?> binders =
                        TlsExtensionsUtils.readPreSharedKeyClientHello(ext).getBinders();
                int[] lengths = new int[binders.size()];
                for (int i = 0; i < lengths.length; i++) lengths[i] = ((byte[]) binders.get(i)).length;
                binderLengths = lengths;
                return;
            }
        } catch (RuntimeException | IOException malformed) {
            // Not a ClientHello we can read: BouncyCastle will judge it.
        }
    }

    private static void skip(ByteBuffer r, int n) {
        r.position(r.position() + n); // the length is read before the position: the position is read after the length
    }

    @Override
    public TlsPSKExternal getExternalPSK(Vector identities) {
        StringBuilder offered = new StringBuilder();
        for (int i = 0; i < identities.size(); i++) {
            Object o = identities.get(i);
            String s = new String(((PskIdentity) o).getIdentity(), StandardCharsets.UTF_8);
            TlsPskIdentity id = TlsPskIdentity.parse(s);
            if (offered.length() < 1000)
                offered.append(offered.length() == 0 ? "" : ", ").append(id == null ? "(not an NVMe identity)" : s);
            if (id == null) continue;
            TlsPskDerivation.Derived d = keys.find(id);
            if (d != null && d.identity().toString().equals(s)) {
                selected = d.identity();
                // The binder's length says which hash the host bound the PSK to. A SHA-384 identity should mean
                // SHA-384 (NVMe/TCP 3.6.1.2), but tlshd built with gnutls before 3.8.10 (Debian 13) binds every
                // PSK to SHA-256 and then negotiates a SHA-256 suite: follow the host.
                int hash = i < binderLengths.length && binderLengths[i] == 32
                        ? 1
                        : i < binderLengths.length && binderLengths[i] == 48 ? 2 : id.cipher();
                selectedHash = hash;
                return new BasicTlsPSKExternal(
                        ((PskIdentity) o).getIdentity(), getCrypto().createSecret(d.psk()), TlsPskPeer.prf(hash));
            }
        }
        detail = "no key for the offered PSK identity " + offered + "; give the target --tls-key HOSTNQN=KEY";
        return null;
    }

    /** A suite whose hash is the PSK's (RFC 8446 4.2.11): BouncyCastle would otherwise go by preference order. */
    @Override
    public int getSelectedCipherSuite() throws IOException {
        if (selected != null && offeredCipherSuites != null) {
            for (int suite : getCipherSuites()) {
                if (TlsPskPeer.suiteHash(suite) == selectedHash && Arrays.contains(offeredCipherSuites, suite)) {
                    selectedCipherSuite = suite;
                    return suite;
                }
            }
        }
        return super.getSelectedCipherSuite();
    }

    @Override
    public TlsCredentials getCredentials() throws IOException {
        // Asked only when no offered PSK was accepted: there is no certificate to fall back to.
        if (selected == null) throw new TlsFatalAlert(AlertDescription.unknown_psk_identity, detail);
        return null;
    }

    @Override
    public void notifyHandshakeComplete() {
        established = true;
    }

    @Override
    public void notifyAlertReceived(short level, short description) {
        if (level == AlertLevel.fatal) detail = "host sent alert " + AlertDescription.getText(description);
    }

    @Override
    public TlsPskIdentity identity() {
        return established ? selected : null;
    }

    @Override
    public String failureDetail() {
        if (detail == null && selected != null) return "PSK identity " + selected + " matched but the keys differ";
        return detail;
    }
}
