package io.jbof.initiator.cli;

import io.jbof.initiator.ConnectOptions;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.util.SecretText;
import java.util.UUID;
import picocli.CommandLine.Option;

/** The nvme-cli style connection flags every initiator verb takes. */
public final class ConnectionOptions {
    @Option(
            names = {"-t", "--transport"},
            paramLabel = "tcp|rdma",
            description = "Transport type: tcp (default) or rdma.",
            defaultValue = "tcp")
    public String transport;

    @Option(
            names = {"-a", "--traddr"},
            paramLabel = "ADDR",
            description = "Target address (default 127.0.0.1).",
            defaultValue = "127.0.0.1")
    public String traddr;

    @Option(
            names = {"-s", "--trsvcid"},
            paramLabel = "PORT",
            description = "Target port (default 4420).",
            defaultValue = "4420")
    public int trsvcid;

    @Option(
            names = {"-n", "--nqn"},
            paramLabel = "NQN",
            description = "Subsystem NQN.")
    public String nqn;

    @Option(
            names = {"-q", "--hostnqn"},
            paramLabel = "HOSTNQN",
            description = "Host NQN (default derived from the host ID).")
    public String hostnqn;

    @Option(
            names = {"-I", "--hostid"},
            paramLabel = "UUID",
            description = "Host identifier (default derived from this machine's name).")
    public String hostid;

    @Option(
            names = {"-i", "--nr-io-queues"},
            paramLabel = "N",
            description = "I/O queues to connect (default: cores).")
    public Integer ioQueues;

    @Option(
            names = {"-Q", "--queue-size"},
            paramLabel = "N",
            description = "I/O queue depth (default 128).",
            defaultValue = "128")
    public int queueSize;

    @Option(
            names = {"-k", "--keep-alive-tmo"},
            paramLabel = "SECONDS",
            description = "Keep-alive timeout (default 5).",
            defaultValue = "5")
    public int keepAliveSeconds;

    @Option(
            names = {"-g", "--hdr-digest"},
            description = "Enable NVMe/TCP header digests.")
    public boolean headerDigest;

    @Option(
            names = {"-G", "--data-digest"},
            description = "Enable NVMe/TCP data digests.")
    public boolean dataDigest;

    @Option(
            names = "--timeout",
            paramLabel = "MS",
            description = "Per-command timeout (default 30000).",
            defaultValue = "30000")
    public int timeoutMillis;

    @Option(
            names = "--ctrl-loss-tmo",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description =
                    "After losing the target, keep reconnecting this long, holding I/O (default 0: no reconnect, fail at once).")
    public int ctrlLossSeconds;

    @Option(
            names = "--reconnect-delay",
            paramLabel = "SECONDS",
            defaultValue = "2",
            description = "Pause between reconnect attempts (default 2).")
    public int reconnectDelaySeconds;

    @Option(
            names = "--fast-io-fail-tmo",
            paramLabel = "SECONDS",
            defaultValue = "-1",
            description =
                    "While reconnecting, fail I/O after this long instead of holding it (default: hold until --ctrl-loss-tmo).")
    public int fastIoFailSeconds;

    @Option(
            names = {"-S", "--dhchap-secret"},
            paramLabel = "SECRET",
            description =
                    "This host's DH-HMAC-CHAP secret (DHHC-1:..., or @FILE), used when the target requires authentication.")
    public String dhchapSecret;

    @Option(
            names = {"-C", "--dhchap-ctrl-secret"},
            paramLabel = "SECRET",
            description = "The controller's DH-HMAC-CHAP secret (DHHC-1:..., or @FILE): authenticate the target too.")
    public String dhchapCtrlSecret;

    @Option(
            names = "--tls-key",
            paramLabel = "KEY",
            description =
                    "Configured TLS PSK (NVMeTLSkey-1:..., or @FILE; jbof gen-tls-key or nvme gen-tls-key makes one): "
                            + "NVMe/TCP over TLS 1.3 with that key.")
    public String tlsKey;

    @Option(
            names = "--tls-identity",
            paramLabel = "0|1",
            defaultValue = "1",
            description =
                    "PSK identity version offered: 1 (with the PSK digest, NVMe/TCP 2.0; default) or 0 (NVMe/TCP 1.0c).")
    public int tlsIdentity;

    @Option(
            names = "--tls-hkdf",
            paramLabel = "legacy|rfc8446",
            defaultValue = "legacy",
            description =
                    "HKDF label encoding of the TLS PSK derivation: legacy (libnvme 1.x / nvme-cli 2.x; default) or rfc8446 "
                            + "(libnvme versions with a --compat option, without it).")
    public String tlsHkdf;

    @Option(
            names = "--tls-binder",
            paramLabel = "auto|identity|sha256",
            defaultValue = "auto",
            description =
                    "Hash a SHA-384 PSK is bound to: identity (SHA-384, as specified), sha256 (as tlshd with gnutls before 3.8.10, "
                            + "e.g. Debian 13, does), or auto (default: identity, else sha256 if the target refuses it).")
    public String tlsBinder;

    @Option(
            names = {"-v", "--verbose"},
            description = "Log protocol detail to stderr.")
    public boolean verbose;

    public ConnectOptions toOptions(String defaultNqn, int ioQueuesDefault) {
        String subnqn = nqn != null ? nqn : defaultNqn;
        if (subnqn == null)
            throw new IllegalArgumentException("which subsystem? give its NQN with -n NQN (jbof discover lists them)");
        ConnectOptions.Builder b = ConnectOptions.builder()
                .transport(transport)
                .address(traddr)
                .port(trsvcid)
                .subsystemNqn(subnqn)
                .ioQueues(ioQueues != null ? ioQueues : ioQueuesDefault)
                .queueDepth(queueSize)
                .keepAliveMillis(keepAliveSeconds * 1000)
                .headerDigest(headerDigest)
                .dataDigest(dataDigest)
                .commandTimeoutMillis(timeoutMillis)
                .ctrlLossTimeoutMillis(ctrlLossSeconds * 1000)
                .reconnectDelayMillis(Math.max(1, reconnectDelaySeconds * 1000))
                .fastIoFailMillis(fastIoFailSeconds < 0 ? -1 : fastIoFailSeconds * 1000);
        if (hostnqn != null) b.hostNqn(hostnqn);
        try {
            b.dhchapSecret(SecretText.resolve(dhchapSecret));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--dhchap-secret: " + e.getMessage());
        }
        try {
            b.dhchapCtrlSecret(SecretText.resolve(dhchapCtrlSecret));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--dhchap-ctrl-secret: " + e.getMessage());
        }
        try {
            b.tlsKey(SecretText.resolve(tlsKey))
                    .tlsIdentityVersion(tlsIdentity)
                    .tlsLabels(TlsPskDerivation.Labels.parse(tlsHkdf))
                    .tlsBinder(ConnectOptions.TlsBinder.parse(tlsBinder));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--tls-key: " + e.getMessage());
        }
        if (hostid != null) {
            try {
                b.hostId(UUID.fromString(hostid));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--hostid '" + hostid + "' is not a UUID");
            }
        }
        return b.build();
    }

    public static String discoveryNqn() {
        return Nqn.DISCOVERY;
    }
}
