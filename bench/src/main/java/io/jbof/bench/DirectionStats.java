package io.jbof.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Completions of one direction (read or write) of one job: a latency histogram written only by the
 * job's event loop, running totals the progress sampler reads, and per-second samples of both.
 */
final class DirectionStats {
    /** 1 ns .. 1 h at 3 significant digits; auto-resize off: recording allocates nothing. */
    final Histogram latencyNanos = new Histogram(1, 3_600_000_000_000L, 3);

    final AtomicLong ios = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();
    /** Per-second samples of bytes/s and IOPS (taken by the sampler thread). */
    final List<Long> bwSamples = new ArrayList<>();

    final List<Long> iopsSamples = new ArrayList<>();
    private long lastIos;
    private long lastBytes;

    /** On the job's loop only. */
    void record(long latency, int length) {
        latencyNanos.recordValue(Math.max(1, Math.min(latency, latencyNanos.getHighestTrackableValue())));
        ios.lazySet(ios.get() + 1);
        bytes.lazySet(bytes.get() + length);
    }

    /** On the sampler thread, once a second while measuring. */
    void sample(double seconds) {
        long i = ios.get();
        long b = bytes.get();
        iopsSamples.add(Math.round((i - lastIos) / seconds));
        bwSamples.add(Math.round((b - lastBytes) / seconds));
        lastIos = i;
        lastBytes = b;
    }

    /** Starts measuring: what happened during ramp time does not count. */
    void reset() {
        latencyNanos.reset();
        ios.set(0);
        bytes.set(0);
        lastIos = 0;
        lastBytes = 0;
        bwSamples.clear();
        iopsSamples.clear();
    }

    void add(DirectionStats o) {
        latencyNanos.add(o.latencyNanos);
        ios.addAndGet(o.ios.get());
        bytes.addAndGet(o.bytes.get());
        // Samples of a group: element-wise sums (jobs were sampled at the same instants).
        for (int k = 0; k < o.bwSamples.size(); k++) {
            if (k < bwSamples.size()) {
                bwSamples.set(k, bwSamples.get(k) + o.bwSamples.get(k));
                iopsSamples.set(k, iopsSamples.get(k) + o.iopsSamples.get(k));
            } else {
                bwSamples.add(o.bwSamples.get(k));
                iopsSamples.add(o.iopsSamples.get(k));
            }
        }
    }
}
