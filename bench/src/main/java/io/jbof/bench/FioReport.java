package io.jbof.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** Renders results the way fio does: its human-readable report, or its JSON layout (tools that read fio's read ours). */
final class FioReport {
    static final double[] PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
    private final Workload w;
    private final String target;

    FioReport(Workload w, String target) {
        this.w = w;
        this.target = target;
    }

    // ---- JSON ----

    String json(List<JobResult> jobs) throws Exception {
        return json(jobs, List.of());
    }

    /** fio's layout; with several rounds, also "jbof_rounds" (each round's figures) and "jbof_rounds_summary" (median, min, max). */
    String json(List<JobResult> jobs, List<JobResult> rounds) throws Exception {
        ObjectMapper m = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = m.createObjectNode();
        long now = System.currentTimeMillis();
        root.put("fio version", "jbof-bench-0.1.0");
        root.put("timestamp", now / 1000);
        root.put("timestamp_ms", now);
        root.put(
                "time",
                DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.ROOT)
                        .format(Instant.ofEpochMilli(now).atZone(ZoneId.systemDefault())));
        ObjectNode g = root.putObject("global options");
        options(g);
        var arr = root.putArray("jobs");
        for (JobResult j : jobs) {
            ObjectNode o = arr.addObject();
            o.put("jobname", j.name);
            o.put("groupid", 0);
            o.put("error", j.error);
            if (j.errorText != null) o.put("error_text", j.errorText);
            o.put("eta", 0);
            o.put("elapsed", (w.rampNanos() + j.runtimeNanos) / 1_000_000_000L);
            options(o.putObject("job options"));
            direction(o.putObject("read"), j.read, j.runtimeNanos);
            direction(o.putObject("write"), j.write, j.runtimeNanos);
            direction(o.putObject("trim"), new DirectionStats(), j.runtimeNanos);
            o.put("job_runtime", j.runtimeNanos / 1_000_000);
            o.put("usr_cpu", round(j.usrCpuPercent));
            o.put("sys_cpu", round(j.sysCpuPercent));
            o.put("ctx", 0);
            o.put("majf", 0);
            o.put("minf", 0);
            if (w.verify()) {
                ObjectNode v = o.putObject("verify");
                v.put("blocks", j.verifiedBlocks);
                v.put("errors", j.verifyErrors);
                if (j.firstVerifyError != null) v.put("first_error", j.firstVerifyError);
            }
        }
        root.putArray("disk_util");
        if (!rounds.isEmpty()) Rounds.json(root, rounds);
        return m.writeValueAsString(root);
    }

    private void options(ObjectNode o) {
        o.put("name", w.name());
        o.put("rw", w.rw().fioName());
        if (w.rw().reads && w.rw().writes) o.put("rwmixread", String.valueOf(w.rwmixread()));
        o.put("bs", String.valueOf(w.blockSize()));
        o.put("iodepth", String.valueOf(w.iodepth()));
        o.put("numjobs", String.valueOf(w.numjobs()));
        o.put("runtime", String.valueOf(w.runtimeNanos() / 1_000_000_000L));
        o.put("ramp_time", String.valueOf(w.rampNanos() / 1_000_000_000L));
        o.put("offset", String.valueOf(w.offset()));
        if (w.size() > 0) o.put("size", String.valueOf(w.size()));
        if (w.verify()) o.put("verify", "crc32c");
        if (w.rateIops() > 0) o.put("rate_iops", String.valueOf(w.rateIops()));
        o.put("ioengine", "jbof");
        o.put("filename", target);
    }

    private static void direction(ObjectNode o, DirectionStats d, long runtimeNanos) {
        long ios = d.ios.get();
        long bytes = d.bytes.get();
        double secs = Math.max(runtimeNanos, 1) / 1e9;
        o.put("io_bytes", bytes);
        o.put("io_kbytes", bytes / 1024);
        o.put("bw_bytes", Math.round(bytes / secs));
        o.put("bw", Math.round(bytes / secs / 1024));
        o.put("iops", round(ios / secs));
        o.put("runtime", ios == 0 ? 0 : runtimeNanos / 1_000_000);
        o.put("total_ios", ios);
        o.put("short_ios", 0);
        o.put("drop_ios", 0);
        Histogram h = d.latencyNanos;
        ObjectNode slat = o.putObject("slat_ns");
        slat.put("min", 0);
        slat.put("max", 0);
        slat.put("mean", 0.0);
        slat.put("stddev", 0.0);
        slat.put("N", 0);
        ObjectNode clat = latency(o.putObject("clat_ns"), h);
        if (h.getTotalCount() > 0) {
            ObjectNode p = clat.putObject("percentile");
            for (double q : PERCENTILES) p.put(String.format(Locale.ROOT, "%.6f", q), h.getValueAtPercentile(q));
        }
        latency(o.putObject("lat_ns"), h);
        samples(o, "bw", d.bwSamples, 1.0 / 1024);
        samples(o, "iops", d.iopsSamples, 1.0);
    }

    private static ObjectNode latency(ObjectNode o, Histogram h) {
        boolean any = h.getTotalCount() > 0;
        o.put("min", any ? h.getMinValue() : 0);
        o.put("max", any ? h.getMaxValue() : 0);
        o.put("mean", any ? round(h.getMean()) : 0.0);
        o.put("stddev", any ? round(h.getStdDeviation()) : 0.0);
        o.put("N", h.getTotalCount());
        return o;
    }

    /** fio's bw_min/bw_max/bw_mean/bw_dev/bw_samples (KiB/s) and iops_min/... from the per-second samples. */
    private static void samples(ObjectNode o, String what, List<Long> s, double scale) {
        double min = 0, max = 0, mean = 0, dev = 0;
        if (!s.isEmpty()) {
            min = Double.MAX_VALUE;
            for (long v : s) {
                min = Math.min(min, v * scale);
                max = Math.max(max, v * scale);
                mean += v * scale;
            }
            mean /= s.size();
            for (long v : s) dev += (v * scale - mean) * (v * scale - mean);
            dev = Math.sqrt(dev / Math.max(1, s.size() - 1));
        }
        if (what.equals("bw")) {
            o.put("bw_min", Math.round(min));
            o.put("bw_max", Math.round(max));
            o.put("bw_agg", s.isEmpty() ? 0.0 : 100.0);
            o.put("bw_mean", round(mean));
            o.put("bw_dev", round(dev));
            o.put("bw_samples", s.size());
        } else {
            o.put("iops_min", Math.round(min));
            o.put("iops_max", Math.round(max));
            o.put("iops_mean", round(mean));
            o.put("iops_stddev", round(dev));
            o.put("iops_samples", s.size());
        }
    }

    private static double round(double v) {
        return Math.round(v * 1e6) / 1e6;
    }

    // ---- text ----

    String text(List<JobResult> jobs, JobResult all) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "%s: (g=0): rw=%s, bs=(R) %dB-%dB, (W) %dB-%dB, ioengine=jbof, iodepth=%d%n",
                w.name(),
                w.rw().fioName(),
                w.blockSize(),
                w.blockSize(),
                w.blockSize(),
                w.blockSize(),
                w.iodepth()));
        b.append(String.format(
                Locale.ROOT,
                "target: %s; %d job(s)%s%n",
                target,
                w.numjobs(),
                w.rateIops() > 0 ? ", rate " + w.rateIops() + " IOPS per job (latency from the intended start)" : ""));
        for (JobResult j : jobs) job(b, j);
        if (jobs.size() > 1) job(b, all);
        b.append(String.format("%nRun status group 0 (all jobs):%n"));
        group(b, "READ", all.read, all.runtimeNanos);
        group(b, "WRITE", all.write, all.runtimeNanos);
        return b.toString();
    }

    private void job(StringBuilder b, JobResult j) {
        b.append(String.format(
                Locale.ROOT,
                "%s: (groupid=0, jobs=%d): err=%2d%s%n",
                j.name,
                j.jobs,
                j.error,
                j.errorText != null ? " (" + j.errorText + ")" : ""));
        dir(b, "read", j.read, j.runtimeNanos);
        dir(b, "write", j.write, j.runtimeNanos);
        if (w.verify()) {
            b.append(String.format(
                    Locale.ROOT,
                    "  verify: %d blocks checked (%s), %d errors%s%n",
                    j.verifiedBlocks,
                    Units.bytes((double) j.verifiedBlocks * w.blockSize()),
                    j.verifyErrors,
                    j.firstVerifyError != null ? "; first: " + j.firstVerifyError : ""));
        }
        b.append(String.format(
                Locale.ROOT, "  cpu          : usr=%.2f%%, sys=%.2f%%%n", j.usrCpuPercent, j.sysCpuPercent));
    }

    private static void dir(StringBuilder b, String name, DirectionStats d, long runtimeNanos) {
        long ios = d.ios.get();
        if (ios == 0) return;
        double secs = runtimeNanos / 1e9;
        long bytes = d.bytes.get();
        b.append(String.format(
                Locale.ROOT,
                "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%dmsec)%n",
                name,
                Units.count(ios / secs),
                Units.bytes(bytes / secs),
                Units.decimalBytes(bytes / secs),
                Units.bytes(bytes),
                runtimeNanos / 1_000_000));
        Histogram h = d.latencyNanos;
        String unit = h.getValueAtPercentile(50) >= 10_000_000 ? "msec" : "usec";
        double div = unit.equals("msec") ? 1e6 : 1e3;
        b.append(String.format(
                Locale.ROOT,
                "    clat (%s): min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f%n",
                unit,
                h.getMinValue() / div,
                h.getMaxValue() / div,
                h.getMean() / div,
                h.getStdDeviation() / div));
        b.append(String.format(Locale.ROOT, "    clat percentiles (%s):%n", unit));
        for (int i = 0; i < PERCENTILES.length; i += 4) {
            b.append("     |");
            for (int k = i; k < Math.min(i + 4, PERCENTILES.length); k++) {
                b.append(String.format(
                        Locale.ROOT,
                        " %5.2fth=[%6.0f]%s",
                        PERCENTILES[k],
                        h.getValueAtPercentile(PERCENTILES[k]) / div,
                        k + 1 < PERCENTILES.length ? "," : ""));
            }
            b.append('\n');
        }
    }

    private static void group(StringBuilder b, String name, DirectionStats d, long runtimeNanos) {
        long ios = d.ios.get();
        if (ios == 0) return;
        double secs = runtimeNanos / 1e9;
        long bytes = d.bytes.get();
        b.append(String.format(
                Locale.ROOT,
                "  %5s: bw=%s/s (%s/s), io=%s (%s), run=%d-%dmsec%n",
                name,
                Units.bytes(bytes / secs),
                Units.decimalBytes(bytes / secs),
                Units.bytes(bytes),
                Units.decimalBytes(bytes),
                runtimeNanos / 1_000_000,
                runtimeNanos / 1_000_000));
    }
}
