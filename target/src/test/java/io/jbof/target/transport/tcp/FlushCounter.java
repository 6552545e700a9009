package io.jbof.target.transport.tcp;

import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.util.ArrayList;
import java.util.List;

/** Sits at the socket end of a pipeline and records how many PDUs of one type left in each flush. */
final class FlushCounter extends ChannelOutboundHandlerAdapter {
    private final int type;
    private int pending;
    /** PDUs of the type per flush, flushes that carried none left out. */
    final List<Integer> batches = new ArrayList<>();

    FlushCounter(int type) {
        this.type = type;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf b && b.readableBytes() >= Pdu.COMMON_HEADER && Pdu.type(b, b.readerIndex()) == type)
            pending++;
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (pending > 0) batches.add(pending);
        pending = 0;
        ctx.flush();
    }
}
