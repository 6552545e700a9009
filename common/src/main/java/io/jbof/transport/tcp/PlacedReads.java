package io.jbof.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * A connection's socket reads: ordinary ones from {@link EventLoops#receiveBuffers()}, except that while its
 * {@link PduDecoder} is in the middle of a large payload the read goes straight into the buffer the payload is
 * for ({@link PduDecoder#directReadTarget()}), as Linux's nvme-tcp host copies from the socket into the request's
 * pages. Only for connections whose socket bytes are the PDUs themselves (no TLS).
 */
public final class PlacedReads implements RecvByteBufAllocator {
    private final PduDecoder decoder;
    private final RecvByteBufAllocator ordinary = EventLoops.receiveBuffers();

    public PlacedReads(PduDecoder decoder) {
        this.decoder = decoder;
    }

    @Override
    public Handle newHandle() {
        return new PlacingHandle((ExtendedHandle) ordinary.newHandle());
    }

    /** Netty's adaptive handle for everything but the buffer of the next read. */
    private final class PlacingHandle implements ExtendedHandle {
        private final ExtendedHandle delegate;

        PlacingHandle(ExtendedHandle delegate) {
            this.delegate = delegate;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf target = decoder.directReadTarget();
            if (target != null) return target;
            return decoder.headerReadNext() ? alloc.ioBuffer(PduDecoder.HEADER_READ) : delegate.allocate(alloc);
        }

        @Override
        public int guess() {
            return delegate.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            delegate.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            delegate.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            delegate.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return delegate.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            delegate.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return delegate.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return delegate.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            delegate.readComplete();
        }
    }
}
