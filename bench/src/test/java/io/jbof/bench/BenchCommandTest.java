package io.jbof.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** jbof bench against a real target on loopback, read back through its JSON report. */
class BenchCommandTest {
    static final String NQN = "nqn.2024-01.io.jbof:bench-test";

    @TempDir
    Path dir;

    private TargetServer target() throws Exception {
        return TargetServer.start(TargetConfig.loopback(NQN, "16M", dir.resolve("ns1.img"), dir.resolve("ns2.img")));
    }

    private JsonNode bench(TargetServer t, int expectedExit, String... args) throws Exception {
        Path out = dir.resolve("out.json");
        List<String> a = new ArrayList<>(List.of(
                "-a",
                "127.0.0.1",
                "-s",
                String.valueOf(t.boundAddresses().get(0).getPort()),
                "-n",
                NQN,
                "--output-format",
                "json",
                "--output",
                out.toString()));
        a.addAll(List.of(args));
        int rc = new CommandLine(new BenchCommand()).execute(a.toArray(new String[0]));
        assertEquals(expectedExit, rc, "exit code of jbof bench " + a);
        return new ObjectMapper().readTree(out.toFile());
    }

    @Test
    void roundsAreEachReportedWithTheirMedianAndSpread() throws Exception {
        try (TargetServer t = target()) {
            Path html = dir.resolve("lat.html");
            JsonNode j = bench(
                    t,
                    0,
                    "--rw",
                    "randread",
                    "--bs",
                    "4k",
                    "--iodepth",
                    "4",
                    "--runtime",
                    "500ms",
                    "--rounds",
                    "3",
                    "--latency-html",
                    html.toString());
            JsonNode rounds = j.get("jbof_rounds");
            assertEquals(3, rounds.size(), "one entry per round");
            double[] iops = new double[3];
            for (int i = 0; i < 3; i++) {
                assertEquals(i + 1, rounds.get(i).get("round").asInt());
                iops[i] = rounds.get(i).get("iops").asDouble();
                assertTrue(iops[i] > 0, "round " + (i + 1) + " did I/O");
            }
            java.util.Arrays.sort(iops);
            JsonNode s = j.get("jbof_rounds_summary").get("iops");
            assertEquals(iops[1], s.get("median").asDouble(), 1e-6);
            assertEquals(iops[0], s.get("min").asDouble(), 1e-6);
            assertEquals(iops[2], s.get("max").asDouble(), 1e-6);
            // The detailed fio-layout report is the median round's.
            assertEquals(iops[1], j.get("jobs").get(0).get("read").get("iops").asDouble(), iops[1] * 0.01);
            String page = java.nio.file.Files.readString(html);
            for (int r = 1; r <= 3; r++) assertTrue(page.contains("read, round " + r), "a curve for round " + r);
            assertTrue(
                    new CommandLine(new BenchCommand())
                                    .execute(
                                            "-a",
                                            "127.0.0.1",
                                            "-s",
                                            String.valueOf(
                                                    t.boundAddresses().get(0).getPort()),
                                            "-n",
                                            NQN,
                                            "--rounds",
                                            "0")
                            != 0,
                    "--rounds 0 is refused");
        }
    }

    @Test
    void jsonReportHasFiosLayoutWithCountsThatAddUp() throws Exception {
        try (TargetServer t = target()) {
            JsonNode j = bench(
                    t,
                    0,
                    "--rw",
                    "randrw",
                    "--rwmixread",
                    "70",
                    "--bs",
                    "4k",
                    "--iodepth",
                    "8",
                    "--numjobs",
                    "2",
                    "-N",
                    "1,2",
                    "--runtime",
                    "1s");
            assertEquals(2, j.get("jobs").size(), "one entry per job");
            for (JsonNode job : j.get("jobs")) {
                assertEquals(0, job.get("error").asInt());
                for (String dir : new String[] {"read", "write"}) {
                    JsonNode d = job.get(dir);
                    long ios = d.get("total_ios").asLong();
                    assertTrue(ios > 0, dir + " I/Os happened");
                    assertEquals(ios * 4096, d.get("io_bytes").asLong());
                    assertEquals(ios, d.get("clat_ns").get("N").asLong(), "every I/O has a latency");
                    JsonNode p = d.get("clat_ns").get("percentile");
                    for (String q : new String[] {"1.000000", "50.000000", "99.000000", "99.990000"})
                        assertTrue(p.has(q), q);
                    assertTrue(p.get("50.000000").asLong() <= p.get("99.000000").asLong());
                    assertTrue(d.get("iops").asDouble() > 0 && d.get("bw_bytes").asLong() > 0);
                }
            }
            JsonNode g = bench(
                    t,
                    0,
                    "--rw",
                    "read",
                    "--bs",
                    "128k",
                    "--iodepth",
                    "4",
                    "--numjobs",
                    "2",
                    "--runtime",
                    "1s",
                    "--group_reporting");
            assertEquals(1, g.get("jobs").size(), "group reporting merges jobs");
            assertEquals(0, g.get("jobs").get(0).get("write").get("total_ios").asLong());
        }
    }

    @Test
    void verifyWritesEveryBlockOnceChecksThemAllAndCatchesACorruptedBlock() throws Exception {
        try (TargetServer t = target()) {
            JsonNode j = bench(
                    t,
                    0,
                    "--rw",
                    "randwrite",
                    "--bs",
                    "4k",
                    "--iodepth",
                    "16",
                    "--numjobs",
                    "2",
                    "--size",
                    "8M",
                    "--verify",
                    "crc32c",
                    "--runtime",
                    "60s",
                    "--group_reporting");
            JsonNode job = j.get("jobs").get(0);
            assertEquals(2048, job.get("write").get("total_ios").asLong(), "8 MiB of 4k blocks, each written once");
            assertEquals(2048, job.get("verify").get("blocks").asLong(), "and each read back");
            assertEquals(0, job.get("verify").get("errors").asLong());
            // Flip one byte in the target's file: a verifying read pass must notice.
            try (RandomAccessFile f =
                    new RandomAccessFile(dir.resolve("ns1.img").toFile(), "rw")) {
                f.seek(4096L * 777 + 1000);
                int b = f.read();
                f.seek(4096L * 777 + 1000);
                f.write(b ^ 0x40);
            }
            JsonNode r = bench(
                    t,
                    4,
                    "--rw",
                    "read",
                    "--bs",
                    "4k",
                    "--iodepth",
                    "4",
                    "--size",
                    "8M",
                    "--verify",
                    "crc32c",
                    "--runtime",
                    "1s");
            JsonNode v = r.get("jobs").get(0).get("verify");
            assertTrue(v.get("errors").asLong() >= 1, "the corrupted block was found: " + v);
            assertTrue(
                    v.get("first_error").asText().contains("offset " + 4096L * 777),
                    v.get("first_error").asText());
        }
    }

    @Test
    void verifyHoldsOnLoopDevicesExportedBufferedAndDirectAndCatchesAChangeMadeOnTheDevice() throws Exception {
        assumeTrue(Files.isWritable(Path.of("/dev/loop-control")), "loop devices need root");
        List<String> devices = new ArrayList<>();
        try {
            TargetConfig cfg = TargetConfig.loopback(NQN, null);
            for (int i = 1; i <= 2; i++) {
                Path backing = dir.resolve("dev" + i + ".img");
                try (RandomAccessFile f = new RandomAccessFile(backing.toFile(), "rw")) {
                    f.setLength(16L << 20);
                }
                devices.add(losetup("--find", "--show", backing.toString()));
                TargetConfig.NamespaceConfig n = new TargetConfig.NamespaceConfig();
                n.path = devices.get(i - 1);
                n.direct = i == 2;
                cfg.subsystems.get(0).namespaces.add(n);
            }
            try (TargetServer t = TargetServer.start(cfg)) {
                for (String nsid : List.of("1", "2")) {
                    JsonNode j = bench(
                            t,
                            0,
                            "-N",
                            nsid,
                            "--rw",
                            "randwrite",
                            "--bs",
                            "4k",
                            "--iodepth",
                            "32",
                            "--numjobs",
                            "2",
                            "--size",
                            "8M",
                            "--verify",
                            "crc32c",
                            "--runtime",
                            "60s",
                            "--group_reporting");
                    JsonNode v = j.get("jobs").get(0).get("verify");
                    assertEquals(2048, v.get("blocks").asLong(), "namespace " + nsid + ": every block read back");
                    assertEquals(0, v.get("errors").asLong(), "namespace " + nsid + ": " + v);
                }
                // Change one byte on the direct namespace's device behind the target: its O_DIRECT read must see it.
                try (FileChannel raw =
                        FileChannel.open(Path.of(devices.get(1)), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    ByteBuffer b = ByteBuffer.allocate(1);
                    raw.read(b, 4096L * 555 + 100);
                    b.put(0, (byte) (b.get(0) ^ 0x21)).rewind();
                    raw.write(b, 4096L * 555 + 100);
                    raw.force(false);
                }
                JsonNode r = bench(
                        t,
                        4,
                        "-N",
                        "2",
                        "--rw",
                        "read",
                        "--bs",
                        "4k",
                        "--iodepth",
                        "4",
                        "--size",
                        "8M",
                        "--verify",
                        "crc32c",
                        "--runtime",
                        "1s");
                JsonNode v = r.get("jobs").get(0).get("verify");
                assertTrue(v.get("first_error").asText().contains("offset " + 4096L * 555), String.valueOf(v));
            }
        } finally {
            for (String d : devices) losetup("--detach", d);
        }
    }

    private static String losetup(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("losetup"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.waitFor(), cmd + ": " + out);
        return out;
    }

    @Test
    void mixedVerifyRunsCheckReadsOfWrittenBlocksWhileWriting() throws Exception {
        try (TargetServer t = target()) {
            JsonNode j = bench(
                    t,
                    0,
                    "--rw",
                    "randrw",
                    "--rwmixread",
                    "50",
                    "--bs",
                    "4k",
                    "--iodepth",
                    "8",
                    "--size",
                    "8M",
                    "--verify",
                    "crc32c",
                    "--runtime",
                    "60s",
                    "--group_reporting");
            JsonNode job = j.get("jobs").get(0);
            long writes = job.get("write").get("total_ios").asLong();
            assertEquals(2048, writes, "each block written once");
            assertEquals(0, job.get("verify").get("errors").asLong(), String.valueOf(job.get("verify")));
            assertTrue(job.get("read").get("total_ios").asLong() > 0, "reads ran while writing");
            assertTrue(
                    job.get("verify").get("blocks").asLong() > writes,
                    "reads during the run were checked too, then every block");
        }
    }

    @Test
    void fixedRateNeverIssuesAheadOfSchedule() throws Exception {
        try (TargetServer t = target()) {
            JsonNode j = bench(
                    t, 0, "--rw", "randread", "--bs", "4k", "--iodepth", "4", "--rate_iops", "200", "--runtime", "2s");
            long ios = j.get("jobs").get(0).get("read").get("total_ios").asLong();
            assertTrue(
                    ios > 0 && ios <= 200 * 2 + 4, "at most rate x runtime (+ the I/Os in flight at the end): " + ios);
        }
    }
}
