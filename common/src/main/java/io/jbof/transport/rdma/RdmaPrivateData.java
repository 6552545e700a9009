package io.jbof.transport.rdma;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The NVMe-oF RDMA binding's RDMA CM private data: the host's connect request (RECFMT, QID, HRQSIZE,
 * HSQSIZE; 32 bytes), the controller's accept (RECFMT, CRQSIZE; 32 bytes) and reject (RECFMT, STS;
 * 4 bytes). All fields little endian. Validation follows Linux's nvmet-rdma.
 */
public final class RdmaPrivateData {
    public static final int RECFMT_1_0 = 0;
    public static final int REQUEST_SIZE = 32;
    public static final int ACCEPT_SIZE = 32;
    public static final int REJECT_SIZE = 4;
    /** Admin queue entries, as a Linux target allows (NVME_AQ_DEPTH). */
    public static final int ADMIN_QUEUE_ENTRIES = 32;

    // Reject statuses (NVMe RDMA transport specification; Linux enum nvme_rdma_cm_status).
    public static final int STS_INVALID_LENGTH = 0x01;
    public static final int STS_INVALID_RECFMT = 0x02;
    public static final int STS_INVALID_QID = 0x03;
    public static final int STS_INVALID_HSQSIZE = 0x04;
    public static final int STS_INVALID_HRQSIZE = 0x05;
    public static final int STS_NO_RESOURCES = 0x06;
    public static final int STS_INVALID_IRD = 0x07;
    public static final int STS_INVALID_ORD = 0x08;

    private RdmaPrivateData() {}

    /** The host's request: {@code hsqsize} is 0's based, {@code hrqsize} the receive queue entries. */
    public record Request(int qid, int hrqsize, int hsqsize) {
        /** Entries of the queue the host asks for (HSQSIZE + 1). */
        public int queueEntries() {
            return hsqsize + 1;
        }
    }

    /** What the host sends for a queue of {@code entries} commands, as Linux's nvme-rdma does. */
    public static byte[] encodeRequest(int qid, int entries) {
        ByteBuffer b = le(REQUEST_SIZE);
        b.putShort((short) RECFMT_1_0)
                .putShort((short) qid)
                .putShort((short) entries)
                .putShort((short) (entries - 1));
        return b.array();
    }

    /**
     * Parses and checks a connect request against the controller's limits; throws {@link Rejected}
     * with the status to send back in a reject.
     */
    public static Request decodeRequest(byte[] data, int maxQueueId, int maxIoQueueEntries) throws Rejected {
        if (data == null || data.length < 8)
            throw new Rejected(STS_INVALID_LENGTH, "private data of " + (data == null ? 0 : data.length) + " bytes");
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        int recfmt = b.getShort() & 0xFFFF;
        int qid = b.getShort() & 0xFFFF;
        int hrqsize = b.getShort() & 0xFFFF;
        int hsqsize = b.getShort() & 0xFFFF;
        if (recfmt != RECFMT_1_0) throw new Rejected(STS_INVALID_RECFMT, "record format " + recfmt);
        if (qid > maxQueueId) throw new Rejected(STS_INVALID_QID, "queue " + qid + " beyond " + maxQueueId);
        int max = qid == 0 ? ADMIN_QUEUE_ENTRIES : maxIoQueueEntries;
        if (hsqsize + 1 > max || hsqsize < 1)
            throw new Rejected(STS_INVALID_HSQSIZE, "HSQSIZE " + hsqsize + " (limit " + (max - 1) + ")");
        if (hrqsize < 1 || hrqsize > max + 1) throw new Rejected(STS_INVALID_HRQSIZE, "HRQSIZE " + hrqsize);
        return new Request(qid, hrqsize, hsqsize);
    }

    public static byte[] encodeAccept(int crqsize) {
        ByteBuffer b = le(ACCEPT_SIZE);
        b.putShort((short) RECFMT_1_0).putShort((short) crqsize);
        return b.array();
    }

    /** The controller's receive queue size from an accept. */
    public static int decodeAccept(byte[] data) throws Rejected {
        if (data == null || data.length < 4) throw new Rejected(STS_INVALID_LENGTH, "accept private data too short");
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        int recfmt = b.getShort() & 0xFFFF;
        if (recfmt != RECFMT_1_0) throw new Rejected(STS_INVALID_RECFMT, "record format " + recfmt);
        return b.getShort() & 0xFFFF;
    }

    public static byte[] encodeReject(int status) {
        ByteBuffer b = le(REJECT_SIZE);
        b.putShort((short) RECFMT_1_0).putShort((short) status);
        return b.array();
    }

    /** The status of a reject, or -1 when the data is not an NVMe-oF reject. */
    public static int decodeReject(byte[] data) {
        if (data == null || data.length < REJECT_SIZE) return -1;
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        return (b.getShort() & 0xFFFF) == RECFMT_1_0 ? b.getShort() & 0xFFFF : -1;
    }

    public static String describe(int status) {
        switch (status) {
            case STS_INVALID_LENGTH:
                return "invalid private data length";
            case STS_INVALID_RECFMT:
                return "invalid record format";
            case STS_INVALID_QID:
                return "invalid queue ID";
            case STS_INVALID_HSQSIZE:
                return "invalid host send queue size";
            case STS_INVALID_HRQSIZE:
                return "invalid host receive queue size";
            case STS_NO_RESOURCES:
                return "no resources";
            case STS_INVALID_IRD:
                return "invalid IRD";
            case STS_INVALID_ORD:
                return "invalid ORD";
            default:
                return "unknown status 0x" + Integer.toHexString(status);
        }
    }

    private static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A connect request the controller refuses, with the status for its reject. */
    public static final class Rejected extends Exception {
        public final int status;

        public Rejected(int status, String detail) {
            super(describe(status) + ": " + detail);
            this.status = status;
        }
    }
}
