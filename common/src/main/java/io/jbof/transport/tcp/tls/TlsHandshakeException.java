package io.jbof.transport.tcp.tls;

import java.io.IOException;

/** The TLS handshake failed, timed out or was cut off: the connection never carried NVMe/TCP. */
public final class TlsHandshakeException extends IOException {
    public TlsHandshakeException(String message) {
        super(message);
    }

    public TlsHandshakeException(String message, Throwable cause) {
        super(message, cause);
    }
}
