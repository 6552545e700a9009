package io.jbof.transport.tcp.tls;

import io.jbof.nvme.tls.TlsPskIdentity;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.FileRegion;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsProtocol;
import org.bouncycastle.tls.TlsServerProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS 1.3 with an NVMe pre-shared key under the NVMe/TCP PDUs (NVMe/TCP transport 3.6): the first stage
 * of the pipeline, driving BouncyCastle's non-blocking TLS engine. The stages above see channelActive
 * only once the handshake is done, so a host sends its ICReq, and a target accepts a queue, over the
 * secured channel and never before.
 *
 * <p>Plaintext written between flushes is gathered into one staging array and sealed into full-size
 * records at flush: a PDU header and its data leave in one record, not one record each. File regions
 * (the target's zero-copy reads) are read into the staging array: TLS needs the bytes.
 *
 * <p>A target in {@link TlsMode#OPTIONAL} looks at the first byte: a TLS handshake record (0x16) starts
 * TLS, anything else (an ICReq starts with 0x00) removes this stage, as Linux's nvmet does with
 * {@code treq not required}.
 */
public final class TlsPskHandler extends ChannelDuplexHandler {
    /** The PSK identity the peer authenticated with, set on the channel when the handshake completes. */
    public static final AttributeKey<TlsPskIdentity> IDENTITY = AttributeKey.valueOf("jbof.tls.identity");

    private static final Logger log = LoggerFactory.getLogger(TlsPskHandler.class);
    private static final int RECORD = 16 * 1024;
    private static final int HANDSHAKE_RECORD = 0x16;
    /** A peer that neither completes nor fails the handshake in this time is dropped (it holds a socket and a loop's state). */
    private static final long HANDSHAKE_TIMEOUT_MS = Tunable.TLS_HANDSHAKE_TIMEOUT_MS.longValue();

    private final boolean client;
    private final TlsMode mode;
    private final TlsProtocol protocol;
    private final TlsPskPeer peer;
    private final byte[] in = new byte[RECORD + 512];
    private final byte[] staging = new byte[RECORD];
    private final List<ChannelPromise> pending = new ArrayList<>(4);
    private int staged;
    private boolean started;
    private boolean active;
    private boolean failed;
    private ChannelHandlerContext ctx;

    private TlsPskHandler(boolean client, TlsMode mode, TlsPskPeer peer) {
        this.client = client;
        this.mode = mode;
        this.peer = peer;
        this.protocol = client ? new TlsClientProtocol() : new TlsServerProtocol();
    }

    /** The host end: offers the one identity and PSK it was configured with. */
    public static TlsPskHandler client(TlsPskClientPeer peer) {
        return new TlsPskHandler(true, TlsMode.REQUIRED, peer);
    }

    /** The target end: picks the offered identity it has a key for. */
    public static TlsPskHandler server(TlsMode mode, TlsPskServerPeer peer) {
        if (mode == TlsMode.OFF) throw new IllegalArgumentException("no TLS stage when TLS is off");
        return new TlsPskHandler(false, mode, peer);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ctx.executor()
                .schedule(
                        () -> {
                            if (!active
                                    && !failed
                                    && ctx.channel().isActive()
                                    && ctx.pipeline().get(TlsPskHandler.class) == this) {
                                failed = true;
                                log.warn(
                                        "{}: no TLS handshake within {} ms; closing",
                                        ctx.channel().remoteAddress(),
                                        HANDSHAKE_TIMEOUT_MS);
                                if (client)
                                    ctx.fireExceptionCaught(new TlsHandshakeException("TLS handshake with "
                                            + ctx.channel().remoteAddress() + " did not complete within "
                                            + HANDSHAKE_TIMEOUT_MS + " ms"));
                                ctx.close();
                            }
                        },
                        HANDSHAKE_TIMEOUT_MS,
                        TimeUnit.MILLISECONDS);
        if (client) start();
    }

    private void start() throws IOException {
        started = true;
        if (client) ((TlsClientProtocol) protocol).connect((TlsPskClientPeer) peer);
        else ((TlsServerProtocol) protocol).accept((TlsPskServerPeer) peer);
        writeOutput(null);
        ctx.flush();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf b = (ByteBuf) msg;
        try {
            if (failed) return;
            if (!started) {
                if (b.isReadable() && b.getUnsignedByte(b.readerIndex()) != HANDSHAKE_RECORD) {
                    if (mode == TlsMode.OPTIONAL) {
                        // TLS optional and the host speaks plain NVMe/TCP: step aside.
                        log.debug(
                                "{}: plain NVMe/TCP (TLS optional)",
                                ctx.channel().remoteAddress());
                        // Out of the pipeline first, so the ICResp written in answer does not pass through here;
                        // this context still forwards to the stages above.
                        ctx.pipeline().remove(this);
                        ctx.fireChannelActive();
                        ctx.fireChannelRead(b.retain());
                        return;
                    }
                    failed = true;
                    log.warn(
                            "{}: plain NVMe/TCP refused: this port requires TLS (the host needs its TLS PSK, e.g. nvme connect --tls)",
                            ctx.channel().remoteAddress());
                    ctx.close();
                    return;
                }
                start();
                if (!client) {
                    int n = Math.min(b.readableBytes(), in.length);
                    b.getBytes(b.readerIndex(), in, 0, n);
                    ((TlsPskServerPeer) peer).peekClientHello(in, 0, n);
                }
            }
            while (b.isReadable()) {
                int n = Math.min(b.readableBytes(), in.length);
                b.readBytes(in, 0, n);
                protocol.offerInput(in, 0, n);
            }
            writeOutput(null);
            ctx.flush();
            if (!active && protocol.isConnected() && !protocol.isHandshaking()) {
                active = true;
                TlsPskIdentity id = peer.identity();
                ctx.channel().attr(IDENTITY).set(id);
                log.info(
                        "{}: TLS 1.3 established with PSK identity {}",
                        ctx.channel().remoteAddress(),
                        id);
                ctx.fireChannelActive();
            }
            deliverInput();
            if (protocol.isClosed()) ctx.close();
        } catch (IOException e) {
            fail(e);
        } finally {
            b.release();
        }
    }

    private void deliverInput() {
        int n;
        while ((n = protocol.getAvailableInputBytes()) > 0) {
            ByteBuf out = ctx.alloc().buffer(n);
            int got = protocol.readInput(out.internalNioBuffer(out.writerIndex(), n), n);
            out.writerIndex(out.writerIndex() + got);
            ctx.fireChannelRead(out);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (active) ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (failed || !active) {
            ReferenceCountUtil.release(msg);
            promise.tryFailure(new IOException("TLS channel is not established"));
            return;
        }
        try {
            if (msg instanceof ByteBuf) {
                ByteBuf b = (ByteBuf) msg;
                while (b.isReadable()) {
                    int n = Math.min(b.readableBytes(), staging.length - staged);
                    b.readBytes(staging, staged, n);
                    staged += n;
                    if (staged == staging.length) seal();
                }
            } else if (msg instanceof FileRegion) {
                FileRegion r = (FileRegion) msg;
                while (r.transferred() < r.count()) {
                    if (r.transferTo(stagingSink, r.transferred()) <= 0 && staged < staging.length) {
                        throw new IOException(
                                "file region ended early at " + r.transferred() + " of " + r.count() + " bytes");
                    }
                    if (staged == staging.length) seal();
                }
            } else {
                throw new IllegalArgumentException(
                        "TLS stage cannot send " + msg.getClass().getSimpleName());
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
        if (!promise.isVoid()) pending.add(promise);
    }

    /** Where file regions are read to: the staging array, up to its end (then the caller seals). */
    private final WritableByteChannel stagingSink = new WritableByteChannel() {
        @Override
        public int write(ByteBuffer src) {
            int n = Math.min(src.remaining(), staging.length - staged);
            src.get(staging, staged, n);
            staged += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    };

    private void seal() throws IOException {
        if (staged == 0) return;
        protocol.writeApplicationData(staging, 0, staged);
        staged = 0;
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        if (active && !failed) {
            try {
                seal();
                writeOutput(pending.isEmpty() ? null : List.copyOf(pending));
                pending.clear();
            } catch (IOException e) {
                fail(e);
                return;
            }
        }
        ctx.flush();
    }

    /** Moves the engine's sealed records to the socket; the promises complete with that write. */
    private void writeOutput(List<ChannelPromise> promises) {
        int n = protocol.getAvailableOutputBytes();
        if (n == 0) {
            if (promises != null) promises.forEach(ChannelPromise::trySuccess);
            return;
        }
        ByteBuf out = ctx.alloc().directBuffer(n);
        int got = protocol.readOutput(out.internalNioBuffer(out.writerIndex(), n), n);
        out.writerIndex(out.writerIndex() + got);
        if (promises == null) {
            ctx.write(out, ctx.voidPromise());
        } else {
            ctx.write(out)
                    .addListener(f -> promises.forEach(p -> {
                        if (f.isSuccess()) p.trySuccess();
                        else p.tryFailure(f.cause());
                    }));
        }
    }

    private void fail(IOException e) {
        if (failed) return;
        failed = true;
        writeOutput(null); // the alert, if the engine raised one
        String what = active ? "TLS error" : "TLS handshake failed";
        String why = e instanceof TlsFatalAlert
                ? AlertDescription.getText(((TlsFatalAlert) e).getAlertDescription())
                : e.getMessage();
        String detail = peer.failureDetail();
        String message = what + " with " + ctx.channel().remoteAddress() + ": " + why
                + (detail == null ? "" : " (" + detail + ")");
        IOException cause = active ? new IOException(message, e) : new TlsHandshakeException(message, e);
        log.warn("{}", cause.getMessage());
        if (client || active) ctx.fireExceptionCaught(cause);
        ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(f -> ctx.close());
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        if (active && !failed && !protocol.isClosed()) {
            try {
                seal();
                protocol.close(); // close_notify
                writeOutput(null);
                ctx.flush();
            } catch (IOException e) {
                log.debug("close_notify to {} not sent: {}", ctx.channel().remoteAddress(), e.getMessage());
            }
        }
        ctx.close(promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        pending.forEach(p -> p.tryFailure(new IOException("connection closed")));
        pending.clear();
        if (!active && !failed && started) {
            String detail = peer.failureDetail();
            IOException cause = new TlsHandshakeException(
                    "connection to " + ctx.channel().remoteAddress() + " closed during the TLS handshake"
                            + (detail == null
                                    ? " (does the peer have a matching PSK for this host and subsystem?)"
                                    : " (" + detail + ")"));
            log.warn("{}", cause.getMessage());
            if (client) ctx.fireExceptionCaught(cause);
        }
        // A target stage above that never saw channelActive has nothing to tear down.
        if (client || active) ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (client || active) ctx.fireExceptionCaught(cause);
        else {
            log.debug("{}: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }
}
