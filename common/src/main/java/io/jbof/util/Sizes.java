package io.jbof.util;

import java.util.Locale;

/** Parses and prints byte sizes the way storage people write them: 512, 64K, 64M, 1G, 2T (binary units). */
public final class Sizes {
    private Sizes() {}

    /** A positive size. */
    public static long parse(String text) {
        long n = parseCount(text, "size");
        if (n <= 0) throw new IllegalArgumentException("size '" + text + "' must be positive");
        return n;
    }

    /** A byte count that may be zero (an offset); {@code what} names it in the error. */
    public static long parseCount(String text, String what) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        if (s.endsWith("IB")) s = s.substring(0, s.length() - 2);
        else if (s.endsWith("B") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2)))
            s = s.substring(0, s.length() - 1);
        long mult = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'K':
                    mult = 1L << 10;
                    break;
                case 'M':
                    mult = 1L << 20;
                    break;
                case 'G':
                    mult = 1L << 30;
                    break;
                case 'T':
                    mult = 1L << 40;
                    break;
                default:
                    mult = 1;
            }
            if (mult != 1) s = s.substring(0, s.length() - 1);
        }
        long n;
        try {
            n = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    what + " '" + text + "' is not a byte count (examples: 0, 4096, 4K, 64M, 1G)");
        }
        if (n < 0) throw new IllegalArgumentException(what + " '" + text + "' is negative");
        if (n > Long.MAX_VALUE / mult) throw new IllegalArgumentException(what + " '" + text + "' is too large");
        return n * mult;
    }

    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
