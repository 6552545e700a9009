package io.jbof.target.transport.tcp;

import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.FileRegion;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.WriteBufferWaterMark;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How much a target connection may owe its host before it stops reading the host's commands, and what
 * the connections saw. A host that sends commands but never reads the answers (or reads slowly) makes
 * its own connection wait, never the target's memory grow: replies beyond the high water mark stop the
 * reading of that connection's socket until they drain below the low mark.
 */
public final class TcpBackPressure {
    /** Unsent reply bytes at which a connection stops reading commands (and at which it reads again). */
    public static final int HIGH_WATER = Tunable.TCP_WRITE_HIGH_WATER.intValue();

    public static final int LOW_WATER = Tunable.TCP_WRITE_LOW_WATER.intValue();

    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(LOW_WATER, HIGH_WATER);

    /** Counts file data sent by sendfile like copied data: both are replies the host has not taken yet. */
    static final MessageSizeEstimator SIZES = () -> msg -> {
        if (msg instanceof FileRegion) return (int) Math.min(Integer.MAX_VALUE, ((FileRegion) msg).count());
        if (msg instanceof ByteBuf) return ((ByteBuf) msg).readableBytes();
        if (msg instanceof ByteBufHolder) return ((ByteBufHolder) msg).content().readableBytes();
        return 0;
    };

    private final AtomicInteger paused = new AtomicInteger();
    private final AtomicLong pauses = new AtomicLong();
    private final AtomicLong peakUnsent = new AtomicLong();
    private final AtomicInteger open = new AtomicInteger();

    /** Connections not reading now because their host owes too much. */
    public int pausedConnections() {
        return paused.get();
    }
    /** Times any connection stopped reading. */
    public long pauses() {
        return pauses.get();
    }
    /** The most reply bytes one connection ever held unsent (it may pass the high mark by one reply). */
    public long peakUnsentBytes() {
        return peakUnsent.get();
    }
    /** Target connections open now. */
    public int openConnections() {
        return open.get();
    }

    void opened() {
        open.incrementAndGet();
    }

    void closed() {
        open.decrementAndGet();
    }

    void paused() {
        paused.incrementAndGet();
        pauses.incrementAndGet();
    }

    void resumed() {
        paused.decrementAndGet();
    }

    /** Called only when a connection's own peak rises, which stops after warm-up: no shared write per I/O. */
    void peak(long unsent) {
        peakUnsent.accumulateAndGet(unsent, Math::max);
    }
}
