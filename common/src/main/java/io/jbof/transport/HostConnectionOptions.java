package io.jbof.transport;

import io.jbof.nvme.tls.TlsPskDerivation;

/**
 * What a host connection needs to know: where, the queue it carries, and the transport-level options.
 *
 * @param address         target address (IPv4, IPv6 or host name)
 * @param port            target port
 * @param headerDigest    request NVMe/TCP header digests
 * @param dataDigest      request NVMe/TCP data digests
 * @param connectTimeoutMillis bound on the transport connect and initialization
 * @param qid             the queue this connection carries (0: admin); RDMA names it in the CM private data
 * @param queueEntries    entries of that queue; RDMA sizes the QP and names it in the private data
 * @param tls             TLS 1.3 PSK identity and key for NVMe/TCP over TLS; null for plain NVMe/TCP
 * @param tlsSha256Binder bind a SHA-384 PSK to SHA-256 (as tlshd with gnutls before 3.8.10 does)
 */
public record HostConnectionOptions(
        String address,
        int port,
        boolean headerDigest,
        boolean dataDigest,
        int connectTimeoutMillis,
        int qid,
        int queueEntries,
        TlsPskDerivation.Derived tls,
        boolean tlsSha256Binder) {
    public HostConnectionOptions(
            String address, int port, boolean headerDigest, boolean dataDigest, int connectTimeoutMillis) {
        this(address, port, headerDigest, dataDigest, connectTimeoutMillis, 0, 32, null, false);
    }

    public HostConnectionOptions forQueue(int qid, int queueEntries) {
        return new HostConnectionOptions(
                address, port, headerDigest, dataDigest, connectTimeoutMillis, qid, queueEntries, tls, tlsSha256Binder);
    }

    public HostConnectionOptions withTls(TlsPskDerivation.Derived key, boolean sha256Binder) {
        return new HostConnectionOptions(
                address, port, headerDigest, dataDigest, connectTimeoutMillis, qid, queueEntries, key, sha256Binder);
    }
}
