package io.jbof.bench;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.initiator.queue.QueuePair;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs a {@link Workload} on a connected controller: jobs on I/O queues, a once-a-second sampler, results. */
final class BenchRun {
    private final NvmeController controller;
    private final Workload w;
    private final PrintStream progress;

    /** @param progress where to draw the live line (a terminal), or null */
    BenchRun(NvmeController controller, Workload w, PrintStream progress) {
        this.controller = controller;
        this.w = w;
        this.progress = progress;
    }

    List<JobResult> run() throws IOException, InterruptedException {
        List<Namespace> nss = new ArrayList<>();
        for (int nsid : w.nsids()) nss.add(controller.namespace(nsid));
        List<QueuePair> queues = controller.ioQueues();
        List<BenchJob> jobs = new ArrayList<>();
        for (int j = 0; j < w.numjobs(); j++) jobs.add(new BenchJob(j, w, queues.get(j % queues.size()), nss));
        long[] cpu0 = processCpuTicks();
        long start = System.nanoTime();
        List<CompletableFuture<JobResult>> done = new ArrayList<>();
        for (BenchJob j : jobs) done.add(j.start(start));
        CompletableFuture<Void> all = CompletableFuture.allOf(done.toArray(new CompletableFuture[0]));
        sample(jobs, start + w.rampNanos(), all);
        long limit = TimeUnit.NANOSECONDS.toSeconds(w.rampNanos() + w.runtimeNanos()) + 600;
        try {
            all.get(limit, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IOException("a bench job failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("the bench did not finish within " + limit + " s (a queue stuck?)");
        }
        long[] cpu1 = processCpuTicks();
        List<JobResult> results = new ArrayList<>();
        for (CompletableFuture<JobResult> f : done) results.add(f.join());
        // The JVM does not account CPU per job thread cheaply; share the process's out evenly.
        long runtime = results.stream().mapToLong(r -> r.runtimeNanos).max().orElse(1) + w.rampNanos();
        double ticksPerSecond = 100.0; // USER_HZ on Linux
        for (JobResult r : results) {
            r.usrCpuPercent = 100.0 * (cpu1[0] - cpu0[0]) / ticksPerSecond / (runtime / 1e9) / results.size();
            r.sysCpuPercent = 100.0 * (cpu1[1] - cpu0[1]) / ticksPerSecond / (runtime / 1e9) / results.size();
        }
        return results;
    }

    /** Once a second from the end of ramp time: per-job samples for bw/iops statistics, and the live line. */
    private void sample(List<BenchJob> jobs, long measureFrom, CompletableFuture<Void> all)
            throws InterruptedException {
        long end = measureFrom + w.runtimeNanos();
        long next = measureFrom + TimeUnit.SECONDS.toNanos(1);
        long last = measureFrom;
        while (!all.isDone()) {
            long now = System.nanoTime();
            long wait = Math.min(next - now, TimeUnit.MILLISECONDS.toNanos(250));
            if (wait > 0) {
                try {
                    all.get(wait, TimeUnit.NANOSECONDS);
                    break;
                } catch (TimeoutException | ExecutionException e) {
                    // not done yet, or failed: the caller reports
                }
                continue;
            }
            if (now - measureFrom >= 0 && now - end <= TimeUnit.MILLISECONDS.toNanos(500)) {
                double secs = (now - last) / 1e9;
                long rIops = 0, wIops = 0, rBw = 0, wBw = 0;
                for (BenchJob j : jobs) {
                    j.readStats().sample(secs);
                    j.writeStats().sample(secs);
                    rIops += last(j.readStats().iopsSamples);
                    wIops += last(j.writeStats().iopsSamples);
                    rBw += last(j.readStats().bwSamples);
                    wBw += last(j.writeStats().bwSamples);
                }
                last = now;
                if (progress != null) {
                    long eta = Math.max(0, TimeUnit.NANOSECONDS.toSeconds(end - now));
                    progress.printf(
                            Locale.ROOT,
                            "\rJobs: %d [r=%s,w=%s IOPS][r=%s/s,w=%s/s][eta %02dm:%02ds]   ",
                            jobs.size(),
                            Units.count(rIops),
                            Units.count(wIops),
                            Units.bytes(rBw),
                            Units.bytes(wBw),
                            eta / 60,
                            eta % 60);
                    progress.flush();
                }
            }
            next += TimeUnit.SECONDS.toNanos(1);
        }
        if (progress != null) {
            progress.print("\r" + " ".repeat(78) + "\r");
            progress.flush();
        }
    }

    private static long last(List<Long> l) {
        return l.isEmpty() ? 0 : l.get(l.size() - 1);
    }

    /** utime and stime of this process, in clock ticks (/proc/self/stat fields 14 and 15). */
    static long[] processCpuTicks() {
        try {
            String s = Files.readString(Path.of("/proc/self/stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, 0};
        }
    }
}
