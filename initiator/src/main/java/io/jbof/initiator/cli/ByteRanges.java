package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;
import io.jbof.util.Sizes;

/** Byte offsets and lengths given on the command line (512, 4K, 1M, 2G), checked against a namespace. */
final class ByteRanges {
    private ByteRanges() {}

    static long parse(String text, String what) {
        return Sizes.parseCount(text, what);
    }

    static void check(Namespace ns, long offset, long length) {
        // Compared without adding: offset + length may not fit in a long.
        if (offset < 0 || length < 0 || offset > ns.sizeBytes() || length > ns.sizeBytes() - offset) {
            throw new IllegalArgumentException("--offset " + offset + " --length " + length
                    + " reaches beyond namespace " + ns.nsid() + ", which holds " + ns.sizeBytes()
                    + " bytes: give a range inside it (or omit --length to read to the end)");
        }
    }
}
