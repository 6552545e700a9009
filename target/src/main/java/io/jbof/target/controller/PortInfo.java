package io.jbof.target.controller;

import io.jbof.target.config.ListenAddress;
import io.jbof.transport.TransportType;
import io.jbof.transport.tcp.tls.TlsMode;

/**
 * A listening port, as the discovery log page describes it.
 *
 * @param tls NVMe/TCP over TLS 1.3 on this port: OFF, OPTIONAL or REQUIRED
 */
public record PortInfo(int portId, TransportType transport, String address, int port, boolean ipv6, TlsMode tls) {
    /** The bound address as host:port ([v6]:port). */
    public String hostPort() {
        return ListenAddress.text(address, port);
    }

    public PortInfo(int portId, TransportType transport, String address, int port, boolean ipv6) {
        this(portId, transport, address, port, ipv6, TlsMode.OFF);
    }
}
