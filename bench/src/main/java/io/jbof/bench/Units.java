package io.jbof.bench;

import java.util.Locale;

/** fio's way of printing counts (12.3k) and sizes (480MiB). */
final class Units {
    private Units() {}

    static String count(double v) {
        if (v >= 1e6) return String.format(Locale.ROOT, "%.1fM", v / 1e6);
        if (v >= 1e4) return String.format(Locale.ROOT, "%.1fk", v / 1e3);
        return String.format(Locale.ROOT, "%.0f", v);
    }

    static String bytes(double v) {
        String[] u = {"B", "KiB", "MiB", "GiB", "TiB"};
        int i = 0;
        while (v >= 1024 * 10 && i < u.length - 1) {
            v /= 1024;
            i++;
        }
        return String.format(Locale.ROOT, v >= 100 || i == 0 ? "%.0f%s" : "%.1f%s", v, u[i]);
    }

    static String decimalBytes(double v) {
        String[] u = {"B", "kB", "MB", "GB", "TB"};
        int i = 0;
        while (v >= 1000 * 10 && i < u.length - 1) {
            v /= 1000;
            i++;
        }
        return String.format(Locale.ROOT, v >= 100 || i == 0 ? "%.0f%s" : "%.1f%s", v, u[i]);
    }
}
