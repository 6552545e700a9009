package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** `jbof durability` across a kill -9 of a real target, and against a volume damaged behind its back. */
class DurabilityCommandTest {
    static final String NQN = "nqn.2024-01.io.jbof:durability";

    @TempDir
    Path dir;

    private int run(int port, StringWriter out, StringWriter err) {
        CommandLine cl = JbofMain.commandLine(false);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(
                "durability",
                "-s",
                String.valueOf(port),
                "-n",
                NQN,
                "--model",
                dir.resolve("model").toString(),
                "--blocks",
                "1024",
                "--max-seconds",
                "1",
                "--destroy-data");
    }

    @Test
    void aRunAfterAKill9VerifiesAndADamagedBlockIsNamed() throws Exception {
        Path vol = dir.resolve("vol.img");
        String[] args = {"--listen", "127.0.0.1:0", "--nqn", NQN, "--namespace", vol + ":4M"};
        try (DaemonProcess t = DaemonProcess.java(args)) {
            assertEquals(
                    0,
                    run(t.port, new StringWriter(), new StringWriter()),
                    "the first run writes until its time is up");
            t.kill9();
        }
        assertTrue(Files.exists(dir.resolve("model")), "the model is saved for the next run");
        try (DaemonProcess t = DaemonProcess.java(args)) {
            StringWriter err = new StringWriter();
            assertEquals(0, run(t.port, new StringWriter(), err), err.toString());
            t.kill9();
        }
        try (RandomAccessFile f = new RandomAccessFile(vol.toFile(), "rw")) {
            f.seek(7 * 4096 + 100); // block 7, inside what its CRC covers
            int b = f.read();
            f.seek(7 * 4096 + 100);
            f.write(b ^ 0x40);
        }
        try (DaemonProcess t = DaemonProcess.java(args)) {
            StringWriter err = new StringWriter();
            assertEquals(1, run(t.port, new StringWriter(), err), "a damaged block fails the check");
            assertTrue(err.toString().contains("block 7"), err.toString());
        }
    }
}
