package io.jbof.nvme;

import io.netty.buffer.ByteBuf;

/**
 * Flyweight over a 64-byte submission queue entry (command capsule) held in a ByteBuf.
 * Wrapping is free; the flyweight reads and writes the bytes in place (little endian, as on the wire).
 */
public final class NvmeCommand {
    public static final int SIZE = 64;

    public static final int OFF_OPCODE = 0;
    public static final int OFF_FLAGS = 1;
    public static final int OFF_CID = 2;
    public static final int OFF_NSID = 4;
    public static final int OFF_FCTYPE = 4;
    public static final int OFF_MPTR = 16;
    public static final int OFF_DPTR = 24;
    public static final int OFF_CDW10 = 40;

    /** PSDT = 01b: SGLs for the data, metadata pointer a contiguous buffer (what Linux hosts set). */
    public static final int FLAGS_SGL = 0x40;
    /** PSDT, bits 7:6 of the flags byte. */
    public static final int FLAGS_PSDT_MASK = 0xC0;
    /** FUSE, bits 1:0: first or second command of a fused operation. */
    public static final int FLAGS_FUSE_MASK = 0x03;

    private ByteBuf buf;
    private int base;

    public NvmeCommand wrap(ByteBuf buf, int base) {
        this.buf = buf;
        this.base = base;
        return this;
    }

    public ByteBuf buffer() {
        return buf;
    }

    public int base() {
        return base;
    }

    public NvmeCommand clear() {
        buf.setZero(base, SIZE);
        return this;
    }

    public int opcode() {
        return buf.getUnsignedByte(base + OFF_OPCODE);
    }

    public NvmeCommand opcode(int v) {
        buf.setByte(base + OFF_OPCODE, v);
        return this;
    }

    public int flags() {
        return buf.getUnsignedByte(base + OFF_FLAGS);
    }

    public NvmeCommand flags(int v) {
        buf.setByte(base + OFF_FLAGS, v);
        return this;
    }

    public int cid() {
        return buf.getUnsignedShortLE(base + OFF_CID);
    }

    public NvmeCommand cid(int v) {
        buf.setShortLE(base + OFF_CID, v);
        return this;
    }

    public int nsid() {
        return buf.getIntLE(base + OFF_NSID);
    }

    public NvmeCommand nsid(int v) {
        buf.setIntLE(base + OFF_NSID, v);
        return this;
    }

    public int fctype() {
        return buf.getUnsignedByte(base + OFF_FCTYPE);
    }

    public NvmeCommand fctype(int v) {
        buf.setByte(base + OFF_FCTYPE, v);
        return this;
    }

    /** Command dword N (0..15). */
    public int cdw(int n) {
        return buf.getIntLE(base + n * 4);
    }

    public NvmeCommand cdw(int n, int v) {
        buf.setIntLE(base + n * 4, v);
        return this;
    }

    public int byteAt(int offset) {
        return buf.getUnsignedByte(base + offset);
    }

    public int u16At(int offset) {
        return buf.getUnsignedShortLE(base + offset);
    }

    public int u32At(int offset) {
        return buf.getIntLE(base + offset);
    }

    public long u64At(int offset) {
        return buf.getLongLE(base + offset);
    }

    public NvmeCommand byteAt(int offset, int v) {
        buf.setByte(base + offset, v);
        return this;
    }

    public NvmeCommand u16At(int offset, int v) {
        buf.setShortLE(base + offset, v);
        return this;
    }

    public NvmeCommand u32At(int offset, int v) {
        buf.setIntLE(base + offset, v);
        return this;
    }

    public NvmeCommand u64At(int offset, long v) {
        buf.setLongLE(base + offset, v);
        return this;
    }

    /** Whether the command's data, if any, goes host to controller (opcode bit 0; FCTYPE bit 0 for Fabrics commands). */
    public boolean dataToController() {
        return ((opcode() == Opcodes.FABRICS ? fctype() : opcode()) & 1) != 0;
    }

    // SGL descriptor 1 (data pointer)
    public long sglAddress() {
        return buf.getLongLE(base + OFF_DPTR);
    }

    public int sglLength() {
        return buf.getIntLE(base + OFF_DPTR + 8);
    }
    /** Keyed data block descriptors carry a 24-bit length. */
    public int sglKeyedLength() {
        return buf.getUnsignedMediumLE(base + OFF_DPTR + 8);
    }

    public int sglKey() {
        return buf.getIntLE(base + OFF_DPTR + 11);
    }

    public int sglIdentifier() {
        return buf.getUnsignedByte(base + OFF_DPTR + 15);
    }

    public int sglType() {
        return sglIdentifier() >>> 4;
    }

    public int sglSubtype() {
        return sglIdentifier() & 0xF;
    }

    // NVM command set: Read / Write / Write Zeroes
    public long slba() {
        return buf.getLongLE(base + OFF_CDW10);
    }

    public NvmeCommand slba(long v) {
        buf.setLongLE(base + OFF_CDW10, v);
        return this;
    }
    /** Number of logical blocks, already converted from the 0's based field. */
    public int nlb() {
        return (cdw(12) & 0xFFFF) + 1;
    }

    public NvmeCommand nlb(int blocks) {
        cdw(12, (cdw(12) & 0xFFFF0000) | ((blocks - 1) & 0xFFFF));
        return this;
    }

    public boolean fua() {
        return (cdw(12) & (1 << 30)) != 0;
    }

    public NvmeCommand fua(boolean on) {
        cdw(12, on ? cdw(12) | (1 << 30) : cdw(12) & ~(1 << 30));
        return this;
    }

    @Override
    public String toString() {
        return String.format(
                "cmd(opc=0x%02x cid=%d nsid=%d cdw10=0x%08x sgl=0x%02x len=%d)",
                opcode(), cid(), nsid(), cdw(10), sglIdentifier(), sglLength());
    }
}
