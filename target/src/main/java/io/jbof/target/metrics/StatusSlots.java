package io.jbof.target.metrics;

import io.jbof.nvme.Status;

/**
 * The statuses an I/O command can end with, each a small slot index, so failures are counted per
 * status in a fixed array (no map on the I/O path); anything else falls in the last slot.
 */
public final class StatusSlots {
    private StatusSlots() {}

    private static final int[] CODES = {
        Status.INVALID_OPCODE,
        Status.INVALID_FIELD,
        Status.DATA_TRANSFER_ERROR,
        Status.INTERNAL_ERROR,
        Status.ABORTED_SQ_DELETION,
        Status.INVALID_NAMESPACE,
        Status.COMMAND_SEQUENCE_ERROR,
        Status.DATA_SGL_LENGTH_INVALID,
        Status.NAMESPACE_WRITE_PROTECTED,
        Status.TRANSIENT_TRANSPORT_ERROR,
        Status.LBA_OUT_OF_RANGE,
        Status.CAPACITY_EXCEEDED,
        Status.WRITE_FAULT,
        Status.UNRECOVERED_READ_ERROR,
        Status.ANA_PERSISTENT_LOSS,
        Status.ANA_INACCESSIBLE,
        Status.ANA_TRANSITION,
    };
    /** Slots: one per known code, then "other". */
    public static final int COUNT = CODES.length + 1;

    private static final byte[] SLOT_OF = new byte[0x800];

    static {
        java.util.Arrays.fill(SLOT_OF, (byte) CODES.length);
        for (int i = 0; i < CODES.length; i++) SLOT_OF[CODES[i]] = (byte) i;
    }

    /** The slot of a completion status (DNR and the rest ignored). */
    public static int slot(int status) {
        return SLOT_OF[status & 0x7FF];
    }

    /** The status a slot counts, as "0x302"; "other" for the last. */
    public static String label(int slot) {
        return slot < CODES.length ? String.format("0x%03x", CODES[slot]) : "other";
    }
}
