package io.jbof.target.transport.tcp;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.nvme.tls.TlsPskIdentity;
import io.jbof.transport.TargetQueue;
import io.jbof.transport.TargetQueueAcceptor;
import io.jbof.transport.TargetQueueHandler;
import io.jbof.transport.TargetRequest;
import io.jbof.transport.TransportType;
import io.jbof.transport.tcp.Pdu;
import io.jbof.transport.tcp.PduDecoder;
import io.jbof.transport.tcp.PduEncoder;
import io.jbof.transport.tcp.PduException;
import io.jbof.transport.tcp.tls.TlsPskHandler;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller end of one NVMe/TCP connection (one NVMe queue): the ICReq/ICResp exchange, command
 * capsules in, C2HData / R2T + H2CData / CapsuleResp out. Runs entirely on the channel's event loop;
 * request objects are pooled per connection and reused, so steady-state I/O allocates nothing here.
 */
public final class TcpTargetConnection extends ChannelInboundHandlerAdapter implements TargetQueue {
    private static final Logger log = LoggerFactory.getLogger(TcpTargetConnection.class);

    private final TargetQueueAcceptor acceptor;
    private final TcpTargetOptions options;
    private final PduDecoder decoder;
    private final PduEncoder encoder = new PduEncoder();
    private final Runnable flushTask = this::flushNow;

    private ChannelHandlerContext ctx;
    private TargetQueueHandler handler;
    private boolean initialized;
    /** The host's Fabrics Connect made this connection a queue. */
    private boolean bound;

    private boolean headerDigest;
    private boolean dataDigest;
    private boolean closed;
    private boolean inRead;
    private boolean flushScheduled;
    /** Responses written since the last flush while handling a read; see SEND_BUDGET. */
    private int unflushed;

    private String remote = "?";

    private int qid = -1;
    private int sqSize = 1;
    private boolean sqFlowDisabled;
    private int sqHead;

    private final TcpBackPressure backPressure;
    /** Not reading the host's PDUs: it owes us more than the high water mark of replies. */
    private boolean paused;
    /** PDUs that had been read off the socket when reading paused; handled, in order, once it resumes. */
    private final ArrayDeque<Object> held = new ArrayDeque<>();
    /** The decoder marked the next PDU: its data digest did not match. */
    private boolean dataDigestFailed;

    private long peakUnsent;
    private boolean transferWatch;
    private final Runnable checkTransfers = this::checkTransfers;

    private Request[] requests = new Request[16];
    private int requestCount;
    private int[] free = new int[16];
    private int freeCount;
    private int inFlight;
    /**
     * Reads of at least this many bytes go by sendfile; 0: none do. Read per connection, so that a test can run
     * both paths in one JVM.
     */
    private final int sendfileMin = Tunable.SENDFILE_MIN.intValue();

    public TcpTargetConnection(
            TargetQueueAcceptor acceptor, TcpTargetOptions options, PduDecoder decoder, TcpBackPressure backPressure) {
        this.acceptor = acceptor;
        this.options = options;
        this.decoder = decoder;
        this.backPressure = backPressure;
    }

    /** The largest PDU a host may send us, header digest and data digest included. */
    public static int maxHostPdu(TcpTargetOptions o) {
        int capsule = Pdu.CAPSULE_CMD_HLEN + Pdu.DIGEST + o.inCapsuleDataSize() + Pdu.DIGEST;
        int data = Pdu.DATA_HLEN + Pdu.DIGEST + o.maxH2CData() + Pdu.DIGEST;
        return Math.max(capsule, data);
    }

    // ---- TargetQueue ----

    @Override
    public EventExecutor executor() {
        return ctx.executor();
    }

    @Override
    public TransportType transport() {
        return TransportType.TCP;
    }

    @Override
    public String remoteAddress() {
        return remote;
    }

    @Override
    public TlsPskIdentity tlsIdentity() {
        return ctx == null ? null : ctx.channel().attr(TlsPskHandler.IDENTITY).get();
    }

    @Override
    public int inCapsuleDataSize() {
        return options.inCapsuleDataSize();
    }

    @Override
    public void bind(int qid, int sqSize, boolean sqFlowControlDisabled) {
        this.bound = true;
        this.qid = qid;
        this.sqSize = Math.max(1, sqSize);
        this.sqFlowDisabled = sqFlowControlDisabled;
        this.sqHead %= this.sqSize;
    }

    @Override
    public void close(String reason) {
        if (closed) return;
        log.debug("closing {} queue {}: {}", remote, qid, reason);
        flushNow();
        ctx.close();
    }

    // ---- Netty ----

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        remote = String.valueOf(ctx.channel().remoteAddress());
        backPressure.opened();
        handler = acceptor.accept(this);
        // A socket that never becomes a queue (no ICReq, or no Fabrics Connect) would hold its descriptor
        // and state for ever: no controller exists yet whose keep-alive could end it.
        ctx.executor()
                .schedule(
                        () -> {
                            if (!bound && !closed && ctx.channel().isActive()) {
                                log.warn(
                                        "{}: no {} within {} ms; closing",
                                        remote,
                                        initialized ? "Connect" : "ICReq",
                                        CONNECT_TIMEOUT_MS);
                                ctx.close();
                            }
                        },
                        CONNECT_TIMEOUT_MS,
                        TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        inRead = true;
        if (paused && !closed) {
            held.add(msg); // the decoder had these already; they wait with the socket
            return;
        }
        handle(msg);
    }

    private void handle(Object msg) {
        if (msg == PduDecoder.DATA_DIGEST_ERROR) {
            dataDigestFailed = true;
            return;
        }
        ByteBuf pdu = (ByteBuf) msg;
        try {
            if (closed) return;
            int type = Pdu.type(pdu, pdu.readerIndex());
            switch (type) {
                case Pdu.IC_REQ:
                    onIcReq(pdu);
                    break;
                case Pdu.CAPSULE_CMD:
                    onCapsule(pdu);
                    break;
                case Pdu.H2C_DATA:
                    onH2CData(pdu);
                    break;
                case Pdu.H2C_TERM_REQ:
                    onTermReq(pdu);
                    break;
                default:
                    throw new PduException(Pdu.FES_INVALID_PDU_HEADER, 0, "unexpected " + Pdu.name(type));
            }
        } finally {
            pdu.release();
        }
        if (!paused && !ctx.channel().isWritable()) pause();
    }

    /** The host owes more replies than the high water mark: read nothing more of it until they drain. */
    private void pause() {
        paused = true;
        ctx.channel().config().setAutoRead(false);
        backPressure.paused();
        log.debug("{} queue {}: {} reply bytes unsent; reading paused", remote, qid, unsent());
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (paused && ctx.channel().isWritable() && !closed) {
            paused = false;
            backPressure.resumed();
            Object msg;
            while (!paused && (msg = held.poll()) != null) handle(msg);
            if (!paused) ctx.channel().config().setAutoRead(true);
            flushNow();
        }
        ctx.fireChannelWritabilityChanged();
    }

    private long unsent() {
        ChannelOutboundBuffer b = ctx.channel().unsafe().outboundBuffer();
        return b == null ? 0 : b.totalPendingWriteBytes();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        inRead = false;
        flushNow();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        backPressure.closed();
        if (paused) {
            paused = false;
            backPressure.resumed();
        }
        Object msg;
        while ((msg = held.poll()) != null) ReferenceCountUtil.release(msg);
        // Every command still waiting for host data ends here, so whatever the target took for it (in-flight
        // budget, per-command state) comes back; completions of commands still running elsewhere only recycle.
        for (int i = 0; i < requestCount; i++) {
            Request r = requests[i];
            if (r.active) r.abort();
        }
        if (handler != null) handler.onClosed();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (c instanceof PduException) {
            PduException p = (PduException) c;
            log.warn(
                    "NVMe/TCP protocol error from {} (queue {}): {}; sending C2HTermReq FES {}",
                    remote,
                    qid,
                    p.getMessage(),
                    p.fes());
            terminate(p.fes(), p.fei());
        } else if (c instanceof IOException) {
            log.debug("connection {} failed: {}", remote, c.toString());
            ctx.close();
        } else {
            log.error("internal error on connection {} (queue {}); closing it", remote, qid, c);
            ctx.close();
        }
    }

    private void terminate(int fes, int fei) {
        if (closed) return;
        ByteBuf b = PduEncoder.termReq(ctx.alloc(), Pdu.C2H_TERM_REQ, fes, fei);
        closed = true;
        ctx.writeAndFlush(b).addListener(ChannelFutureListener.CLOSE);
    }

    // ---- inbound PDUs ----

    private void onIcReq(ByteBuf pdu) {
        int at = pdu.readerIndex();
        if (initialized) throw new PduException(Pdu.FES_PDU_SEQUENCE_ERROR, 0, "second ICReq");
        int pfv = pdu.getUnsignedShortLE(at + Pdu.IC_OFF_PFV);
        if (pfv != 0)
            throw new PduException(
                    Pdu.FES_UNSUPPORTED_PARAMETER, Pdu.IC_OFF_PFV, "unsupported PDU format version " + pfv);
        int hpda = pdu.getUnsignedByte(at + Pdu.IC_OFF_HPDA_CPDA);
        if (hpda > 31)
            throw new PduException(Pdu.FES_INVALID_PDU_HEADER, Pdu.IC_OFF_HPDA_CPDA, "HPDA " + hpda + " exceeds 31");
        int dgst = pdu.getUnsignedByte(at + Pdu.IC_OFF_DGST);
        boolean allow = options.allowDigests();
        headerDigest = allow && (dgst & Pdu.IC_DGST_HEADER) != 0;
        dataDigest = allow && (dgst & Pdu.IC_DGST_DATA) != 0;
        // HPDA asks us to align data in PDUs we send; with CPDA 0 and HPDA 0 data follows the header.
        if (hpda != 0)
            throw new PduException(
                    Pdu.FES_UNSUPPORTED_PARAMETER, Pdu.IC_OFF_HPDA_CPDA, "HPDA " + hpda + " is not supported (only 0)");

        encoder.negotiated(headerDigest, dataDigest);
        ctx.write(encoder.icResp(ctx.alloc(), options.maxH2CData()));
        initialized = true;
        decoder.negotiated(headerDigest, dataDigest, maxHostPdu(options));
        log.debug(
                "NVMe/TCP connection from {}: header digest {}, data digest {}",
                remote,
                onOff(headerDigest),
                onOff(dataDigest));
    }

    private void onTermReq(ByteBuf pdu) {
        int at = pdu.readerIndex();
        log.warn(
                "host {} terminated queue {}: H2CTermReq FES 0x{} FEI {}",
                remote,
                qid,
                Integer.toHexString(pdu.getUnsignedShortLE(at + Pdu.TERM_OFF_FES)),
                pdu.getIntLE(at + Pdu.TERM_OFF_FEI));
        closed = true;
        ctx.close();
    }

    private void onCapsule(ByteBuf pdu) {
        int at = pdu.readerIndex();
        int plen = Pdu.plen(pdu, at);
        int pdo = Pdu.pdo(pdu, at);
        int flags = Pdu.flags(pdu, at);
        int headerEnd = Pdu.CAPSULE_CMD_HLEN + (headerDigest ? Pdu.DIGEST : 0);
        int inCapsule = 0;
        if (plen > headerEnd) {
            inCapsule = plen - pdo - ((flags & Pdu.FLAG_DDGST) != 0 ? Pdu.DIGEST : 0);
        }
        Request r = acquire();
        if (r == null) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER, 0, "host exceeded the queue size: " + inFlight + " commands in flight");
        }
        r.sqe.setBytes(0, pdu, at + Pdu.COMMON_HEADER, NvmeCommand.SIZE);
        boolean corrupt = dataDigestFailed;
        dataDigestFailed = false;
        r.classify(pdu, at + pdo, corrupt ? 0 : inCapsule);
        if (sqFlowDisabled) {
            sqHead = 0;
        } else if (++sqHead >= sqSize) {
            sqHead = 0;
        }
        if (corrupt) {
            log.warn(
                    "data digest error in the capsule of {} from {} (queue {}); failing it with Transient Transport Error",
                    r.command,
                    remote,
                    qid);
            r.complete(Status.TRANSIENT_TRANSPORT_ERROR, 0); // no DNR: the host may send it again
            return;
        }
        handler.onCommand(r);
    }

    private void onH2CData(ByteBuf pdu) {
        int at = pdu.readerIndex();
        int cccid = pdu.getUnsignedShortLE(at + Pdu.DATA_OFF_CCCID);
        int ttag = pdu.getUnsignedShortLE(at + Pdu.DATA_OFF_TTAG);
        int datao = pdu.getIntLE(at + Pdu.DATA_OFF_DATAO);
        int datal = pdu.getIntLE(at + Pdu.DATA_OFF_DATAL);
        int plen = Pdu.plen(pdu, at);
        int pdo = Pdu.pdo(pdu, at);
        int flags = Pdu.flags(pdu, at);
        int carried = plen - pdo - ((flags & Pdu.FLAG_DDGST) != 0 ? Pdu.DIGEST : 0);
        if (plen <= Pdu.DATA_HLEN + (headerDigest ? Pdu.DIGEST : 0)) carried = 0;
        if (ttag >= requestCount || !requests[ttag].active || requests[ttag].receiver == null) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER, Pdu.DATA_OFF_TTAG, "H2CData with unknown transfer tag " + ttag);
        }
        Request r = requests[ttag];
        if (cccid != r.command.cid()) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER,
                    Pdu.DATA_OFF_CCCID,
                    "H2CData CCCID " + cccid + " does not match transfer tag " + ttag + " (CID " + r.command.cid()
                            + ")");
        }
        if (datal != carried || datal <= 0) {
            throw new PduException(
                    Pdu.FES_INVALID_PDU_HEADER,
                    Pdu.DATA_OFF_DATAL,
                    "H2CData DATAL " + datal + " but the PDU carries " + carried);
        }
        if (datal > options.maxH2CData()) {
            throw new PduException(
                    Pdu.FES_DATA_LIMIT_EXCEEDED, Pdu.DATA_OFF_DATAL, "H2CData DATAL " + datal + " exceeds MAXH2CDATA");
        }
        if (datao != r.received || (long) datao + datal > r.length) {
            throw new PduException(
                    Pdu.FES_DATA_OUT_OF_RANGE,
                    Pdu.DATA_OFF_DATAO,
                    "H2CData DATAO " + datao + " DATAL " + datal + " outside the expected range (next " + r.received
                            + ", length " + r.length + ")");
        }
        if (dataDigestFailed) {
            dataDigestFailed = false;
            log.warn(
                    "data digest error in H2CData for {} from {} (queue {}); failing it with Transient Transport Error",
                    r.command,
                    remote,
                    qid);
            r.fail(Status.TRANSIENT_TRANSPORT_ERROR);
        }
        r.deliver(pdu, at + pdo, datal);
    }

    // ---- stalled transfers ----

    /**
     * A host that asked to write, got its R2T and then sends nothing would hold what the command took
     * (its share of --max-inflight-bytes) for as long as it keeps its admin queue alive. One timer per
     * connection, only while some transfer waits for data, ends such a connection.
     */
    private void watchTransfers() {
        if (transferWatch || closed) return;
        transferWatch = true;
        ctx.executor().schedule(checkTransfers, DATA_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private void checkTransfers() {
        transferWatch = false;
        if (closed) return;
        long now = System.nanoTime();
        long oldest = now;
        for (int i = 0; i < requestCount; i++) {
            Request r = requests[i];
            if (!r.active || r.receiver == null) continue;
            if (now - r.lastDataNanos >= TimeUnit.MILLISECONDS.toNanos(DATA_TIMEOUT_MS)) {
                log.warn(
                        "{} queue {}: no data for the R2T of {} within {} ms; closing the connection",
                        remote,
                        qid,
                        r.command,
                        DATA_TIMEOUT_MS);
                ctx.close();
                return;
            }
            oldest = Math.min(oldest, r.lastDataNanos);
        }
        if (oldest != now) {
            transferWatch = true;
            long due = TimeUnit.MILLISECONDS.toNanos(DATA_TIMEOUT_MS) - (now - oldest);
            ctx.executor().schedule(checkTransfers, Math.max(due, 1), TimeUnit.NANOSECONDS);
        }
    }

    // ---- request pool ----

    private Request acquire() {
        if (freeCount > 0) {
            Request r = requests[free[--freeCount]];
            r.active = true;
            inFlight++;
            return r;
        }
        if (requestCount >= options.maxQueueEntries() + 1) return null;
        if (requestCount == requests.length) {
            requests = Arrays.copyOf(requests, requests.length * 2);
            free = Arrays.copyOf(free, free.length * 2);
        }
        Request r = new Request(requestCount);
        requests[requestCount++] = r;
        r.active = true;
        inFlight++;
        return r;
    }

    private void recycle(Request r) {
        r.releaseData();
        r.receiver = null;
        r.active = false;
        inFlight--;
        free[freeCount++] = r.index;
    }

    // ---- outbound ----

    private void write(Object msg) {
        ctx.write(msg, ctx.voidPromise());
        if (!ctx.channel().isWritable()) {
            long u = unsent();
            if (u > peakUnsent) {
                peakUnsent = u;
                backPressure.peak(u);
            }
        }
        if (!inRead && !flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    private void flushNow() {
        flushScheduled = false;
        unflushed = 0;
        if (ctx != null) ctx.flush();
    }

    private ByteBuf dataHeader(int type, int cid, int ttag, int offset, int length, boolean last, boolean success) {
        return encoder.dataHeader(ctx.alloc(), type, cid, ttag, offset, length, last, success);
    }

    private ByteBuf digestOf(ByteBuf data) {
        return encoder.dataDigest(ctx.alloc(), data, data.readerIndex(), data.readableBytes());
    }

    /** One command exchange; pooled by the connection, indexed by its transfer tag. */
    private final class Request implements TargetRequest {
        final int index;
        // Heap, not direct: it is only copied into and read, and it must outlive the channel for late completions.
        final ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE, NvmeCommand.SIZE);
        final NvmeCommand command = new NvmeCommand().wrap(sqe, 0);
        boolean active;
        int length;
        int sglStatus;
        ByteBuf inCapsule;
        DataReceiver receiver;
        int received;
        int receiveStatus;
        /** When the R2T went out or the last of its data came in: a transfer that stalls past DATA_TIMEOUT_MS ends the connection. */
        long lastDataNanos;

        boolean completed;
        Object attachment;

        Request(int index) {
            this.index = index;
            sqe.writerIndex(NvmeCommand.SIZE);
        }

        void classify(ByteBuf pdu, int dataAt, int inCapsuleLength) {
            completed = false;
            received = 0;
            receiveStatus = Status.SUCCESS;
            sglStatus = Status.SUCCESS;
            length = command.sglLength();
            int id = command.sglIdentifier();
            if (id == Sgl.ID_IN_CAPSULE) {
                sglStatus = Sgl.checkInCapsule(command, options.inCapsuleDataSize(), inCapsuleLength, true);
                if (sglStatus == Status.SUCCESS && length > 0) inCapsule = pdu.retainedSlice(dataAt, length);
            } else if (id == Sgl.ID_TCP_TRANSPORT) {
                if (inCapsuleLength > 0) sglStatus = Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
            } else {
                sglStatus = Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID);
            }
            if (sglStatus != Status.SUCCESS) length = -1;
        }

        /** The connection ended: a transfer that waits for host data fails, which completes the command. */
        void abort() {
            releaseData();
            DataReceiver rcv = receiver;
            if (rcv != null) {
                receiver = null;
                if (completed) recycle(this);
                else rcv.onComplete(Status.ABORTED_SQ_DELETION);
            }
        }

        void releaseData() {
            if (inCapsule != null) {
                inCapsule.release();
                inCapsule = null;
            }
        }

        @Override
        public NvmeCommand command() {
            return command;
        }

        @Override
        public TargetQueue queue() {
            return TcpTargetConnection.this;
        }

        @Override
        public int transferLength() {
            return length;
        }

        @Override
        public int sglStatus() {
            return sglStatus;
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void attach(Object a) {
            attachment = a;
        }

        @Override
        public void sendData(ByteBuf data) {
            if (closed) {
                data.release();
                return;
            }
            int n = data.readableBytes();
            write(dataHeader(Pdu.C2H_DATA, command.cid(), 0, 0, n, true, false));
            ByteBuf digest = dataDigest ? digestOf(data) : null;
            write(data);
            if (digest != null) write(digest);
        }

        @Override
        public void sendFile(FileChannel file, long position, int n) {
            if (closed) return;
            if (dataDigest || sendfileMin == 0 || n < sendfileMin) {
                // The digest needs the bytes; and a read copied behind its header leaves in one writev, where
                // header + sendfile are two syscalls and two segments (two wake-ups of the host).
                ByteBuf data = ctx.alloc().directBuffer(n);
                try {
                    int got = 0;
                    while (got < n) {
                        int r = data.writeBytes(file, position + got, n - got);
                        if (r < 0) break;
                        got += r;
                    }
                    if (got < n) data.writeZero(n - got);
                } catch (IOException e) {
                    data.release();
                    throw new UncheckedIOException(e);
                }
                sendData(data);
                return;
            }
            write(dataHeader(Pdu.C2H_DATA, command.cid(), 0, 0, n, true, false));
            write(new FileSlice(file, position, n));
        }

        @Override
        public void receiveData(DataReceiver r) {
            if (inCapsule != null || length == 0) {
                int status = length == 0 ? Status.SUCCESS : r.onData(inCapsule, 0);
                releaseData();
                r.onComplete(status);
                return;
            }
            receiver = r;
            received = 0;
            if (closed) return;
            lastDataNanos = System.nanoTime();
            watchTransfers();
            write(dataHeader(Pdu.R2T, command.cid(), index, 0, length, false, false));
        }

        /** The transfer fails with {@code status}; the rest of its data is only drained. */
        void fail(int status) {
            if (receiveStatus == Status.SUCCESS) receiveStatus = status;
        }

        void deliver(ByteBuf pdu, int at, int n) {
            lastDataNanos = System.nanoTime();
            if (receiveStatus == Status.SUCCESS) {
                int s = receiver.onData(pdu.slice(at, n), received);
                if (s != Status.SUCCESS) receiveStatus = s;
            }
            received += n;
            if (received == length) {
                DataReceiver rcv = receiver;
                receiver = null;
                if (completed) {
                    recycle(this); // completed early; the tail of the data only had to be drained
                } else {
                    rcv.onComplete(receiveStatus);
                }
            }
        }

        @Override
        public void complete(int status, long result) {
            if (completed) throw new IllegalStateException("command completed twice: " + command);
            completed = true;
            if (handler != null) handler.onCompleted(this, status);
            if (!closed) {
                ByteBuf b = encoder.capsuleResp(ctx.alloc());
                NvmeCompletion.write(b, Pdu.COMMON_HEADER, result, sqHead, Math.max(qid, 0), command.cid(), status);
                write(encoder.sealCapsuleResp(b));
                if (inRead && ++unflushed == SEND_BUDGET) flushNow();
            }
            if (receiver == null || closed) recycle(this);
        }
    }

    /**
     * Responses sent while one read's commands are still being handled: the host starts on them while the
     * rest run here, instead of both ends taking turns at whole batches (nvmet-tcp's send budget, 8).
     */
    static final int SEND_BUDGET = Tunable.TCP_SEND_BUDGET.intValue();
    /** Bound on the time from accepting a connection to its Fabrics Connect (ICReq included). */
    static final long CONNECT_TIMEOUT_MS = Tunable.TCP_CONNECT_TIMEOUT_MS.longValue();
    /** Bound on the wait for a host's data after an R2T (or between its H2CData PDUs). */
    static final long DATA_TIMEOUT_MS = Tunable.TCP_DATA_TIMEOUT_MS.longValue();

    static String onOff(boolean on) {
        return on ? "on" : "off";
    }
}
