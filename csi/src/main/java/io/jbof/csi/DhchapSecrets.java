package io.jbof.csi;

import io.jbof.nvme.auth.DhchapKey;
import java.util.Map;

/**
 * The DH-HMAC-CHAP secrets of a volume, from a call's CSI secrets (a Kubernetes Secret named by the
 * StorageClass): {@value #HOST_KEY} is the key the node authenticates with (DHHC-1:..., as
 * {@code nvme gen-dhchap-key} prints), {@value #CTRL_KEY} (optional) the one the storage host proves
 * itself with. Never logged, and never put on a command line.
 */
record DhchapSecrets(String host, String ctrl) {
    static final String HOST_KEY = "dhchap-secret";
    static final String CTRL_KEY = "dhchap-ctrl-secret";

    /** The secrets in {@code secrets}, or null when it names none; INVALID_ARGUMENT (saying what, never the key) when malformed. */
    static DhchapSecrets of(Map<String, String> secrets) {
        String host = secrets.get(HOST_KEY);
        String ctrl = secrets.get(CTRL_KEY);
        if (host == null && ctrl == null) return null;
        if (host == null) throw ControllerService.invalid("secrets: " + CTRL_KEY + " needs " + HOST_KEY + " too");
        check(host, HOST_KEY);
        if (ctrl != null) check(ctrl, CTRL_KEY);
        return new DhchapSecrets(host, ctrl);
    }

    private static void check(String secret, String name) {
        try {
            DhchapKey.parse(secret);
        } catch (IllegalArgumentException e) {
            throw ControllerService.invalid("secrets: " + name + ": " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "DhchapSecrets[hidden]";
    }
}
