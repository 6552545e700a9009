package io.jbof.initiator.queue;

import io.jbof.nvme.NvmeCommand;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * A command to submit: the SQE fields the caller sets, the data buffer, and the callback. Reusable:
 * a caller that keeps its Request objects (the benchmark does) submits without allocating.
 */
public class Request {
    public int opcode;
    public int flags = NvmeCommand.FLAGS_SGL;
    public int nsid;
    /** Fabrics command type (byte 4) when opcode is 0x7F; otherwise NSID is used. */
    public int fctype = -1;

    public final int[] cdw = new int[16];
    /** For writes: readable bytes are sent. For reads: data lands at readerIndex. */
    public ByteBuf data;

    public int dataLength;
    public boolean toController;
    /** Extra capsule bytes for Fabrics commands (offsets 40..63 are in cdw[10..15]). */
    public Callback callback;
    /** Nanoseconds; 0 takes the queue's default. */
    public long timeoutNanos;

    /** Completion: status as (DNR << 14) | (SCT << 8) | SC, the 64-bit result, or a transport error. */
    public interface Callback {
        void onComplete(Request request, int status, long result, Throwable error);
    }

    public Request reset() {
        opcode = 0;
        flags = NvmeCommand.FLAGS_SGL;
        nsid = 0;
        fctype = -1;
        Arrays.fill(cdw, 0);
        data = null;
        dataLength = 0;
        toController = false;
        timeoutNanos = 0;
        return this;
    }

    /** Writes the SQE (all but CID and data pointer) into {@code cmd}. */
    void encode(NvmeCommand cmd) {
        cmd.clear();
        cmd.opcode(opcode).flags(flags);
        if (fctype >= 0) cmd.fctype(fctype);
        else cmd.nsid(nsid);
        for (int i = 10; i < 16; i++) cmd.cdw(i, cdw[i]);
        if (cdw[2] != 0) cmd.cdw(2, cdw[2]);
        if (cdw[3] != 0) cmd.cdw(3, cdw[3]);
    }
}
