package io.jbof.transport.tcp;

import io.jbof.nvme.NvmeCommand;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.zip.CRC32C;

/**
 * Writes the NVMe/TCP PDUs both roles send (the pair of {@link PduDecoder}): one per connection, as it
 * keeps the digests the ICReq/ICResp exchange turned on and a CRC32C it reuses. Each method returns a
 * new buffer from the connection's allocator holding a whole header (with its digest when on); data
 * is never copied into it, it goes out as its own buffer followed by {@link #dataDigest}.
 */
public final class PduEncoder {
    private final CRC32C crc = new CRC32C();
    private boolean headerDigest;
    private boolean dataDigest;

    /** What the ICReq/ICResp exchange settled. */
    public void negotiated(boolean headerDigest, boolean dataDigest) {
        this.headerDigest = headerDigest;
        this.dataDigest = dataDigest;
    }

    /** Bytes of header digest a header carries now (0 or 4). */
    private int headerDigestBytes() {
        return headerDigest ? Pdu.DIGEST : 0;
    }

    /** Bytes of data digest a data-carrying PDU carries now (0 or 4). */
    private int dataDigestBytes() {
        return dataDigest ? Pdu.DIGEST : 0;
    }

    /** ICReq: PFV 1.0, HPDA 0, the digests the host asks for, MAXR2T 0 (one outstanding R2T per command). */
    public static ByteBuf icReq(ByteBufAllocator alloc, boolean wantHeaderDigest, boolean wantDataDigest) {
        ByteBuf b = alloc.directBuffer(Pdu.IC_LENGTH);
        Pdu.writeCommonHeader(b, Pdu.IC_REQ, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
        b.writeShortLE(0); // PFV 1.0
        b.writeByte(0); // HPDA: no data alignment needed
        b.writeByte(digestBits(wantHeaderDigest, wantDataDigest));
        b.writeIntLE(0); // MAXR2T, 0's based
        b.writeZero(Pdu.IC_LENGTH - b.writerIndex());
        return b;
    }

    /** ICResp: PFV 1.0, CPDA 0 (data follows the header), the digests granted, MAXH2CDATA. */
    public ByteBuf icResp(ByteBufAllocator alloc, int maxH2CData) {
        ByteBuf b = alloc.directBuffer(Pdu.IC_LENGTH);
        Pdu.writeCommonHeader(b, Pdu.IC_RESP, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
        b.writeShortLE(0); // PFV
        b.writeByte(0); // CPDA
        b.writeByte(digestBits(headerDigest, dataDigest));
        b.writeIntLE(maxH2CData);
        b.writeZero(Pdu.IC_LENGTH - b.writerIndex());
        return b;
    }

    /** H2CTermReq or C2HTermReq (by {@code type}) with its fatal error status and information. */
    public static ByteBuf termReq(ByteBufAllocator alloc, int type, int fes, int fei) {
        ByteBuf b = alloc.directBuffer(Pdu.TERM_REQ_HLEN);
        Pdu.writeCommonHeader(b, type, 0, Pdu.TERM_REQ_HLEN, 0, Pdu.TERM_REQ_HLEN);
        b.writeShortLE(fes);
        b.writeIntLE(fei);
        b.writeZero(Pdu.TERM_REQ_HLEN - b.writerIndex());
        return b;
    }

    /** A CapsuleCmd header: the 64-byte SQE at {@code at}, then {@code inCapsule} data bytes to follow (0: none). */
    public ByteBuf capsuleCmd(ByteBufAllocator alloc, ByteBuf sqe, int at, int inCapsule) {
        int hd = headerDigestBytes();
        int dd = inCapsule > 0 ? dataDigestBytes() : 0;
        int pdo = inCapsule > 0 ? Pdu.CAPSULE_CMD_HLEN + hd : 0;
        int flags = (headerDigest ? Pdu.FLAG_HDGST : 0) | (dd != 0 ? Pdu.FLAG_DDGST : 0);
        ByteBuf h = alloc.directBuffer(Pdu.CAPSULE_CMD_HLEN + hd);
        Pdu.writeCommonHeader(
                h, Pdu.CAPSULE_CMD, flags, Pdu.CAPSULE_CMD_HLEN, pdo, Pdu.CAPSULE_CMD_HLEN + hd + inCapsule + dd);
        h.writeBytes(sqe, at, NvmeCommand.SIZE);
        writeHeaderDigest(h, Pdu.CAPSULE_CMD_HLEN);
        return h;
    }

    /**
     * A CapsuleResp header with room for the 16-byte CQE at {@link Pdu#COMMON_HEADER}: the caller writes
     * it there, then calls {@link #sealCapsuleResp}.
     */
    public ByteBuf capsuleResp(ByteBufAllocator alloc) {
        int hd = headerDigestBytes();
        ByteBuf b = alloc.directBuffer(Pdu.CAPSULE_RESP_HLEN + hd);
        Pdu.writeCommonHeader(
                b,
                Pdu.CAPSULE_RESP,
                headerDigest ? Pdu.FLAG_HDGST : 0,
                Pdu.CAPSULE_RESP_HLEN,
                0,
                Pdu.CAPSULE_RESP_HLEN + hd);
        return b;
    }

    /** Ends a CapsuleResp whose CQE was written: its length, then its header digest when on. */
    public ByteBuf sealCapsuleResp(ByteBuf b) {
        b.writerIndex(Pdu.CAPSULE_RESP_HLEN);
        writeHeaderDigest(b, Pdu.CAPSULE_RESP_HLEN);
        return b;
    }

    /**
     * The header of a C2HData or H2CData PDU carrying {@code length} bytes at {@code offset} of the
     * command's data, or of an R2T asking for them ({@code last} and {@code success} count for C2HData
     * only; {@code last} for H2CData).
     */
    public ByteBuf dataHeader(
            ByteBufAllocator alloc,
            int type,
            int cid,
            int ttag,
            int offset,
            int length,
            boolean last,
            boolean success) {
        int hd = headerDigestBytes();
        int flags = headerDigest ? Pdu.FLAG_HDGST : 0;
        int pdo;
        int plen;
        if (type == Pdu.R2T) { // carries no data
            pdo = 0;
            plen = Pdu.DATA_HLEN + hd;
        } else {
            flags |= (dataDigest ? Pdu.FLAG_DDGST : 0)
                    | (last ? Pdu.FLAG_LAST_PDU : 0)
                    | (success && type == Pdu.C2H_DATA ? Pdu.FLAG_SUCCESS : 0);
            pdo = Pdu.DATA_HLEN + hd;
            plen = pdo + length + dataDigestBytes();
        }
        ByteBuf b = alloc.directBuffer(Pdu.DATA_HLEN + hd);
        Pdu.writeCommonHeader(b, type, flags, Pdu.DATA_HLEN, pdo, plen);
        b.writeShortLE(cid);
        b.writeShortLE(ttag);
        b.writeIntLE(offset);
        b.writeIntLE(length);
        b.writeIntLE(0);
        writeHeaderDigest(b, Pdu.DATA_HLEN);
        return b;
    }

    /** The data digest of {@code length} bytes at {@code at} of {@code data}, as its own 4-byte buffer. */
    public ByteBuf dataDigest(ByteBufAllocator alloc, ByteBuf data, int at, int length) {
        ByteBuf d = alloc.directBuffer(Pdu.DIGEST);
        d.writeIntLE(Pdu.crc32c(crc, data, at, length));
        return d;
    }

    private void writeHeaderDigest(ByteBuf b, int hlen) {
        if (headerDigest) b.writeIntLE(Pdu.crc32c(crc, b, 0, hlen));
    }

    private static int digestBits(boolean header, boolean data) {
        return (header ? Pdu.IC_DGST_HEADER : 0) | (data ? Pdu.IC_DGST_DATA : 0);
    }
}
