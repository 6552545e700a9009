package io.jbof.transport;

import io.jbof.nvme.NvmeCompletion;
import io.netty.buffer.ByteBuf;

/**
 * A command as the host transport sees it: the initiator fills the 64-byte capsule (all but the
 * data pointer, which the transport writes), and names the data buffer and direction.
 */
public interface HostCommand {
    /** The capsule, 64 readable bytes at its reader index. */
    ByteBuf capsule();

    /** The data buffer: readable bytes for writes; for reads, writable region starting at readerIndex. Null without data. */
    ByteBuf data();

    int dataLength();

    boolean dataToController();

    /**
     * Data bytes the transport has moved for this command since it was sent: its own counter, kept with
     * the command so a transfer can be checked whole without a lookup (a controller that reports success
     * after a short transfer must not leave stale bytes in the buffer).
     */
    int transferred();

    void transferred(int bytes);

    /** The completion arrived (called on the connection's thread). */
    void onCompletion(NvmeCompletion completion);
}
