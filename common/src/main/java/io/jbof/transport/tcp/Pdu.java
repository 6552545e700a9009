package io.jbof.transport.tcp;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * NVMe/TCP PDU layout: the 8-byte common header (type, flags, hlen, pdo, plen little endian) and the
 * PDU-specific header fields. Helpers here read and write headers in place; they never allocate.
 */
public final class Pdu {
    private Pdu() {}

    public static final int IC_REQ = 0x00;
    public static final int IC_RESP = 0x01;
    public static final int H2C_TERM_REQ = 0x02;
    public static final int C2H_TERM_REQ = 0x03;
    public static final int CAPSULE_CMD = 0x04;
    public static final int CAPSULE_RESP = 0x05;
    public static final int H2C_DATA = 0x06;
    public static final int C2H_DATA = 0x07;
    public static final int R2T = 0x09;

    public static final int FLAG_HDGST = 0x01;
    public static final int FLAG_DDGST = 0x02;
    public static final int FLAG_LAST_PDU = 0x04;
    public static final int FLAG_SUCCESS = 0x08;

    public static final int COMMON_HEADER = 8;
    public static final int IC_LENGTH = 128;
    public static final int CAPSULE_CMD_HLEN = 72;
    public static final int CAPSULE_RESP_HLEN = 24;
    public static final int DATA_HLEN = 24;
    public static final int R2T_HLEN = 24;
    public static final int TERM_REQ_HLEN = 24;
    /** A TermReq carries at most the first 128 bytes of the offending PDU header. */
    public static final int TERM_REQ_MAX_PLEN = 152;

    public static final int DIGEST = 4;
    /** In-capsule data on admin queues: Linux's nvme-tcp host sends up to 8 KiB there (NVME_TCP_ADMIN_CCSZ), Connect's 1024 bytes included. */
    public static final int ADMIN_IN_CAPSULE_DATA = 8192;

    // Fatal error status of H2C/C2HTermReq
    public static final int FES_INVALID_PDU_HEADER = 0x01;
    public static final int FES_PDU_SEQUENCE_ERROR = 0x02;
    public static final int FES_HEADER_DIGEST_ERROR = 0x03;
    public static final int FES_DATA_OUT_OF_RANGE = 0x04;
    public static final int FES_DATA_LIMIT_EXCEEDED = 0x05;
    public static final int FES_UNSUPPORTED_PARAMETER = 0x06;

    // ICReq / ICResp fields (after the common header)
    public static final int IC_OFF_PFV = 8;
    public static final int IC_OFF_HPDA_CPDA = 10;
    public static final int IC_OFF_DGST = 11;
    public static final int IC_OFF_MAXR2T_MAXDATA = 12;
    public static final int IC_DGST_HEADER = 1;
    public static final int IC_DGST_DATA = 2;

    // Data / R2T PDU fields
    public static final int DATA_OFF_CCCID = 8;
    public static final int DATA_OFF_TTAG = 10;
    public static final int DATA_OFF_DATAO = 12;
    public static final int DATA_OFF_DATAL = 16;

    // TermReq fields
    public static final int TERM_OFF_FES = 8;
    public static final int TERM_OFF_FEI = 10;

    public static int type(ByteBuf b, int at) {
        return b.getUnsignedByte(at);
    }

    public static int flags(ByteBuf b, int at) {
        return b.getUnsignedByte(at + 1);
    }

    public static int hlen(ByteBuf b, int at) {
        return b.getUnsignedByte(at + 2);
    }

    public static int pdo(ByteBuf b, int at) {
        return b.getUnsignedByte(at + 3);
    }

    public static int plen(ByteBuf b, int at) {
        return b.getIntLE(at + 4);
    }

    /** Expected hlen of a PDU type, or -1 for an unknown type. */
    public static int expectedHlen(int type) {
        switch (type) {
            case IC_REQ:
            case IC_RESP:
                return IC_LENGTH;
            case CAPSULE_CMD:
                return CAPSULE_CMD_HLEN;
            case CAPSULE_RESP:
                return CAPSULE_RESP_HLEN;
            case H2C_DATA:
            case C2H_DATA:
                return DATA_HLEN;
            case R2T:
                return R2T_HLEN;
            case H2C_TERM_REQ:
            case C2H_TERM_REQ:
                return TERM_REQ_HLEN;
            default:
                return -1;
        }
    }

    /** Whether digests apply to this PDU type (never to the IC exchange or TermReqs). */
    public static boolean carriesDigests(int type) {
        return type != IC_REQ && type != IC_RESP && type != H2C_TERM_REQ && type != C2H_TERM_REQ;
    }

    public static String name(int type) {
        switch (type) {
            case IC_REQ:
                return "ICReq";
            case IC_RESP:
                return "ICResp";
            case H2C_TERM_REQ:
                return "H2CTermReq";
            case C2H_TERM_REQ:
                return "C2HTermReq";
            case CAPSULE_CMD:
                return "CapsuleCmd";
            case CAPSULE_RESP:
                return "CapsuleResp";
            case H2C_DATA:
                return "H2CData";
            case C2H_DATA:
                return "C2HData";
            case R2T:
                return "R2T";
            default:
                return String.format("PDU type 0x%02x", type);
        }
    }

    /** Writes the common header at the writer index and advances it by 8. */
    public static void writeCommonHeader(ByteBuf b, int type, int flags, int hlen, int pdo, int plen) {
        b.writeByte(type);
        b.writeByte(flags);
        b.writeByte(hlen);
        b.writeByte(pdo);
        b.writeIntLE(plen);
    }

    /** CRC32C over [at, at+len) of a buffer, as NVMe/TCP digests are computed. */
    public static int crc32c(CRC32C crc, ByteBuf b, int at, int len) {
        crc.reset();
        crc32cUpdate(crc, b, at, len);
        return (int) crc.getValue();
    }

    /** Adds {@code len} bytes at {@code at} to a running CRC32C: data placed piece by piece is checked as it arrives. */
    public static void crc32cUpdate(CRC32C crc, ByteBuf b, int at, int len) {
        if (b.nioBufferCount() == 1) {
            crc.update(b.internalNioBuffer(at, len)); // a reused view: no ByteBuffer per PDU
        } else {
            for (ByteBuffer bb : b.nioBuffers(at, len)) crc.update(bb);
        }
    }
}
