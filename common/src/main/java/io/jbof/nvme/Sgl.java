package io.jbof.nvme;

import io.netty.buffer.ByteBuf;

/**
 * The 16-byte SGL descriptor in a command's data pointer (bytes 24-39): address (8), length (4),
 * reserved (3), and the type (bits 7:4) / subtype (bits 3:0) byte. A keyed data block instead has a
 * 3-byte length at byte 8 and a 4-byte key at byte 11.
 */
public final class Sgl {
    private Sgl() {}

    public static final int TYPE_DATA_BLOCK = 0x0;
    public static final int TYPE_KEYED_DATA_BLOCK = 0x4;
    public static final int TYPE_TRANSPORT_DATA_BLOCK = 0x5;

    public static final int SUBTYPE_ADDRESS = 0x0;
    public static final int SUBTYPE_OFFSET = 0x1;
    public static final int SUBTYPE_INVALIDATE_KEY = 0xF;
    public static final int SUBTYPE_TRANSPORT_SPECIFIC = 0xA;

    /** In-capsule data: data block descriptor addressed by offset into the capsule. */
    public static final int ID_IN_CAPSULE = (TYPE_DATA_BLOCK << 4) | SUBTYPE_OFFSET;
    /** NVMe/TCP: data moved by C2HData / R2T + H2CData. */
    public static final int ID_TCP_TRANSPORT = (TYPE_TRANSPORT_DATA_BLOCK << 4) | SUBTYPE_TRANSPORT_SPECIFIC;

    public static void write(ByteBuf sqe, int sqeBase, long address, int length, int identifier) {
        int at = sqeBase + NvmeCommand.OFF_DPTR;
        sqe.setLongLE(at, address);
        sqe.setIntLE(at + 8, length);
        sqe.setMedium(at + 12, 0);
        sqe.setByte(at + 15, identifier);
    }

    public static void writeKeyed(ByteBuf sqe, int sqeBase, long address, int length, int key, int subtype) {
        int at = sqeBase + NvmeCommand.OFF_DPTR;
        sqe.setLongLE(at, address);
        sqe.setMediumLE(at + 8, length);
        sqe.setIntLE(at + 11, key);
        sqe.setByte(at + 15, (TYPE_KEYED_DATA_BLOCK << 4) | subtype);
    }

    /**
     * The checks an in-capsule data SGL (Data Block, Offset) passes on every transport, in nvmet's order:
     * data may only go to the controller; its offset must be 0 and its length within the in-capsule
     * size the queue offers ({@code limit}); and the capsule must carry it: exactly {@code carried}
     * bytes where the transport frames the data (TCP), at least that where it cannot tell (an RDMA SEND).
     * Returns the status to complete with, or SUCCESS.
     */
    public static int checkInCapsule(NvmeCommand cmd, int limit, int carried, boolean carriedExactly) {
        int length = cmd.sglLength();
        if (length != 0 && !cmd.dataToController()) return Status.dnr(Status.INVALID_FIELD);
        if (cmd.sglAddress() != 0 || length > limit) return Status.dnr(Status.SGL_OFFSET_INVALID);
        if (length < 0 || (carriedExactly ? length != carried : length > carried))
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        return Status.SUCCESS;
    }
}
