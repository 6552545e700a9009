package io.jbof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Frames the byte stream into whole PDUs, checks the common header (type, hlen, pdo, plen bounds)
 * and verifies digests once they are negotiated. Emits each PDU as a retained slice of the
 * cumulation (pooled: no copy, no allocation per PDU); the next stage owns and releases it.
 *
 * <p>A data PDU type given to {@link #placeData} is not held whole: once its header is in, its payload goes to the
 * {@link DataPlacement} piece by piece as the socket delivers it, straight from the read buffer into the command's
 * buffer (one copy instead of two: no cumulation of the whole PDU first), as Linux's nvme-tcp host copies C2HData
 * from the skb into the request's pages. Where the placement offers its buffer ({@link DataPlacement#target}) and
 * nothing is left over from earlier reads, {@link PlacedReads} has the socket read the rest of a large payload into
 * that buffer itself: the kernel's copy is then the only one.
 */
public final class PduDecoder extends ByteToMessageDecoder {
    private final boolean controllerSide;
    private final CRC32C crc = new CRC32C();
    private int maxPduLength;
    private boolean headerDigest;
    private boolean dataDigest;
    private boolean initialized;
    private boolean failed;

    private int placedType = -1;
    private DataPlacement placement;
    /** Payload bytes of the PDU being placed still to come; -1 when none is. */
    private int placing = -1;

    private boolean placingDigest;
    private int placingCid;
    /** The buffer last handed out by {@link #directReadTarget}: its bytes are already in place when it comes back. */
    private ByteBuf directRead;

    /**
     * The smallest rest of a payload worth a read of its own: smaller ones ride along with the next PDUs' headers in
     * one ordinary read (a syscall per 4 KiB PDU would cost more than the copy it saves).
     */
    static final int DIRECT_READ_MIN = 16 * 1024;
    /** A read between large payloads: a few headers (and capsule responses) and the start of the next payload. */
    static final int HEADER_READ = 1024;
    /** Whether the last placed payload was large: more are likely to follow (a streaming read). */
    private boolean largePayloads;
    /** Bytes of other PDUs since then: more than a header read's worth ends the streak (short reads would then cost). */
    private int otherBytes;

    /**
     * @param controllerSide true on the target (accepts host-to-controller PDU types)
     * @param maxPduLength   the largest plen accepted, bounding what one connection can make us buffer
     */
    public PduDecoder(boolean controllerSide, int maxPduLength) {
        this.controllerSide = controllerSide;
        this.maxPduLength = maxPduLength;
    }

    /** Called by the connection stage once ICReq/ICResp negotiated digests and sizes. */
    public void negotiated(boolean headerDigest, boolean dataDigest, int maxPduLength) {
        this.headerDigest = headerDigest;
        this.dataDigest = dataDigest;
        this.maxPduLength = maxPduLength;
        this.initialized = true;
    }

    /**
     * Payloads of PDUs of {@code type} go to {@code placement} as they arrive. The header is checked first (and its
     * digest); the data digest, when on, is computed over the pieces and checked before {@link DataPlacement#end}.
     */
    public void placeData(int type, DataPlacement placement) {
        this.placedType = type;
        this.placement = placement;
    }

    /** Where a data PDU's payload goes as it arrives. Each call may throw {@link PduException}: the connection fails. */
    public interface DataPlacement {
        /** The PDU's header (and any padding before its data) is at {@code header[at, at + pdo)}. */
        void begin(ByteBuf header, int at);

        /** The next {@code length} payload bytes, at {@code in[from, from + length)}; valid only during the call. */
        void data(ByteBuf in, int from, int length);

        /** The whole payload arrived (its digest checked). */
        void end();

        /**
         * The destination of the next payload bytes itself, for the socket to read into: an empty buffer of capacity at
         * most {@code length} that the caller releases, or null to have the bytes copied through {@link #data}.
         */
        default ByteBuf target(int length) {
            return null;
        }

        /** The next {@code length} payload bytes arrived in the buffer {@link #target} gave: already where they go. */
        default void placed(int length) {
            throw new IllegalStateException("no target was given");
        }
    }

    /**
     * Where the socket's next read should go: the rest of the payload being placed, when it is large, the placement
     * offers its buffer and no earlier bytes wait in the cumulation; else null (an ordinary read). Event loop only.
     */
    public ByteBuf directReadTarget() {
        if (failed || placing < DIRECT_READ_MIN || internalBuffer().isReadable()) return null;
        directRead = placement.target(placing);
        return directRead;
    }

    /**
     * True between PDUs of a stream of large placed payloads with nothing buffered: the next read should take little
     * more than a header, so that the payload after it is read in place rather than copied out of a large read.
     */
    public boolean headerReadNext() {
        return largePayloads && placing < 0 && !failed && !internalBuffer().isReadable();
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            // After a fatal error the connection is closing: nothing more is interpreted.
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            decodeFrames(in, out);
        } catch (RuntimeException e) {
            failed = true;
            throw e;
        }
    }

    private void decodeFrames(ByteBuf in, List<Object> out) {
        while (true) {
            if (placing >= 0 && !place(in)) return;
            if (in.readableBytes() < Pdu.COMMON_HEADER) return;
            int at = in.readerIndex();
            int type = Pdu.type(in, at);
            int flags = Pdu.flags(in, at);
            int hlen = Pdu.hlen(in, at);
            int pdo = Pdu.pdo(in, at);
            long plen = Pdu.plen(in, at) & 0xFFFFFFFFL;
            checkType(type);
            int expected = Pdu.expectedHlen(type);
            if (hlen != expected) {
                throw new PduException(
                        Pdu.FES_INVALID_PDU_HEADER, 2, Pdu.name(type) + " has hlen " + hlen + ", expected " + expected);
            }
            boolean digests = initialized && Pdu.carriesDigests(type);
            boolean hd = digests && headerDigest;
            if (digests && ((flags & Pdu.FLAG_HDGST) != 0) != headerDigest) {
                throw new PduException(
                        Pdu.FES_INVALID_PDU_HEADER, 1, "HDGSTF flag disagrees with the negotiated header digest");
            }
            if (digests && !dataDigest && (flags & Pdu.FLAG_DDGST) != 0) {
                throw new PduException(Pdu.FES_INVALID_PDU_HEADER, 1, "DDGSTF set but data digest was not negotiated");
            }
            int headerEnd = hlen + (hd ? Pdu.DIGEST : 0);
            if (plen < headerEnd) {
                throw new PduException(
                        Pdu.FES_INVALID_PDU_HEADER,
                        4,
                        Pdu.name(type) + " plen " + plen + " is shorter than its header");
            }
            if (plen > maxPduLength && type != Pdu.IC_REQ && type != Pdu.IC_RESP) {
                throw new PduException(
                        Pdu.FES_DATA_LIMIT_EXCEEDED,
                        4,
                        Pdu.name(type) + " plen " + plen + " exceeds the limit of " + maxPduLength);
            }
            if ((type == Pdu.IC_REQ || type == Pdu.IC_RESP) && plen != Pdu.IC_LENGTH) {
                throw new PduException(Pdu.FES_INVALID_PDU_HEADER, 4, Pdu.name(type) + " plen must be 128, is " + plen);
            }
            if ((type == Pdu.H2C_TERM_REQ || type == Pdu.C2H_TERM_REQ) && plen > Pdu.TERM_REQ_MAX_PLEN) {
                throw new PduException(
                        Pdu.FES_INVALID_PDU_HEADER, 4, Pdu.name(type) + " plen " + plen + " exceeds 152");
            }
            boolean hasData = plen > headerEnd;
            if (hasData && type != Pdu.H2C_TERM_REQ && type != Pdu.C2H_TERM_REQ) {
                if (pdo < headerEnd || pdo > plen) {
                    throw new PduException(
                            Pdu.FES_INVALID_PDU_HEADER, 3, Pdu.name(type) + " pdo " + pdo + " is outside the PDU");
                }
                boolean dd = digests && dataDigest && (flags & Pdu.FLAG_DDGST) != 0;
                if (digests && dataDigest && (flags & Pdu.FLAG_DDGST) == 0) {
                    throw new PduException(Pdu.FES_INVALID_PDU_HEADER, 1, Pdu.name(type) + " with data lacks DDGSTF");
                }
                if (plen - pdo < (dd ? Pdu.DIGEST : 0)) {
                    throw new PduException(
                            Pdu.FES_INVALID_PDU_HEADER, 4, Pdu.name(type) + " is too short for its data digest");
                }
            }
            if (type == placedType && hasData) { // checkType refused data PDUs before initialization
                // PDUs already framed go up first: their order with this one's data is the stream's.
                if (!out.isEmpty() || in.readableBytes() < pdo) return;
                if (hd) checkHeaderDigest(in, at, hlen, type);
                placingDigest = digests && dataDigest;
                placingCid = in.getUnsignedShortLE(at + Pdu.DATA_OFF_CCCID);
                placement.begin(in, at);
                in.skipBytes(pdo);
                placing = (int) plen - pdo - (placingDigest ? Pdu.DIGEST : 0);
                largePayloads = placing >= DIRECT_READ_MIN;
                otherBytes = 0;
                if (placingDigest) crc.reset();
                continue;
            }
            if (in.readableBytes() < plen) {
                // Wait for the rest; make sure the cumulation will not outgrow what we accept.
                return;
            }
            if (hd) checkHeaderDigest(in, at, hlen, type);
            if (hasData && digests && dataDigest && (flags & Pdu.FLAG_DDGST) != 0) {
                int dataLen = (int) plen - pdo - Pdu.DIGEST;
                int want = in.getIntLE(at + (int) plen - Pdu.DIGEST);
                int got = Pdu.crc32c(crc, in, at + pdo, dataLen);
                if (want != got) {
                    String what = digestMismatch("data", type, want, got);
                    if (!controllerSide) {
                        throw new DataDigestException(
                                type, in.getUnsignedShortLE(at + 8 + (type == Pdu.CAPSULE_CMD ? 2 : 0)), what);
                    }
                    // The header is sound, so the stream is not lost: the controller fails only the command the
                    // data belongs to (NVMe/TCP: a data digest error is not a fatal transport error).
                    out.add(DATA_DIGEST_ERROR);
                }
            }
            if (largePayloads && (otherBytes += (int) plen) > HEADER_READ) largePayloads = false;
            out.add(in.readRetainedSlice((int) plen));
        }
    }

    /** Hands the payload bytes at hand to the placement; true once the whole payload (and its digest) is through. */
    private boolean place(ByteBuf in) {
        int n = Math.min(placing, in.readableBytes());
        if (n > 0) {
            int from = in.readerIndex();
            if (placingDigest) Pdu.crc32cUpdate(crc, in, from, n);
            boolean inPlace =
                    in == directRead; // read there by the socket (the cumulation is that buffer when it was empty)
            directRead = null;
            if (inPlace) placement.placed(n);
            else placement.data(in, from, n);
            in.skipBytes(n);
            placing -= n;
        }
        if (placing > 0) return false;
        if (placingDigest) {
            if (in.readableBytes() < Pdu.DIGEST) return false;
            int want = in.readIntLE();
            int got = (int) crc.getValue();
            if (want != got) {
                throw new DataDigestException(placedType, placingCid, digestMismatch("data", placedType, want, got));
            }
        }
        placing = -1;
        placement.end();
        return true;
    }

    private void checkHeaderDigest(ByteBuf in, int at, int hlen, int type) {
        int want = in.getIntLE(at + hlen);
        int got = Pdu.crc32c(crc, in, at, hlen);
        if (want != got) {
            throw new PduException(Pdu.FES_HEADER_DIGEST_ERROR, 0, digestMismatch("header", type, want, got));
        }
    }

    private static String digestMismatch(String which, int type, int want, int got) {
        return String.format("%s digest mismatch on %s: got 0x%08x, computed 0x%08x", which, Pdu.name(type), want, got);
    }

    private void checkType(int type) {
        boolean ok;
        if (controllerSide) {
            ok = type == Pdu.IC_REQ || type == Pdu.CAPSULE_CMD || type == Pdu.H2C_DATA || type == Pdu.H2C_TERM_REQ;
        } else {
            ok = type == Pdu.IC_RESP
                    || type == Pdu.CAPSULE_RESP
                    || type == Pdu.C2H_DATA
                    || type == Pdu.R2T
                    || type == Pdu.C2H_TERM_REQ;
        }
        if (!ok) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER,
                    0,
                    "unexpected " + Pdu.name(type) + " from the " + (controllerSide ? "host" : "controller"));
        }
        if (!initialized
                && type != Pdu.IC_REQ
                && type != Pdu.IC_RESP
                && type != Pdu.H2C_TERM_REQ
                && type != Pdu.C2H_TERM_REQ) {
            throw new PduException(Pdu.FES_PDU_SEQUENCE_ERROR, 0, Pdu.name(type) + " before connection initialization");
        }
    }

    /**
     * On the controller side, emitted just before a PDU whose data digest did not match: the PDU follows
     * (its header is sound), and its command is to fail with Transient Transport Error.
     */
    public static final Object DATA_DIGEST_ERROR = new Object() {
        @Override
        public String toString() {
            return "DATA_DIGEST_ERROR";
        }
    };

    /** A data digest mismatch on the host side: fatal for the connection, reported with the command it belonged to. */
    public static final class DataDigestException extends RuntimeException {
        public final int pduType;
        public final int cid;

        DataDigestException(int pduType, int cid, String message) {
            super(message);
            this.pduType = pduType;
            this.cid = cid;
        }
    }
}
