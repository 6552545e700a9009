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
        if (offset < 0 || length < 0 || offset + length > ns.sizeBytes()) {
            throw new IllegalArgumentException("bytes [" + offset + ", " + (offset + length) + ") lie outside namespace " + ns.nsid()
                    + " (" + ns.sizeBytes() + " bytes)");
        }
    }
}
