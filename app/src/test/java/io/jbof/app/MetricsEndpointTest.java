package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.metrics.MetricsServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** /metrics of a real target, scraped over HTTP after a real host's I/O on loopback. */
class MetricsEndpointTest {
    static final String NQN = "nqn.2024-01.io.jbof:metrics";

    @TempDir
    Path dir;

    /** The value of the sample named and labelled exactly {@code series}, or -1. */
    static double sample(String text, String series) {
        Matcher m = Pattern.compile("^" + Pattern.quote(series) + " ([0-9.eE+-]+)$", Pattern.MULTILINE)
                .matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }

    static String scrape(int port) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    @Test
    void countsBytesLatencyAndErrorsPerNamespaceAndOperationAddUpToWhatTheHostDid() throws Exception {
        try (TargetServer target = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")));
                MetricsServer metrics = MetricsServer.start("127.0.0.1:0", target);
                NvmeController host = NvmeController.connect(ConnectOptions.builder()
                        .port(TestTargets.port(target))
                        .subsystemNqn(NQN)
                        .ioQueues(2)
                        .queueDepth(16)
                        .build())) {
            Namespace ns = host.namespace(1);
            List<CompletableFuture<Void>> io = new ArrayList<>();
            for (int i = 0; i < 100; i++) io.add(ns.write(i, 1, Unpooled.wrappedBuffer(new byte[4096]), false));
            for (CompletableFuture<Void> f : io) f.get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 30; i++) {
                ByteBuf b = Unpooled.buffer(8192);
                ns.read(i, 2, b).get(10, TimeUnit.SECONDS);
            }
            long blocks = ns.blocks();
            // Past the end, sent raw (the library itself refuses such a range before sending it)
            ExecutionException past = assertThrows(
                    ExecutionException.class,
                    () -> host.passthru(
                                    false,
                                    Opcodes.IO_READ,
                                    1,
                                    new int[] {(int) blocks, 0, 0, 0, 0, 0},
                                    Unpooled.buffer(4096),
                                    4096,
                                    false)
                            .get(10, TimeUnit.SECONDS));

            String text = scrape(metrics.port());
            String labels = "{nqn=\"" + NQN + "\",nsid=\"1\",op=\"";
            assertEquals(100, sample(text, "jbof_io_commands_total" + labels + "write\"}"), text);
            assertEquals(100 * 4096, sample(text, "jbof_io_bytes_total" + labels + "write\"}"));
            assertEquals(
                    31,
                    sample(text, "jbof_io_commands_total" + labels + "read\"}"),
                    "30 reads and the one that failed");
            assertEquals(
                    30 * 8192, sample(text, "jbof_io_bytes_total" + labels + "read\"}"), "only what succeeded moved");
            assertEquals(100, sample(text, "jbof_io_latency_seconds_count" + labels + "write\"}"));
            assertEquals(
                    100,
                    sample(text, "jbof_io_latency_seconds_bucket" + labels + "write\",le=\"+Inf\"}"),
                    "buckets are cumulative");
            assertTrue(sample(text, "jbof_io_latency_seconds_sum" + labels + "write\"}") > 0);
            int lbaOutOfRange = Status.LBA_OUT_OF_RANGE;
            assertEquals(
                    1,
                    sample(
                            text,
                            "jbof_io_errors_total{nqn=\"" + NQN + "\",nsid=\"1\",status=\""
                                    + String.format("0x%03x", lbaOutOfRange) + "\"}"),
                    "the failed read, by its status: " + past.getCause());
            assertEquals(1, sample(text, "jbof_controllers{nqn=\"" + NQN + "\"}"));
            assertEquals(3, sample(text, "jbof_queues{nqn=\"" + NQN + "\"}"), "admin and two I/O queues");
            assertEquals(3, sample(text, "jbof_connections"), "one TCP connection per queue");
            assertEquals(16 << 20, sample(text, "jbof_namespace_size_bytes{nqn=\"" + NQN + "\",nsid=\"1\"}"));

            // Every series the Grafana dashboard in docs/ queries is one the target serves.
            String dashboard = Files.readString(
                    Path.of(System.getProperty("user.dir")).getParent().resolve("docs/grafana-jbof-target.json"));
            Matcher names = Pattern.compile("jbof_[a-z_]+").matcher(dashboard);
            int queried = 0;
            while (names.find()) {
                String name = names.group();
                if (name.equals("jbof_target")) continue; // the dashboard's uid
                assertTrue(
                        text.contains("\n" + name + " ") || text.contains("\n" + name + "{"),
                        "the dashboard queries " + name + ", which /metrics lacks");
                queried++;
            }
            assertTrue(queried >= 10, "the dashboard queries " + queried + " series");
        }
    }
}
