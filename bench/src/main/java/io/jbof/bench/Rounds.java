package io.jbof.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A run as several rounds: each round's headline figures, the median round and the spread (min-max),
 * so a figure comes with how much it moves between runs of the same thing.
 */
final class Rounds {
    private Rounds() {}

    /** IOPS, bytes/s, p50 and p99 completion latency (µs) of one round, reads and writes together. */
    static double[] figures(JobResult r) {
        double secs = Math.max(r.runtimeNanos, 1) / 1e9;
        long ios = r.read.ios.get() + r.write.ios.get();
        long bytes = r.read.bytes.get() + r.write.bytes.get();
        org.HdrHistogram.Histogram h = r.read.latencyNanos.copy();
        h.add(r.write.latencyNanos);
        return new double[] {
            ios / secs, bytes / secs, h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3
        };
    }

    static final String[] NAMES = {"iops", "bw_bytes", "lat_p50_us", "lat_p99_us"};

    /** The round whose IOPS is the median (the lower middle of an even count). */
    static int medianIndex(List<JobResult> rounds) {
        Integer[] idx = new Integer[rounds.size()];
        for (int i = 0; i < idx.length; i++) idx[i] = i;
        Arrays.sort(idx, (a, b) -> Double.compare(figures(rounds.get(a))[0], figures(rounds.get(b))[0]));
        return idx[(idx.length - 1) / 2];
    }

    static String line(JobResult r) {
        double[] f = figures(r);
        return String.format(
                Locale.ROOT,
                "IOPS=%s, BW=%s/s, lat p50=%.1f us p99=%.1f us",
                Units.count(Math.round(f[0])),
                Units.bytes(f[1]),
                f[2],
                f[3]);
    }

    static String text(List<JobResult> rounds, int median) {
        StringBuilder b = new StringBuilder(String.format(
                Locale.ROOT,
                "%nRounds: %d (the report above is round %d, the median by IOPS)%n",
                rounds.size(),
                median + 1));
        for (int i = 0; i < rounds.size(); i++)
            b.append(String.format(Locale.ROOT, "  round %d: %s%n", i + 1, line(rounds.get(i))));
        double[][] s = spread(rounds);
        b.append(String.format(
                Locale.ROOT,
                "  median (min-max): IOPS=%s (%s-%s), p50=%.1f us (%.1f-%.1f), p99=%.1f us (%.1f-%.1f)%n",
                Units.count(Math.round(s[0][0])),
                Units.count(Math.round(s[0][1])),
                Units.count(Math.round(s[0][2])),
                s[2][0],
                s[2][1],
                s[2][2],
                s[3][0],
                s[3][1],
                s[3][2]));
        return b.toString();
    }

    static void json(ObjectNode root, List<JobResult> rounds) {
        var arr = root.putArray("jbof_rounds");
        for (int i = 0; i < rounds.size(); i++) {
            ObjectNode o = arr.addObject();
            o.put("round", i + 1);
            double[] f = figures(rounds.get(i));
            for (int k = 0; k < NAMES.length; k++) o.put(NAMES[k], f[k]);
        }
        ObjectNode sum = root.putObject("jbof_rounds_summary");
        double[][] s = spread(rounds);
        for (int k = 0; k < NAMES.length; k++) {
            ObjectNode o = sum.putObject(NAMES[k]);
            o.put("median", s[k][0]);
            o.put("min", s[k][1]);
            o.put("max", s[k][2]);
        }
    }

    /** Per figure: {median, min, max} over the rounds. */
    static double[][] spread(List<JobResult> rounds) {
        double[][] out = new double[NAMES.length][];
        for (int k = 0; k < NAMES.length; k++) {
            List<Double> v = new ArrayList<>();
            for (JobResult r : rounds) v.add(figures(r)[k]);
            v.sort(Double::compare);
            int n = v.size();
            double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
            out[k] = new double[] {median, v.get(0), v.get(n - 1)};
        }
        return out;
    }
}
