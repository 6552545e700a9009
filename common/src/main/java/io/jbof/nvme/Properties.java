package io.jbof.nvme;

/** Controller properties (the fabrics form of the NVMe registers) and their fields. */
public final class Properties {
    private Properties() {}

    public static final int CAP = 0x00;
    public static final int VS = 0x08;
    public static final int CC = 0x14;
    public static final int CSTS = 0x1C;

    public static final int CC_EN = 1;
    public static final int CC_SHN_SHIFT = 14;
    public static final int CC_SHN_MASK = 0x3 << CC_SHN_SHIFT;
    public static final int CSTS_RDY = 1;
    public static final int CSTS_CFS = 1 << 1;
    public static final int CSTS_SHST_SHIFT = 2;
    public static final int SHST_COMPLETE = 2;

    /** NVMe 1.3: the version this target reports, as Linux's nvmet does. */
    public static final int VERSION_1_3 = 0x00010300;

    /** Property Set / Get: attribute byte 40 bits 2:0 give the size (0 = 4 bytes, 1 = 8 bytes). */
    public static final int OFF_ATTRIB = 40;

    public static final int OFF_OFFSET = 44;
    public static final int OFF_VALUE = 48;

    /** Builds CAP: MQES (0's based), CQR, timeout in 500 ms units, NVM command set, MPSMIN 4 KiB. */
    public static long cap(int maxQueueEntries, int timeout500ms) {
        long cap = (maxQueueEntries - 1) & 0xFFFFL;
        cap |= 1L << 16; // CQR: queues must be physically contiguous (always so over fabrics)
        cap |= (long) (timeout500ms & 0xFF) << 24;
        cap |= 1L << 37; // CSS: NVM command set
        return cap;
    }

    public static int capMaxQueueEntries(long cap) {
        return (int) (cap & 0xFFFF) + 1;
    }

    public static int capTimeoutMillis(long cap) {
        return (int) ((cap >>> 24) & 0xFF) * 500;
    }

    public static String name(int offset) {
        switch (offset) {
            case CAP:
                return "CAP";
            case VS:
                return "VS";
            case CC:
                return "CC";
            case CSTS:
                return "CSTS";
            default:
                return String.format("0x%x", offset);
        }
    }
}
