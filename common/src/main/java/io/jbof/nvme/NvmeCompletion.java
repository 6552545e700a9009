package io.jbof.nvme;

import io.netty.buffer.ByteBuf;

/** Flyweight over a 16-byte completion queue entry (response capsule). */
public final class NvmeCompletion {
    public static final int SIZE = 16;

    private ByteBuf buf;
    private int base;

    public NvmeCompletion wrap(ByteBuf buf, int base) {
        this.buf = buf;
        this.base = base;
        return this;
    }

    public int dw0() {
        return buf.getIntLE(base);
    }

    public int dw1() {
        return buf.getIntLE(base + 4);
    }

    public long result64() {
        return buf.getLongLE(base);
    }

    public int sqHead() {
        return buf.getUnsignedShortLE(base + 8);
    }

    public int sqId() {
        return buf.getUnsignedShortLE(base + 10);
    }

    public int cid() {
        return buf.getUnsignedShortLE(base + 12);
    }
    /** Status field without the phase bit: (DNR << 14) | (SCT << 8) | SC. */
    public int status() {
        return buf.getUnsignedShortLE(base + 14) >>> 1;
    }

    /** Writes a whole CQE in place. */
    public static void write(ByteBuf buf, int base, long result, int sqHead, int sqId, int cid, int status) {
        buf.setLongLE(base, result);
        buf.setShortLE(base + 8, sqHead);
        buf.setShortLE(base + 10, sqId);
        buf.setShortLE(base + 12, cid);
        buf.setShortLE(base + 14, (status & 0x7FFF) << 1);
    }
}
