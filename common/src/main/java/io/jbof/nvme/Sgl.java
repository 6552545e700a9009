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
}
