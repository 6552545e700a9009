package io.jbof.bench;

import io.jbof.initiator.NvmeController;
import io.jbof.initiator.cli.ConnectionOptions;
import io.jbof.util.Sizes;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(
        name = "bench",
        sortOptions = false,
        description = {
            "fio-style load generator over the initiator library: each job keeps --iodepth I/Os in flight on its own I/O queue.",
            "Reports IOPS, bandwidth and completion-latency percentiles (HdrHistogram) like fio; --output-format json in fio's layout."
        },
        footer = {
            "",
            "Examples:",
            "  jbof bench -n nqn.2024-01.io.jbof:vol1 --rw randread --bs 4k --iodepth 32 --runtime 10s",
            "  jbof bench -n NQN --rw randwrite --bs 4k --iodepth 16 --numjobs 2 --verify crc32c --size 256M",
            "  jbof bench -n NQN --rw randread --rate_iops 5000 --runtime 30s   # latency without coordinated omission",
            "  jbof bench -n NQN --rw read --bs 128k --iodepth 8 --output-format json > out.json"
        })
public final class BenchCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Option(names = "--name", defaultValue = "jbof", description = "Job name (default jbof).")
    String name;

    @Option(
            names = "--rw",
            defaultValue = "randread",
            description = "read, write, rw, randread, randwrite, randrw (default randread).")
    String rw;

    @Option(names = "--rwmixread", defaultValue = "50", description = "Percent reads in rw/randrw (default 50).")
    int rwmixread;

    @Option(names = "--bs", defaultValue = "4k", description = "Bytes per I/O (default 4k).")
    String bs;

    @Option(names = "--iodepth", defaultValue = "32", description = "I/Os in flight per job (default 32).")
    int iodepth;

    @Option(names = "--numjobs", defaultValue = "1", description = "Jobs; each drives its own I/O queue (default 1).")
    int numjobs;

    @Option(names = "--runtime", defaultValue = "10s", description = "Measured time: 30, 30s, 500ms, 2m (default 10s).")
    String runtime;

    @Option(
            names = {"--ramp_time", "--ramp-time"},
            defaultValue = "0",
            description = "Time run before measuring (default 0).")
    String ramp;

    @Option(names = "--size", description = "Bytes of each namespace to use (default: from --offset to the end).")
    String size;

    @Option(names = "--offset", defaultValue = "0", description = "First byte used in each namespace (default 0).")
    String offset;

    @Option(
            names = {"-N", "--namespace-id"},
            split = ",",
            defaultValue = "1",
            description = "Namespaces, comma separated; I/O spreads over them (default 1).")
    List<Integer> nsids;

    @Option(
            names = "--verify",
            description =
                    "crc32c: writes carry self-checking blocks, each written once, then all are read back and checked; "
                            + "on read workloads every block read is checked.")
    String verify;

    @Option(
            names = {"--rate_iops", "--rate-iops"},
            defaultValue = "0",
            description = "Per-job fixed rate; latency counts from each I/O's intended start.")
    long rateIops;

    @Option(
            names = "--seed",
            description = "Random seed (default: from the clock); the same seed repeats the same offsets.")
    Long seed;

    @Option(
            names = {"--output-format"},
            defaultValue = "normal",
            description = "normal or json (fio's layout).")
    String format;

    @Option(names = "--output", paramLabel = "FILE", description = "Write the report to FILE instead of stdout.")
    Path output;

    @Option(names = "--group_reporting", description = "One merged job in the report instead of one per job.")
    boolean groupReporting;

    @Option(
            names = "--latency-html",
            paramLabel = "FILE",
            description = "Also write a latency percentile plot (HTML with SVG) to FILE; one curve per round.")
    Path latencyHtml;

    @Option(
            names = "--rounds",
            defaultValue = "1",
            description =
                    "Run the workload N times in a row (the ramp only before the first) and report "
                            + "each round, the median and the spread (min-max); the detailed report is the median round's (default 1).")
    int rounds;

    @Override
    public Integer call() throws Exception {
        if (verify != null && !verify.equalsIgnoreCase("crc32c"))
            throw new IllegalArgumentException("--verify takes crc32c");
        if (!format.equals("normal") && !format.equals("json"))
            throw new IllegalArgumentException("--output-format takes normal or json");
        if (iodepth < 1 || numjobs < 1)
            throw new IllegalArgumentException("--iodepth and --numjobs must be at least 1");
        if (rounds < 1) throw new IllegalArgumentException("--rounds must be at least 1");
        if (rounds > 1 && verify != null)
            throw new IllegalArgumentException("--verify writes each block once: run it with --rounds 1");
        if (rwmixread < 0 || rwmixread > 100) throw new IllegalArgumentException("--rwmixread is a percentage");
        int blockSize = (int) Sizes.parse(bs);
        Workload w = new Workload(
                name,
                RwMode.parse(rw),
                rwmixread,
                blockSize,
                iodepth,
                numjobs,
                duration(runtime, "--runtime"),
                ramp.equals("0") ? 0 : duration(ramp, "--ramp_time"),
                Sizes.parseCount(offset, "--offset"),
                size == null ? 0 : Sizes.parse(size),
                nsids,
                verify != null,
                rateIops,
                seed != null ? seed : System.nanoTime());
        conn.queueSize = Math.max(conn.queueSize, iodepth);
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, numjobs))) {
            String target = conn.transport + "://" + conn.traddr + ":" + conn.trsvcid + "/" + c.options().subsystemNqn;
            PrintStream progress =
                    System.console() != null && output == null && format.equals("normal") ? System.err : null;
            // As fio's "Starting N processes": the queues are up and I/O begins now (scripts wait for it).
            System.err.printf("jbof bench: starting %d job(s) on %s%n", numjobs, target);
            List<List<JobResult>> perRound = new ArrayList<>();
            List<JobResult> merged = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                List<JobResult> jobs = new BenchRun(c, r == 0 ? w : w.withoutRamp(), progress).run();
                perRound.add(jobs);
                merged.add(JobResult.merge(name, jobs));
                if (rounds > 1)
                    System.err.printf(
                            Locale.ROOT, "jbof bench: round %d of %d: %s%n", r + 1, rounds, Rounds.line(merged.get(r)));
            }
            int median = Rounds.medianIndex(merged);
            List<JobResult> jobs = perRound.get(median);
            JobResult all = merged.get(median);
            FioReport report = new FioReport(w, target);
            String text = format.equals("json")
                    ? report.json(groupReporting ? List.of(all) : jobs, rounds > 1 ? merged : List.of())
                    : report.text(groupReporting ? List.of(all) : jobs, all)
                            + (rounds > 1 ? Rounds.text(merged, median) : "");
            if (output != null) Files.writeString(output, text, StandardCharsets.UTF_8);
            else System.out.print(text.endsWith("\n") ? text : text + "\n");
            if (latencyHtml != null)
                Files.writeString(latencyHtml, LatencyPlot.html(w, merged), StandardCharsets.UTF_8);
            for (JobResult r : merged) {
                if (r.error != 0) return 3;
                if (r.verifyErrors > 0) return 4;
            }
            return 0;
        }
    }

    static long duration(String text, String what) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long mult = TimeUnit.SECONDS.toNanos(1);
        String num = s;
        if (s.endsWith("ms")) {
            mult = TimeUnit.MILLISECONDS.toNanos(1);
            num = s.substring(0, s.length() - 2);
        } else if (s.endsWith("us")) {
            mult = TimeUnit.MICROSECONDS.toNanos(1);
            num = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) num = s.substring(0, s.length() - 1);
        else if (s.endsWith("m")) {
            mult = TimeUnit.MINUTES.toNanos(1);
            num = s.substring(0, s.length() - 1);
        } else if (s.endsWith("h")) {
            mult = TimeUnit.HOURS.toNanos(1);
            num = s.substring(0, s.length() - 1);
        }
        try {
            long v = Long.parseLong(num);
            if (v <= 0) throw new NumberFormatException();
            return v * mult;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    what + " '" + text + "' is not a duration (examples: 30, 30s, 500ms, 2m)");
        }
    }
}
