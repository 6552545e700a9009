package io.jbof.target.controller;

/**
 * A listening port, as the discovery log page describes it.
 *
 * @param tls NVMe/TCP over TLS 1.3 on this port: OFF, OPTIONAL or REQUIRED
 */
public record PortInfo(int portId, io.jbof.transport.TransportType transport, String address, int port, boolean ipv6, io.jbof.transport.tcp.tls.TlsMode tls) {
    public PortInfo(int portId, io.jbof.transport.TransportType transport, String address, int port, boolean ipv6) {
        this(portId, transport, address, port, ipv6, io.jbof.transport.tcp.tls.TlsMode.OFF);
    }
}
