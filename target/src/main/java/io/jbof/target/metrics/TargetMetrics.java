package io.jbof.target.metrics;

import io.jbof.target.TargetServer;
import io.jbof.target.controller.Controller;
import io.jbof.target.controller.QueueSession;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.target.transport.tcp.TcpBackPressure;
import io.netty.buffer.PooledByteBufAllocator;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The target's Prometheus metrics, built at each scrape from what the target keeps anyway: every
 * namespace's per-loop {@link IoStats} rows summed, and the controllers, queues, connections, data in
 * flight and buffer pool read as gauges. Nothing here runs on the I/O path.
 */
public final class TargetMetrics implements MultiCollector {
    private final TargetServer target;

    public TargetMetrics(TargetServer target) {
        this.target = target;
    }

    @Override
    public MetricSnapshots collect() {
        CounterSnapshot.Builder commands = CounterSnapshot.builder()
                .name("jbof_io_commands")
                .help("I/O commands completed, per namespace and operation");
        CounterSnapshot.Builder bytes = CounterSnapshot.builder()
                .name("jbof_io_bytes")
                .help("Data moved by successful Reads and Writes, bytes");
        CounterSnapshot.Builder errors = CounterSnapshot.builder()
                .name("jbof_io_errors")
                .help("I/O commands that ended with an error status, per namespace and status (SCT<<8|SC, hex)");
        HistogramSnapshot.Builder latency = HistogramSnapshot.builder()
                .name("jbof_io_latency_seconds")
                .help("Time from a command's arrival to its completion on the target, per namespace and operation");
        GaugeSnapshot.Builder sizes =
                GaugeSnapshot.builder().name("jbof_namespace_size_bytes").help("Namespace capacity, bytes");
        GaugeSnapshot.Builder controllers =
                GaugeSnapshot.builder().name("jbof_controllers").help("Live controllers per subsystem");
        GaugeSnapshot.Builder queues =
                GaugeSnapshot.builder().name("jbof_queues").help("Connected queues (admin and I/O) per subsystem");
        boolean anyError = false;
        for (Subsystem s : target.subsystems()) {
            for (TargetNamespace ns : s.namespaces()) {
                IoStats.Snapshot st = ns.stats().snapshot();
                String nsid = Integer.toString(ns.nsid());
                sizes.dataPoint(GaugeDataPointSnapshot.builder()
                        .labels(Labels.of("nqn", s.nqn(), "nsid", nsid))
                        .value(ns.sizeBytes())
                        .build());
                for (int op = 0; op < IoStats.OPS.length; op++) {
                    Labels l = Labels.of("nqn", s.nqn(), "nsid", nsid, "op", IoStats.OPS[op]);
                    commands.dataPoint(CounterDataPointSnapshot.builder()
                            .labels(l)
                            .value(st.commands(op))
                            .build());
                    if (op == IoStats.READ || op == IoStats.WRITE) {
                        bytes.dataPoint(CounterDataPointSnapshot.builder()
                                .labels(l)
                                .value(st.bytes(op))
                                .build());
                    }
                    latency.dataPoint(HistogramDataPointSnapshot.builder()
                            .labels(l)
                            .sum(st.latencySeconds(op))
                            .classicHistogramBuckets(ClassicHistogramBuckets.of(UPPER_BOUNDS, st.buckets(op)))
                            .build());
                }
                for (int slot = 0; slot < StatusSlots.COUNT; slot++) {
                    long n = st.withStatus(slot);
                    if (n == 0) continue; // a status never seen is no series
                    anyError = true;
                    errors.dataPoint(CounterDataPointSnapshot.builder()
                            .labels(Labels.of("nqn", s.nqn(), "nsid", nsid, "status", StatusSlots.label(slot)))
                            .value(n)
                            .build());
                }
            }
            int cs = 0;
            int qs = 0;
            for (Controller c : target.controllersOf(s, null)) {
                cs++;
                for (QueueSession q : c.queues()) if (q != null) qs++;
            }
            controllers.dataPoint(GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("nqn", s.nqn()))
                    .value(cs)
                    .build());
            queues.dataPoint(GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("nqn", s.nqn()))
                    .value(qs)
                    .build());
        }
        MetricSnapshots.Builder out = MetricSnapshots.builder()
                .metricSnapshot(commands.build())
                .metricSnapshot(bytes.build())
                .metricSnapshot(latency.build())
                .metricSnapshot(sizes.build())
                .metricSnapshot(controllers.build())
                .metricSnapshot(queues.build());
        if (anyError) out.metricSnapshot(errors.build());
        TcpBackPressure tcp = target.tcpBackPressure();
        if (tcp != null) {
            out.metricSnapshot(
                    gauge("jbof_connections", "Open NVMe/TCP connections (one per queue)", tcp.openConnections()));
            out.metricSnapshot(gauge(
                    "jbof_connections_paused",
                    "Connections whose host does not read its responses (reading paused)",
                    tcp.pausedConnections()));
        }
        out.metricSnapshot(gauge(
                "jbof_inflight_bytes",
                "Data of Read/Write commands in progress, target-wide",
                target.inflight().used()));
        out.metricSnapshot(gauge(
                "jbof_inflight_limit_bytes",
                "Bound on that (--max-inflight-bytes; 0: none)",
                target.inflight().limit()));
        out.metricSnapshot(gauge(
                "jbof_buffer_pool_used_bytes",
                "Direct memory held by the pooled buffer allocator",
                PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory()));
        out.metricSnapshot(gauge(
                "jbof_discovery_generation", "The discovery log's generation counter", target.discoveryGeneration()));
        return out.build();
    }

    private static GaugeSnapshot gauge(String name, String help, double value) {
        return GaugeSnapshot.builder()
                .name(name)
                .help(help)
                .dataPoint(GaugeDataPointSnapshot.builder().value(value).build())
                .build();
    }

    /** IoStats' bucket bounds and +Inf, as the exposition wants them. */
    private static final double[] UPPER_BOUNDS = java.util.stream.DoubleStream.concat(
                    java.util.Arrays.stream(IoStats.BOUNDS), java.util.stream.DoubleStream.of(Double.POSITIVE_INFINITY))
            .toArray();
}
