package io.jbof.nvme.tls;

import io.jbof.nvme.auth.DhchapHash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import javax.crypto.Mac;

/**
 * Turns a configured PSK into the TLS PSK of one host/subsystem pair, as the NVMe/TCP transport
 * specification (3.6.1.3) defines and libnvme implements it:
 * <ol>
 * <li>retained PSK = HKDF-Expand-Label(HKDF-Extract(0, configured), "HostNQN", hostnqn, len), or the
 *     configured PSK itself when its hash is 00;</li>
 * <li>identity version 1: digest = base64(HMAC(retained, hostnqn " " subnqn " NVMe-over-Fabrics"));</li>
 * <li>TLS PSK = HKDF-Expand-Label(HKDF-Extract(0, retained), "nvme-tls-psk", context, len), context the
 *     whole identity (version 0) or "hh digest" (version 1).</li>
 * </ol>
 * Two encodings of HKDF-Expand-Label are in use. {@link Labels#LEGACY} is libnvme 1.x's (nvme-cli 2.x:
 * e.g. Debian 13's 1.13; later libnvme calls it --compat): the length little endian, label and
 * context without their length bytes. {@link Labels#RFC8446} is RFC 8446's HkdfLabel, the default of
 * libnvme versions that have a --compat option.
 */
public final class TlsPskDerivation {
    private static final byte[] SEED = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    private TlsPskDerivation() {}

    /** The identity and TLS PSK one host uses with one subsystem. */
    public record Derived(TlsPskIdentity identity, byte[] psk) {}

    /** How HKDF-Expand-Label encodes its info (see the class comment). */
    public enum Labels {
        LEGACY,
        RFC8446;

        public static Labels parse(String s) {
            switch (s.toLowerCase(Locale.ROOT)) {
                case "legacy":
                case "compat":
                case "libnvme1":
                    return LEGACY;
                case "rfc8446":
                case "rfc":
                    return RFC8446;
                default:
                    throw new IllegalArgumentException("HKDF label encoding '" + s + "' is not legacy or rfc8446");
            }
        }

        public Labels other() {
            return this == LEGACY ? RFC8446 : LEGACY;
        }
    }

    public static Derived derive(TlsPskKey key, String hostNqn, String subsysNqn, int version, Labels labels) {
        boolean compat = labels == Labels.LEGACY;
        if (version != 0 && version != 1)
            throw new IllegalArgumentException("TLS PSK identity version " + version + " is not 0 or 1");
        byte[] retained = retained(key, hostNqn, compat);
        int cipher = key.cipher();
        String digest = version == 1 ? digest(cipher, retained, hostNqn, subsysNqn) : null;
        TlsPskIdentity identity = new TlsPskIdentity(version, false, cipher, hostNqn, subsysNqn, digest);
        String context = version == 0 ? identity.toString() : String.format("%02d %s", cipher, digest);
        byte[] psk = expandLabel(
                hash(cipher), extract(hash(cipher), retained), "nvme-tls-psk", context, key.length(), compat);
        return new Derived(identity, psk);
    }

    static byte[] retained(TlsPskKey key, String hostNqn, boolean compat) {
        if (key.hmac() == 0) return key.bytes().clone();
        DhchapHash h = hash(key.hmac());
        return expandLabel(h, extract(h, key.bytes()), "HostNQN", hostNqn, key.length(), compat);
    }

    static String digest(int cipher, byte[] retained, String hostNqn, String subsysNqn) {
        Mac m = hash(cipher).mac(retained);
        m.update((hostNqn + " " + subsysNqn + " ").getBytes(StandardCharsets.UTF_8));
        m.update(SEED);
        return Base64.getEncoder().encodeToString(m.doFinal());
    }

    private static DhchapHash hash(int id) {
        if (id == 1) return DhchapHash.SHA256;
        if (id == 2) return DhchapHash.SHA384;
        throw new IllegalArgumentException("TLS PSK hash " + id + " is not 1 (SHA-256) or 2 (SHA-384)");
    }

    /** HKDF-Extract with a zero salt (RFC 5869: a string of HashLen zeros). */
    static byte[] extract(DhchapHash h, byte[] ikm) {
        return h.mac(new byte[h.length]).doFinal(ikm);
    }

    /** HKDF-Expand(prk, HkdfLabel(length, "tls13 " + label, context), length) (RFC 8446 7.1). */
    static byte[] expandLabel(DhchapHash h, byte[] prk, String label, String context, int length, boolean compat) {
        byte[] l = ("tls13 " + label).getBytes(StandardCharsets.US_ASCII);
        byte[] c = context.getBytes(StandardCharsets.UTF_8);
        if (!compat && (l.length > 255 || c.length > 255))
            throw new IllegalArgumentException("HKDF label or context longer than 255 bytes");
        ByteArrayOutputStream info = new ByteArrayOutputStream();
        if (compat) {
            info.write(length & 0xFF);
            info.write(length >>> 8);
        } else {
            info.write(length >>> 8);
            info.write(length & 0xFF);
            info.write(l.length);
        }
        info.writeBytes(l);
        if (!compat) info.write(c.length);
        info.writeBytes(c);
        return expand(h, prk, info.toByteArray(), length);
    }

    static byte[] expand(DhchapHash h, byte[] prk, byte[] info, int length) {
        Mac m = h.mac(prk);
        byte[] out = new byte[length];
        byte[] t = new byte[0];
        for (int done = 0, i = 1; done < length; i++) {
            m.update(t);
            m.update(info);
            m.update((byte) i);
            t = m.doFinal();
            int n = Math.min(t.length, length - done);
            System.arraycopy(t, 0, out, done, n);
            done += n;
        }
        return out;
    }
}
