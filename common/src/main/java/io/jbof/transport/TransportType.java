package io.jbof.transport;

import io.jbof.nvme.DiscoveryLog;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What each NVMe-oF transport is, said by the transport itself (as Linux's nvmet_fabrics_ops and SPDK's
 * transport ops carry type, SGL kind and discovery entry): its name on the command line and in
 * configuration, its TRTYPE, whether its data SGLs are keyed, whether TLS can secure it, and the
 * transport-specific part of its discovery log entries. The one place a transport is looked up by name.
 */
public enum TransportType {
    /** NVMe/TCP: data in PDUs, unkeyed SGLs, TLS 1.3 with a PSK where configured. */
    TCP("tcp", DiscoveryLog.TRTYPE_TCP, false, true) {
        @Override
        public void writeTsas(ByteBuf b, int at, boolean tlsOn) {
            if (tlsOn) b.setByte(at, DiscoveryLog.TCP_SECTYPE_TLS13);
        }
    },
    /** NVMe/RDMA: data by RDMA READ/WRITE against keyed SGLs; no TLS. */
    RDMA("rdma", DiscoveryLog.TRTYPE_RDMA, true, false) {
        @Override
        public void writeTsas(ByteBuf b, int at, boolean tlsOn) {
            b.setByte(at, 1); // RC queue pairs
            b.setByte(at + 1, 1); // no provider type specified
            b.setByte(at + 2, 1); // RDMA CM
        }
    };

    private final String id;
    private final int trtype;
    private final boolean keyedSgls;
    private final boolean tls;

    TransportType(String id, int trtype, boolean keyedSgls, boolean tls) {
        this.id = id;
        this.trtype = trtype;
        this.keyedSgls = keyedSgls;
        this.tls = tls;
    }

    /** The name users give (-t tcp, "transport": "rdma") and logs show. */
    public String id() {
        return id;
    }

    /** The discovery log's and Connect's TRTYPE. */
    public int trtype() {
        return trtype;
    }

    /** Whether data SGL descriptors are keyed (RDMA) rather than plain (TCP): Identify Controller's SGLS says so. */
    public boolean keyedSgls() {
        return keyedSgls;
    }

    /** Whether TLS can secure this transport. */
    public boolean supportsTls() {
        return tls;
    }

    /** Writes the transport-specific address subtype (TSAS, 256 bytes at {@code at}) of a discovery log entry. */
    public abstract void writeTsas(ByteBuf b, int at, boolean tlsOn);

    @Override
    public String toString() {
        return id;
    }

    /** The transport named {@code name}, or an IllegalArgumentException that lists the known ones. */
    public static TransportType parse(String name) {
        for (TransportType t : values()) {
            if (t.id.equals(name)) return t;
        }
        throw new IllegalArgumentException("transport '" + name + "' is unknown; use " + known());
    }

    /** The name of TRTYPE {@code trtype}, or "trtype-N" for one jbof does not carry. */
    public static String nameOf(int trtype) {
        for (TransportType t : values()) {
            if (t.trtype == trtype) return t.id;
        }
        return "trtype-" + trtype;
    }

    private static String known() {
        return Arrays.stream(values()).map(t -> t.id).collect(Collectors.joining(" or "));
    }
}
