package io.jbof.bench;

import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** A self-contained HTML page with an SVG plot of latency by percentile (log scale of 1/(1-p), as HdrHistogram plots). */
final class LatencyPlot {
    private LatencyPlot() {}

    static String html(Workload w, JobResult r) {
        return html(w, List.of(r));
    }

    /** One curve per direction and round (rounds in shades of the direction's colour). */
    static String html(Workload w, List<JobResult> rounds) {
        StringBuilder svg = new StringBuilder();
        int width = 800, height = 400, left = 70, bottom = 40;
        double maxX = 6; // up to 99.9999%
        double maxY = 1;
        for (JobResult r : rounds) {
            for (Histogram h : new Histogram[] {r.read.latencyNanos, r.write.latencyNanos}) {
                if (h.getTotalCount() > 0) maxY = Math.max(maxY, h.getValueAtPercentile(99.9999) / 1e3);
            }
        }
        String[][] colors = {{"#1f77b4", "#6baed6", "#08519c", "#9ecae1"}, {"#d62728", "#fc9272", "#a50f15", "#fcbba1"}
        };
        String[] names = {"read", "write"};
        int legend = 0;
        for (int ri = 0; ri < rounds.size(); ri++) {
            JobResult r = rounds.get(ri);
            Histogram[] hs = {r.read.latencyNanos, r.write.latencyNanos};
            for (int k = 0; k < 2; k++) {
                Histogram h = hs[k];
                if (h.getTotalCount() == 0) continue;
                String color = colors[k][ri % colors[k].length];
                StringBuilder pts = new StringBuilder();
                for (double x = 0; x <= maxX; x += 0.05) {
                    double p = 100 * (1 - Math.pow(10, -x));
                    double us = h.getValueAtPercentile(p) / 1e3;
                    pts.append(String.format(
                            Locale.ROOT,
                            "%.1f,%.1f ",
                            left + x / maxX * (width - left - 10),
                            height - bottom - us / maxY * (height - bottom - 10)));
                }
                svg.append(String.format(
                        Locale.ROOT, "<polyline fill='none' stroke='%s' stroke-width='2' points='%s'/>", color, pts));
                String label = rounds.size() > 1 ? names[k] + ", round " + (ri + 1) : names[k];
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x='%d' y='%d' fill='%s'>%s (%d I/Os)</text>",
                        left + 10,
                        20 + 18 * legend++,
                        color,
                        label,
                        h.getTotalCount()));
            }
        }
        String[] labels = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"};
        for (int x = 0; x <= 6; x++) {
            double px = left + x / maxX * (width - left - 10);
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ddd'/><text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%s</text>",
                    px,
                    10,
                    px,
                    height - bottom,
                    px,
                    height - bottom + 15,
                    labels[x]));
        }
        for (int y = 0; y <= 4; y++) {
            double v = maxY * y / 4;
            double py = height - bottom - v / maxY * (height - bottom - 10);
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/><text x='%d' y='%.1f' font-size='11' text-anchor='end'>%.0f us</text>",
                    left,
                    py,
                    width - 10,
                    py,
                    left - 5,
                    py + 4,
                    v));
        }
        return "<!doctype html><html><head><meta charset='utf-8'><title>jbof bench latency</title></head><body style='font-family:sans-serif'>"
                + String.format(
                        Locale.ROOT,
                        "<h3>%s: rw=%s bs=%d iodepth=%d numjobs=%d</h3>",
                        w.name(),
                        w.rw().fioName(),
                        w.blockSize(),
                        w.iodepth(),
                        w.numjobs())
                + "<svg xmlns='http://www.w3.org/2000/svg' width='" + width + "' height='" + height + "'>" + svg
                + "</svg>"
                + "<p>Completion latency by percentile (HdrHistogram).</p></body></html>";
    }
}
