package io.jbof.nvme;

/** A command that completed with a non-success NVMe status. */
public class NvmeException extends RuntimeException {
    private final int status;

    public NvmeException(String what, int status) {
        super(what + ": " + Status.describe(status));
        this.status = status;
    }

    /** The status as (DNR << 14) | (SCT << 8) | SC. */
    public int status() {
        return status;
    }
}
