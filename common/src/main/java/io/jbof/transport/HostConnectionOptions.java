package io.jbof.transport;

/**
 * What a host connection needs to know: where, and the transport-level options (digests).
 *
 * @param address         target address (IPv4, IPv6 or host name)
 * @param port            target port
 * @param headerDigest    request NVMe/TCP header digests
 * @param dataDigest      request NVMe/TCP data digests
 * @param connectTimeoutMillis bound on the transport connect and initialization
 */
public record HostConnectionOptions(String address, int port, boolean headerDigest, boolean dataDigest,
                                    int connectTimeoutMillis) {
}
