package io.jbof.target.config;

import java.util.Locale;

/** Parses and prints byte sizes the way storage people write them: 512, 64K, 64M, 1G, 2T (binary units). */
public final class Sizes {
    private Sizes() {}

    public static long parse(String text) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        if (s.endsWith("IB")) s = s.substring(0, s.length() - 2);
        else if (s.endsWith("B") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2))) s = s.substring(0, s.length() - 1);
        long mult = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'K': mult = 1L << 10; break;
                case 'M': mult = 1L << 20; break;
                case 'G': mult = 1L << 30; break;
                case 'T': mult = 1L << 40; break;
                default: mult = 1;
            }
            if (mult != 1) s = s.substring(0, s.length() - 1);
        }
        long n;
        try {
            n = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a size (examples: 4096, 64M, 1G)");
        }
        if (n <= 0) throw new IllegalArgumentException("size '" + text + "' must be positive");
        if (n > Long.MAX_VALUE / mult) throw new IllegalArgumentException("size '" + text + "' is too large");
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
