package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;

import java.util.Locale;

/** Byte offsets and lengths given on the command line (512, 4K, 1M, 2G), checked against a namespace. */
final class ByteRanges {
    private ByteRanges() {}

    static long parse(String text, String what) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        long mult = 1;
        if (s.endsWith("K")) mult = 1L << 10;
        else if (s.endsWith("M")) mult = 1L << 20;
        else if (s.endsWith("G")) mult = 1L << 30;
        else if (s.endsWith("T")) mult = 1L << 40;
        if (mult != 1) s = s.substring(0, s.length() - 1);
        try {
            long v = Long.parseLong(s) * mult;
            if (v < 0) throw new NumberFormatException();
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " '" + text + "' is not a byte count (examples: 0, 4096, 4K, 1M)");
        }
    }

    static void check(Namespace ns, long offset, long length) {
        if (offset < 0 || length < 0 || offset + length > ns.sizeBytes()) {
            throw new IllegalArgumentException("bytes [" + offset + ", " + (offset + length) + ") lie outside namespace " + ns.nsid()
                    + " (" + ns.sizeBytes() + " bytes)");
        }
    }
}
