package io.jbof.fuse;

import io.jbof.fuse.kernel.FuseAbi;
import io.jbof.nvme.NvmeException;
import io.jbof.nvme.Status;

/** What a failed NVMe command means to a POSIX caller. */
final class ErrnoMapping {
    private ErrnoMapping() {}

    /** A positive errno for a failure: write protection is EROFS, out of range ENOSPC, everything else EIO. */
    static int of(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof NvmeException) {
                int sc = ((NvmeException) c).status() & 0x7FF;
                if (sc == Status.NAMESPACE_WRITE_PROTECTED) return FuseAbi.EROFS;
                if (sc == Status.LBA_OUT_OF_RANGE || sc == Status.CAPACITY_EXCEEDED) return FuseAbi.ENOSPC;
                return FuseAbi.EIO;
            }
        }
        return FuseAbi.EIO;
    }
}
