package io.jbof.initiator.cli;

import io.jbof.initiator.ConnectOptions;
import io.jbof.nvme.tls.TlsPskDerivation;
import io.jbof.nvme.tls.TlsPskKey;
import io.jbof.util.SecretText;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Makes a configured TLS PSK, or checks one: with --subsysnqn it prints the PSK identity and the TLS PSK
 * this host and subsystem derive from it (what libnvme puts in the .nvme keyring), to compare ends.
 */
@Command(
        name = "gen-tls-key",
        description = {
            "Generate a configured TLS PSK in NVMe PSK interchange format (as nvme gen-tls-key), or show what a key derives to.",
            "Give the same key to the target (--tls-key HOSTNQN=KEY) and to the host (--tls-key KEY, or nvme gen-tls-key --secret --insert)."
        })
public final class GenTlsKeyCommand implements Callable<Integer> {
    @Option(
            names = {"-m", "--hmac"},
            paramLabel = "0|1|2",
            defaultValue = "1",
            description =
                    "Hash that turns the configured PSK into the retained PSK: 1 SHA-256 (32-byte key, default), 2 SHA-384 (48 bytes), 0 none.")
    int hmac;

    @Option(
            names = {"-s", "--secret"},
            paramLabel = "HEX",
            description = "Use these key bytes (32 or 48, in hex) instead of random ones.")
    String secret;

    @Option(
            names = {"-d", "--keydata"},
            paramLabel = "KEY",
            description = "Check this key (NVMeTLSkey-1:..., or @FILE) instead of making one.")
    String keydata;

    @Option(
            names = {"-n", "--hostnqn"},
            paramLabel = "NQN",
            description = "Host NQN for --subsysnqn (default: this machine's).")
    String hostnqn;

    @Option(
            names = {"-c", "--subsysnqn"},
            paramLabel = "NQN",
            description = "Also print the PSK identity and TLS PSK for this subsystem.")
    String subsysnqn;

    @Option(
            names = {"-I", "--identity"},
            paramLabel = "0|1",
            defaultValue = "1",
            description = "PSK identity version (default 1).")
    int identity;

    @Option(
            names = "--hkdf",
            paramLabel = "legacy|rfc8446",
            defaultValue = "legacy",
            description = "HKDF label encoding: legacy (libnvme 1.x / nvme-cli 2.x; default) or rfc8446.")
    String hkdf;

    @Override
    public Integer call() throws Exception {
        TlsPskKey key;
        if (keydata != null) {
            key = TlsPskKey.parse(SecretText.resolve(keydata));
        } else if (secret != null) {
            byte[] raw;
            try {
                raw = HexFormat.of().parseHex(secret);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--secret is not hex: " + e.getMessage());
            }
            key = TlsPskKey.of(raw, hmac);
            TlsPskKey.parse(key.format()); // the hash/length rules of a parsed key
        } else {
            key = TlsPskKey.generate(hmac);
        }
        System.out.println(key.format());
        if (subsysnqn != null) {
            String host = hostnqn != null ? hostnqn : ConnectOptions.defaultHostNqn(ConnectOptions.defaultHostId());
            TlsPskDerivation.Derived d =
                    TlsPskDerivation.derive(key, host, subsysnqn, identity, TlsPskDerivation.Labels.parse(hkdf));
            System.out.println("identity: " + d.identity());
            System.out.println("tls-psk:  " + HexFormat.of().formatHex(d.psk()));
        }
        return 0;
    }
}
