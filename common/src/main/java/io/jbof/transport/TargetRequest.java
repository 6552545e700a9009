package io.jbof.transport;

import io.jbof.nvme.NvmeCommand;
import io.netty.buffer.ByteBuf;
import java.nio.channels.FileChannel;

/**
 * One command exchange on the target: the command capsule and the three verbs a transport binding
 * offers (move data to the host, move data from the host, complete). Exactly one
 * {@link #complete} ends it; the object is then reused for a later command.
 */
public interface TargetRequest {
    NvmeCommand command();

    TargetQueue queue();

    /**
     * The data length the command's SGL describes, or -1 with {@link #sglStatus()} saying why the
     * descriptor cannot be used on this transport.
     */
    int transferLength();

    /** {@code Status.SUCCESS} when the SGL is usable, otherwise the status to complete with. */
    int sglStatus();

    /** Sends {@code data} (readable bytes) to the host buffer at the transfer start. Takes ownership. */
    void sendData(ByteBuf data);

    /**
     * Sends {@code length} bytes of a file to the host buffer at the transfer start, without copying
     * them through the JVM where the transport can (sendfile on TCP).
     */
    void sendFile(FileChannel file, long position, int length);

    /**
     * Asks for the host's data; the receiver gets it in order, then {@code onComplete}. Every receiver
     * hears {@code onComplete} exactly once: when the connection ends first, with a failure status, so
     * whatever the target holds for the command is given back on every way a connection can end.
     */
    void receiveData(DataReceiver receiver);

    /**
     * A per-slot object the target attaches once and finds again on every later command that reuses
     * this request object (its per-command state, so the hot path allocates nothing).
     */
    Object attachment();

    void attach(Object attachment);

    /** Sends the completion with {@code status} and the 64-bit command-specific result (DW0, DW1). */
    void complete(int status, long result);

    /** Data from the host for one request, delivered in transfer order on the queue's thread. */
    interface DataReceiver {
        /**
         * A chunk at {@code offset} of the transfer. The chunk stays owned by the transport and is
         * valid only during the call. Returns a status; a failure stops delivery of the rest (which
         * the transport drains) and is passed to {@link #onComplete}.
         */
        int onData(ByteBuf chunk, int offset);

        /** All data arrived ({@code Status.SUCCESS}) or the transfer failed with this status. */
        void onComplete(int status);
    }
}
