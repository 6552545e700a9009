package io.jbof.transport.tcp.tls;

import java.util.Locale;

/** Whether a target port secures NVMe/TCP with TLS (discovery log TREQ/TSAS tell hosts which). */
public enum TlsMode {
    /** Plain NVMe/TCP only. */
    OFF,
    /** TLS when the host starts a handshake, plain NVMe/TCP otherwise (treq "not required"). */
    OPTIONAL,
    /** TLS 1.3 before the first PDU, or the connection is closed (treq "required"). */
    REQUIRED;

    public static TlsMode parse(String s) {
        switch (s.toLowerCase(Locale.ROOT)) {
            case "off":
            case "none":
                return OFF;
            case "optional":
            case "not-required":
                return OPTIONAL;
            case "required":
            case "on":
                return REQUIRED;
            default:
                throw new IllegalArgumentException("TLS mode '" + s + "' is not off, optional or required");
        }
    }
}
