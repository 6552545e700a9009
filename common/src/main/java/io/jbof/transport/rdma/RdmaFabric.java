package io.jbof.transport.rdma;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.impl.NatObject;

/**
 * The kind of RDMA a device speaks, as verbs reports it (the device's transport type), and what each
 * kind requires of the transports. Decided from the device, never from its name.
 */
public enum RdmaFabric {
    /** InfiniBand and RoCE (Soft-RoCE included): verbs report both as IBV_TRANSPORT_IB. */
    INFINIBAND_OR_ROCE("InfiniBand/RoCE"),
    /** iWARP (RDMA over TCP; Soft-iWARP, Chelsio, Intel): IBV_TRANSPORT_IWARP. */
    IWARP("iWARP"),
    /** A transport jbof was not written for (usNIC); treated like InfiniBand. */
    OTHER("other");

    private final String label;

    RdmaFabric(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** The fabric of an open device context. */
    public static RdmaFabric of(IbvContext ctx) {
        return fromTransportType(RdmaNative.transportType(((NatObject) ctx).getObjId()));
    }

    static RdmaFabric fromTransportType(int type) {
        return switch (type) {
            case 0 -> INFINIBAND_OR_ROCE;
            case 1 -> IWARP;
            default -> OTHER;
        };
    }

    /**
     * Whether the target answers a host's request for remote invalidation with SEND with Invalidate. Not on
     * iWARP: over Soft-iWARP a SEND with Invalidate posted from user space never completed at Linux's nvme-rdma
     * host (its Connect timed out; siw reported a TERMINATE "STag cannot be invalidated"), while a plain SEND
     * works, because the host then invalidates its own key, as NVMe-oF allows and Linux hosts do.
     */
    public boolean remoteInvalidate() {
        return this != IWARP;
    }

    /** Whether the QP's local ACK timeout governs retransmission: InfiniBand and RoCE; iWARP retransmits by TCP. */
    public boolean hasAckTimeout() {
        return this != IWARP;
    }

    /**
     * Access flags for a local buffer that RDMA READ responses land in. On iWARP a READ response is a tagged
     * DDP write into the sink's STag (RFC 5040), so hardware RNICs check remote write on it, as Linux's
     * rdma_rw does for iWARP; InfiniBand needs only local write.
     */
    public int readSinkAccess() {
        return this == IWARP
                ? RegisteredMemory.LOCAL_WRITE | RegisteredMemory.REMOTE_WRITE
                : RegisteredMemory.LOCAL_WRITE;
    }
}
