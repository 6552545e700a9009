package io.jbof.initiator.transport.tcp;

import io.jbof.nvme.NvmeCompletion;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.PduEncoder;
import io.jbof.transport.tcp.PduException;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host end of one NVMe/TCP connection: ICReq/ICResp, then command capsules out (with in-capsule
 * data for small writes), C2HData placed into the command's buffer as it arrives (the decoder hands the
 * payload over piece by piece), R2T answered with H2CData slices of the caller's buffer (no copy),
 * CapsuleResp handed to the queue logic.
 */
public final class TcpHostConnection extends ChannelInboundHandlerAdapter implements HostConnection {
    private static final Logger log = LoggerFactory.getLogger(TcpHostConnection.class);
    /** Largest C2HData payload we buffer for one PDU; data PDUs are bounded by the command's length anyway. */
    static final int MAX_CONTROLLER_PDU = 8 * 1024 * 1024;
    /**
     * Commands a burst writes before it flushes the first of them: the target starts on those while the
     * rest are still being encoded here, instead of both ends taking turns at whole batches.
     */
    static final int SEND_BUDGET = Tunable.TCP_SEND_BUDGET.intValue();

    private final Listener listener;
    private final PduDecoder decoder;
    private final boolean wantHeaderDigest;
    private final boolean wantDataDigest;
    private final CompletableFuture<HostConnection> ready;
    private final PduEncoder encoder = new PduEncoder();
    private final ByteBuf syntheticCqe = Unpooled.buffer(NvmeCompletion.SIZE, NvmeCompletion.SIZE);
    private final NvmeCompletion completion = new NvmeCompletion();
    private final C2HDataPlacement c2hData = new C2HDataPlacement();

    private ChannelHandlerContext ctx;
    private boolean headerDigest;
    private boolean dataDigest;
    private int maxH2CData;
    /** Admin-queue data (Connect's 1024 bytes) goes in-capsule as Linux sends it; I/O queues take the controller's IOCCSZ before their Connect. */
    private int inCapsuleDataSize = Pdu.ADMIN_IN_CAPSULE_DATA;

    private boolean open;
    /** Capsules written since the last flush; see SEND_BUDGET. */
    private int unflushed;

    private Throwable failure;

    TcpHostConnection(
            Listener listener,
            PduDecoder decoder,
            boolean headerDigest,
            boolean dataDigest,
            CompletableFuture<HostConnection> ready) {
        this.listener = listener;
        this.decoder = decoder;
        this.wantHeaderDigest = headerDigest;
        this.wantDataDigest = dataDigest;
        this.ready = ready;
        syntheticCqe.writerIndex(NvmeCompletion.SIZE);
        decoder.placeData(Pdu.C2H_DATA, c2hData);
    }

    @Override
    public EventExecutor executor() {
        return ctx.executor();
    }

    @Override
    public void inCapsuleDataSize(int bytes) {
        this.inCapsuleDataSize = bytes;
    }

    @Override
    public boolean isOpen() {
        return open && ctx.channel().isActive();
    }

    @Override
    public void flush() {
        unflushed = 0;
        ctx.flush();
    }

    @Override
    public void close() {
        if (ctx != null) ctx.close();
    }

    public boolean headerDigest() {
        return headerDigest;
    }

    public boolean dataDigest() {
        return dataDigest;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(PduEncoder.icReq(ctx.alloc(), wantHeaderDigest, wantDataDigest));
    }

    @Override
    public void send(HostCommand cmd) {
        ByteBuf capsule = cmd.capsule();
        int base = capsule.readerIndex();
        int len = cmd.dataLength();
        cmd.transferred(0);
        boolean inline = cmd.dataToController() && len > 0 && len <= inCapsuleDataSize;
        Sgl.write(capsule, base, 0, len, inline ? Sgl.ID_IN_CAPSULE : Sgl.ID_TCP_TRANSPORT);
        ctx.write(encoder.capsuleCmd(ctx.alloc(), capsule, base, inline ? len : 0), ctx.voidPromise());
        if (inline) {
            ByteBuf data = cmd.data();
            writeData(data.retainedSlice(data.readerIndex(), len));
        }
        if (++unflushed == SEND_BUDGET) flush();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf pdu = (ByteBuf) msg;
        try {
            int at = pdu.readerIndex();
            switch (Pdu.type(pdu, at)) {
                case Pdu.IC_RESP:
                    onIcResp(pdu, at);
                    break;
                case Pdu.CAPSULE_RESP:
                    onResponse(pdu, at);
                    break;
                case Pdu.C2H_DATA: // one without data; those with data are placed as they arrive
                    c2hData.begin(pdu, at);
                    c2hData.end();
                    break;
                case Pdu.R2T:
                    onR2T(pdu, at);
                    break;
                case Pdu.C2H_TERM_REQ:
                    failure = new IOException(String.format(
                            "the controller terminated the connection: C2HTermReq FES 0x%x FEI %d",
                            pdu.getUnsignedShortLE(at + Pdu.TERM_OFF_FES), pdu.getIntLE(at + Pdu.TERM_OFF_FEI)));
                    log.warn(failure.getMessage());
                    ctx.close();
                    break;
                default:
                    throw new PduException(Pdu.FES_INVALID_PDU_HEADER, 0, "unexpected " + Pdu.name(Pdu.type(pdu, at)));
            }
        } finally {
            pdu.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flush();
    }

    private void onIcResp(ByteBuf pdu, int at) {
        if (open) throw new PduException(Pdu.FES_PDU_SEQUENCE_ERROR, 0, "second ICResp");
        int pfv = pdu.getUnsignedShortLE(at + Pdu.IC_OFF_PFV);
        int cpda = pdu.getUnsignedByte(at + Pdu.IC_OFF_HPDA_CPDA);
        int dgst = pdu.getUnsignedByte(at + Pdu.IC_OFF_DGST);
        int maxData = pdu.getIntLE(at + Pdu.IC_OFF_MAXR2T_MAXDATA);
        if (pfv != 0) throw new PduException(Pdu.FES_UNSUPPORTED_PARAMETER, Pdu.IC_OFF_PFV, "controller PFV " + pfv);
        if (cpda > 31) throw new PduException(Pdu.FES_INVALID_PDU_HEADER, Pdu.IC_OFF_HPDA_CPDA, "CPDA " + cpda);
        if (maxData < 4096 || maxData % 4 != 0) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER, Pdu.IC_OFF_MAXR2T_MAXDATA, "MAXH2CDATA " + maxData + " is invalid");
        }
        headerDigest = (dgst & Pdu.IC_DGST_HEADER) != 0;
        dataDigest = (dgst & Pdu.IC_DGST_DATA) != 0;
        encoder.negotiated(headerDigest, dataDigest);
        if (headerDigest && !wantHeaderDigest || dataDigest && !wantDataDigest) {
            throw new PduException(
                    Pdu.FES_UNSUPPORTED_PARAMETER,
                    Pdu.IC_OFF_DGST,
                    "the controller enabled a digest we did not ask for");
        }
        maxH2CData = maxData;
        decoder.negotiated(headerDigest, dataDigest, MAX_CONTROLLER_PDU);
        log.debug(
                "NVMe/TCP connection to {}: header digest {}, data digest {}, MAXH2CDATA {}",
                ctx.channel().remoteAddress(),
                headerDigest ? "on" : "off",
                dataDigest ? "on" : "off",
                maxData);
        open = true;
        ready.complete(this);
    }

    private HostCommand commandFor(int cid, String what) {
        HostCommand cmd = listener.lookup(cid);
        if (cmd == null) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER,
                    Pdu.DATA_OFF_CCCID,
                    what + " for CID " + cid + ", which is not in flight");
        }
        return cmd;
    }

    private void onResponse(ByteBuf pdu, int at) {
        completion.wrap(pdu, at + Pdu.COMMON_HEADER);
        HostCommand cmd = commandFor(completion.cid(), "CapsuleResp");
        if (completion.status() == Status.SUCCESS && shortRead(cmd)) {
            completeShort(cmd, completion.cid(), "CapsuleResp");
            return;
        }
        cmd.onCompletion(completion);
    }

    /** A read whose data did not all arrive: success would hand stale buffer bytes to the caller. */
    private static boolean shortRead(HostCommand cmd) {
        return !cmd.dataToController() && cmd.data() != null && cmd.transferred() != cmd.dataLength();
    }

    private void completeShort(HostCommand cmd, int cid, String what) {
        log.warn(
                "{}: the controller reported success ({}) for CID {} after {} of its {} data bytes; failing it with Data Transfer Error",
                ctx.channel().remoteAddress(),
                what,
                cid,
                cmd.transferred(),
                cmd.dataLength());
        syntheticCqe.setZero(0, NvmeCompletion.SIZE);
        NvmeCompletion.write(syntheticCqe, 0, 0, 0, 0, cid, Status.dnr(Status.DATA_TRANSFER_ERROR));
        cmd.onCompletion(completion.wrap(syntheticCqe, 0));
    }

    /**
     * C2HData checked at its header, then its payload copied into the command's buffer piece by piece, or read there
     * by the socket itself ({@link #target}).
     */
    private final class C2HDataPlacement implements PduDecoder.DataPlacement {
        private HostCommand cmd;
        private int cid;
        private int flags;
        private int next;
        private int end;

        @Override
        public void begin(ByteBuf pdu, int at) {
            cid = pdu.getUnsignedShortLE(at + Pdu.DATA_OFF_CCCID);
            int datao = pdu.getIntLE(at + Pdu.DATA_OFF_DATAO);
            int datal = pdu.getIntLE(at + Pdu.DATA_OFF_DATAL);
            flags = Pdu.flags(pdu, at);
            int pdo = Pdu.pdo(pdu, at);
            int carried = Pdu.plen(pdu, at) - pdo - ((flags & Pdu.FLAG_DDGST) != 0 ? Pdu.DIGEST : 0);
            cmd = commandFor(cid, "C2HData");
            if (cmd.dataToController() || cmd.data() == null) {
                throw new PduException(
                        Pdu.FES_INVALID_PDU_HEADER,
                        Pdu.DATA_OFF_CCCID,
                        "C2HData for CID " + cid + ", which reads no data");
            }
            if (datal != carried || datal < 0 || datao < 0 || (long) datao + datal > cmd.dataLength()) {
                throw new PduException(
                        Pdu.FES_DATA_OUT_OF_RANGE,
                        Pdu.DATA_OFF_DATAO,
                        "C2HData DATAO " + datao + " DATAL " + datal + " outside the " + cmd.dataLength()
                                + "-byte buffer of CID " + cid);
            }
            if (datao != cmd.transferred()) {
                // Data of one command comes in order, each PDU where the last ended: a gap or overlap is no transfer
                // we can check.
                throw new PduException(
                        Pdu.FES_DATA_OUT_OF_RANGE,
                        Pdu.DATA_OFF_DATAO,
                        "C2HData DATAO " + datao + " for CID " + cid + " where " + cmd.transferred()
                                + " bytes had arrived");
            }
            next = cmd.data().readerIndex() + datao;
            end = datao + datal;
        }

        @Override
        public void data(ByteBuf in, int from, int length) {
            cmd.data().setBytes(next, in, from, length);
            next += length;
        }

        @Override
        public ByteBuf target(int length) {
            ByteBuf d = cmd.data();
            // The socket writes by address: a heap buffer keeps the copy.
            return d.hasMemoryAddress() ? d.retainedSlice(next, length).clear() : null;
        }

        @Override
        public void placed(int length) {
            next += length;
        }

        @Override
        public void end() {
            HostCommand done = cmd;
            cmd = null;
            done.transferred(end);
            if ((flags & Pdu.FLAG_SUCCESS) == 0) return;
            if ((flags & Pdu.FLAG_LAST_PDU) == 0) {
                throw new PduException(Pdu.FES_INVALID_PDU_HEADER, 1, "C2HData SUCCESS without LAST_PDU");
            }
            if (shortRead(done)) {
                completeShort(done, cid, "C2HData SUCCESS");
                return;
            }
            syntheticCqe.setZero(0, NvmeCompletion.SIZE);
            NvmeCompletion.write(syntheticCqe, 0, 0, 0, 0, cid, 0);
            done.onCompletion(completion.wrap(syntheticCqe, 0));
        }
    }

    private void onR2T(ByteBuf pdu, int at) {
        int cid = pdu.getUnsignedShortLE(at + Pdu.DATA_OFF_CCCID);
        int ttag = pdu.getUnsignedShortLE(at + Pdu.DATA_OFF_TTAG);
        int r2to = pdu.getIntLE(at + Pdu.DATA_OFF_DATAO);
        int r2tl = pdu.getIntLE(at + Pdu.DATA_OFF_DATAL);
        HostCommand cmd = commandFor(cid, "R2T");
        if (!cmd.dataToController() || r2tl <= 0 || r2to < 0 || (long) r2to + r2tl > cmd.dataLength()) {
            throw new PduException(
                    Pdu.FES_DATA_OUT_OF_RANGE,
                    Pdu.DATA_OFF_DATAO,
                    "R2T offset " + r2to + " length " + r2tl + " outside the " + cmd.dataLength()
                            + "-byte write of CID " + cid);
        }
        ByteBuf data = cmd.data();
        int off = r2to;
        int end = r2to + r2tl;
        while (off < end) {
            int n = Math.min(maxH2CData, end - off);
            boolean last = off + n == end;
            ctx.write(encoder.dataHeader(ctx.alloc(), Pdu.H2C_DATA, cid, ttag, off, n, last, false), ctx.voidPromise());
            writeData(data.retainedSlice(data.readerIndex() + off, n));
            off += n;
        }
    }

    /** Data after its header: the slice (ownership passes to the channel), then its digest when on. */
    private void writeData(ByteBuf slice) {
        ByteBuf digest =
                dataDigest ? encoder.dataDigest(ctx.alloc(), slice, slice.readerIndex(), slice.readableBytes()) : null;
        ctx.write(slice, ctx.voidPromise());
        if (digest != null) ctx.write(digest, ctx.voidPromise());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        open = false;
        syntheticCqe.release();
        IOException cause = failure instanceof IOException
                ? (IOException) failure
                : new IOException(
                        "connection to " + ctx.channel().remoteAddress() + " closed"
                                + (ready.isDone()
                                                || failure != null
                                                || ctx.pipeline().get("tls") != null
                                        ? ""
                                        : " before its ICResp (a target that requires TLS closes plain connections: give --tls-key)"),
                        failure);
        if (!ready.isDone()) ready.completeExceptionally(cause);
        listener.onClosed(cause);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (failure == null) failure = c;
        if (c instanceof PduException) {
            PduException p = (PduException) c;
            log.warn(
                    "NVMe/TCP protocol error from controller {}: {}; sending H2CTermReq",
                    ctx.channel().remoteAddress(),
                    p.getMessage());
            ctx.writeAndFlush(PduEncoder.termReq(ctx.alloc(), Pdu.H2C_TERM_REQ, p.fes(), p.fei()))
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            log.debug("host connection to {} failed: {}", ctx.channel().remoteAddress(), c.toString());
            ctx.close();
        }
    }
}
