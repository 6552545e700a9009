package io.jbof.initiator;

import io.jbof.initiator.queue.Request;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** A Request whose completion is a CompletableFuture of the 64-bit result (or an NvmeException). */
final class FutureRequest extends Request implements Request.Callback {
    final CompletableFuture<Long> future = new CompletableFuture<>();
    private final String what;

    FutureRequest(String what) {
        this.what = what;
        this.callback = this;
    }

    @Override
    public void onComplete(Request request, int status, long result, Throwable error) {
        if (error != null) {
            future.completeExceptionally(
                    error instanceof IOException
                            ? error
                            : new IOException(what + " failed: " + error.getMessage(), error));
        } else if (!Status.isSuccess(status)) {
            future.completeExceptionally(new NvmeException(what, status));
        } else {
            future.complete(result);
        }
    }

    static FutureRequest io(String what, int opcode, int nsid) {
        FutureRequest r = new FutureRequest(what);
        r.opcode = opcode;
        r.nsid = nsid;
        return r;
    }

    static FutureRequest fabrics(String what, int fctype) {
        FutureRequest r = new FutureRequest(what);
        r.opcode = Opcodes.FABRICS;
        r.fctype = fctype;
        return r;
    }
}
