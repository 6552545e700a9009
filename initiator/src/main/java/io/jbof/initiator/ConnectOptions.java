package io.jbof.initiator;

import io.jbof.nvme.Nqn;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskKey;
import io.jbof.transport.TransportType;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.UUID;

/** Everything needed to connect to a controller; build with {@link #builder()}. */
public final class ConnectOptions {
    public final String transport;
    public final String address;
    public final int port;
    public final String subsystemNqn;
    public final String hostNqn;
    public final UUID hostId;
    public final int ioQueues;
    public final int queueDepth;
    public final boolean headerDigest;
    public final boolean dataDigest;
    public final int keepAliveMillis;
    public final int commandTimeoutMillis;
    public final int connectTimeoutMillis;
    /** Keep reconnecting this long after losing the controller (nvme-cli's ctrl_loss_tmo); 0: no reconnect, fail at once. */
    public final int ctrlLossTimeoutMillis;
    /** Pause between reconnect attempts (reconnect_delay). */
    public final int reconnectDelayMillis;
    /** While reconnecting, fail I/O after this long instead of holding it (fast_io_fail_tmo); -1: hold until ctrl loss. */
    public final int fastIoFailMillis;
    /** This host's DH-HMAC-CHAP secret (used when the target asks for authentication), or null. */
    public final DhchapKey dhchapKey;
    /** The controller's secret: with it the host authenticates the target too (bidirectional), or null. */
    public final DhchapKey dhchapCtrlKey;
    /** The configured TLS PSK: with it NVMe/TCP runs over TLS 1.3 (NVMe/TCP 3.6), or null. */
    public final TlsPskKey tlsKey;
    /** PSK identity version offered: 1 (with the PSK digest, NVMe/TCP 2.0) or 0 (NVMe/TCP 1.0c). */
    public final int tlsIdentityVersion;
    /** HKDF label encoding of the TLS PSK derivation (legacy: libnvme 1.x's). */
    public final TlsPskDerivation.Labels tlsLabels;
    /** Which hash a SHA-384 TLS PSK is bound to in the ClientHello. */
    public final TlsBinder tlsBinder;

    /**
     * IDENTITY: the PSK's own hash (the specification); SHA256: SHA-256 always, as tlshd with gnutls
     * before 3.8.10 (Debian 13) does; AUTO: the PSK's hash, else SHA-256 if the target refuses it.
     */
    public enum TlsBinder {
        AUTO,
        IDENTITY,
        SHA256;

        public static TlsBinder parse(String s) {
            switch (s.toLowerCase(Locale.ROOT)) {
                case "auto":
                    return AUTO;
                case "identity":
                case "sha384":
                    return IDENTITY;
                case "sha256":
                    return SHA256;
                default:
                    throw new IllegalArgumentException("--tls-binder '" + s + "' is not auto, identity or sha256");
            }
        }
    }

    private ConnectOptions(Builder b) {
        this.transport = b.transport;
        this.address = b.address;
        this.port = b.port;
        this.subsystemNqn = b.subsystemNqn;
        this.hostId = b.hostId != null ? b.hostId : defaultHostId();
        this.hostNqn = b.hostNqn != null ? b.hostNqn : defaultHostNqn(this.hostId);
        this.ioQueues = b.ioQueues;
        this.queueDepth = b.queueDepth;
        this.headerDigest = b.headerDigest;
        this.dataDigest = b.dataDigest;
        this.keepAliveMillis = b.keepAliveMillis;
        this.commandTimeoutMillis = b.commandTimeoutMillis;
        this.connectTimeoutMillis = b.connectTimeoutMillis;
        this.ctrlLossTimeoutMillis = b.ctrlLossTimeoutMillis;
        this.reconnectDelayMillis = b.reconnectDelayMillis;
        this.fastIoFailMillis = b.fastIoFailMillis;
        this.dhchapKey = b.dhchapKey;
        this.dhchapCtrlKey = b.dhchapCtrlKey;
        this.tlsKey = b.tlsKey;
        this.tlsIdentityVersion = b.tlsIdentityVersion;
        this.tlsLabels = b.tlsLabels;
        this.tlsBinder = b.tlsBinder;
    }

    /** The TLS identity and PSK this host offers to this subsystem; null without a TLS key. */
    public TlsPskDerivation.Derived tls() {
        return tlsKey == null
                ? null
                : TlsPskDerivation.derive(tlsKey, hostNqn, subsystemNqn, tlsIdentityVersion, tlsLabels);
    }

    /**
     * A host identifier stable for this machine (as /etc/nvme/hostid is): derived from the host name,
     * so reconnects from the same machine present the same identity.
     */
    public static UUID defaultHostId() {
        String fromFile = readEtc("hostid");
        if (fromFile != null) {
            try {
                return UUID.fromString(fromFile);
            } catch (IllegalArgumentException ignored) {
                // not a UUID: fall back to the derived one
            }
        }
        String name;
        try {
            name = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            name = "localhost";
        }
        return UUID.nameUUIDFromBytes(("jbof-host:" + name).getBytes(StandardCharsets.UTF_8));
    }

    /** The host NQN nvme-cli would use (/etc/nvme/hostnqn), else the UUID form of the host ID. */
    public static String defaultHostNqn(UUID hostId) {
        String fromFile = readEtc("hostnqn");
        return fromFile != null && Nqn.isValid(fromFile) ? fromFile : Nqn.forUuid(hostId);
    }

    private static String readEtc(String name) {
        try {
            Path p = Path.of("/etc/nvme", name);
            if (!Files.isReadable(p)) return null;
            String v = Files.readString(p).trim();
            return v.isEmpty() ? null : v;
        } catch (IOException e) {
            return null;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.transport = transport;
        b.address = address;
        b.port = port;
        b.subsystemNqn = subsystemNqn;
        b.hostNqn = hostNqn;
        b.hostId = hostId;
        b.ioQueues = ioQueues;
        b.queueDepth = queueDepth;
        b.headerDigest = headerDigest;
        b.dataDigest = dataDigest;
        b.keepAliveMillis = keepAliveMillis;
        b.commandTimeoutMillis = commandTimeoutMillis;
        b.connectTimeoutMillis = connectTimeoutMillis;
        b.ctrlLossTimeoutMillis = ctrlLossTimeoutMillis;
        b.reconnectDelayMillis = reconnectDelayMillis;
        b.fastIoFailMillis = fastIoFailMillis;
        b.dhchapKey = dhchapKey;
        b.dhchapCtrlKey = dhchapCtrlKey;
        b.tlsKey = tlsKey;
        b.tlsIdentityVersion = tlsIdentityVersion;
        b.tlsLabels = tlsLabels;
        b.tlsBinder = tlsBinder;
        return b;
    }

    public static final class Builder {
        private String transport = "tcp";
        private String address = "127.0.0.1";
        private int port = 4420;
        private String subsystemNqn;
        private String hostNqn;
        private UUID hostId;
        private int ioQueues = Math.max(1, Runtime.getRuntime().availableProcessors());
        private int queueDepth = 128;
        private boolean headerDigest;
        private boolean dataDigest;
        private int keepAliveMillis = 5000;
        private int commandTimeoutMillis = 30_000;
        private int connectTimeoutMillis = 10_000;
        private int ctrlLossTimeoutMillis = 0;
        private int reconnectDelayMillis = 2000;
        private int fastIoFailMillis = -1;
        private DhchapKey dhchapKey;
        private DhchapKey dhchapCtrlKey;
        private TlsPskKey tlsKey;
        private int tlsIdentityVersion = 1;
        private TlsPskDerivation.Labels tlsLabels = TlsPskDerivation.Labels.LEGACY;
        private TlsBinder tlsBinder = TlsBinder.AUTO;

        /** Configured TLS PSK ({@code NVMeTLSkey-1:...}): NVMe/TCP over TLS 1.3; null for plain TCP. */
        public Builder tlsKey(String k) {
            this.tlsKey = k == null ? null : TlsPskKey.parse(k);
            return this;
        }

        public Builder tlsIdentityVersion(int v) {
            this.tlsIdentityVersion = v;
            return this;
        }

        public Builder tlsLabels(TlsPskDerivation.Labels l) {
            this.tlsLabels = l;
            return this;
        }

        public Builder tlsBinder(TlsBinder b) {
            this.tlsBinder = b;
            return this;
        }

        public Builder transport(String t) {
            this.transport = t;
            return this;
        }
        /** DH-HMAC-CHAP secret of this host ({@code DHHC-1:...}); null for none. */
        public Builder dhchapSecret(String s) {
            this.dhchapKey = s == null ? null : DhchapKey.parse(s);
            return this;
        }
        /** The controller's secret, for bidirectional authentication; null for none. */
        public Builder dhchapCtrlSecret(String s) {
            this.dhchapCtrlKey = s == null ? null : DhchapKey.parse(s);
            return this;
        }

        public Builder address(String a) {
            this.address = a;
            return this;
        }

        public Builder port(int p) {
            this.port = p;
            return this;
        }

        public Builder subsystemNqn(String n) {
            this.subsystemNqn = n;
            return this;
        }

        public Builder hostNqn(String n) {
            this.hostNqn = n;
            return this;
        }

        public Builder hostId(UUID id) {
            this.hostId = id;
            return this;
        }

        public Builder ioQueues(int n) {
            this.ioQueues = n;
            return this;
        }

        public Builder queueDepth(int d) {
            this.queueDepth = d;
            return this;
        }

        public Builder headerDigest(boolean on) {
            this.headerDigest = on;
            return this;
        }

        public Builder dataDigest(boolean on) {
            this.dataDigest = on;
            return this;
        }

        public Builder keepAliveMillis(int ms) {
            this.keepAliveMillis = ms;
            return this;
        }

        public Builder commandTimeoutMillis(int ms) {
            this.commandTimeoutMillis = ms;
            return this;
        }

        public Builder connectTimeoutMillis(int ms) {
            this.connectTimeoutMillis = ms;
            return this;
        }

        public Builder ctrlLossTimeoutMillis(int ms) {
            this.ctrlLossTimeoutMillis = ms;
            return this;
        }

        public Builder reconnectDelayMillis(int ms) {
            this.reconnectDelayMillis = ms;
            return this;
        }

        public Builder fastIoFailMillis(int ms) {
            this.fastIoFailMillis = ms;
            return this;
        }

        public ConnectOptions build() {
            if (subsystemNqn == null) throw new IllegalArgumentException("no subsystem NQN given (-n NQN)");
            String p = Nqn.problem(subsystemNqn);
            if (p != null) throw new IllegalArgumentException("subsystem NQN: " + p);
            if (hostNqn != null && (p = Nqn.problem(hostNqn)) != null)
                throw new IllegalArgumentException("host NQN: " + p);
            if (ioQueues < 0 || ioQueues > 65535) throw new IllegalArgumentException("I/O queues must be 0..65535");
            if (queueDepth < 2 || queueDepth > 65536)
                throw new IllegalArgumentException("queue depth must be 2..65536");
            if (port < 1 || port > 65535) throw new IllegalArgumentException("port must be 1..65535");
            if (ctrlLossTimeoutMillis < 0 || reconnectDelayMillis < 1)
                throw new IllegalArgumentException("ctrl-loss-tmo must be >= 0 and reconnect-delay > 0");
            if (dhchapCtrlKey != null && dhchapKey == null)
                throw new IllegalArgumentException("--dhchap-ctrl-secret needs --dhchap-secret too");
            if (!TransportType.parse(transport).supportsTls() && tlsKey != null)
                throw new IllegalArgumentException("TLS secures NVMe/TCP only; drop --tls-key or use -t tcp");
            if (tlsIdentityVersion != 0 && tlsIdentityVersion != 1)
                throw new IllegalArgumentException("--tls-identity must be 0 or 1");
            return new ConnectOptions(this);
        }
    }
}
