package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.target.TargetServer;
import io.jbof.target.cli.TargetMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line at its edges: every verb answers --help, and a wrong value gets a message saying what to do. */
class CliEdgesTest {
    static final String NQN = "nqn.2024-01.io.jbof:cli";

    @TempDir
    Path dir;

    record Run(int code, String out, String err) {}

    static Run run(CommandLine cl, String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void everyVerbAnswersHelp() {
        CommandLine jbof = JbofMain.commandLine(false);
        for (String verb : jbof.getSubcommands().keySet()) {
            if (verb.equals("help")) continue;
            for (String flag : new String[] {"--help", "-h"}) {
                Run r = run(JbofMain.commandLine(false), verb, flag);
                assertEquals(0, r.code(), "jbof " + verb + " " + flag + ": " + r.err());
                assertTrue(
                        r.out().contains("Usage: jbof " + verb),
                        "jbof " + verb + " " + flag + " prints its usage: " + r.out());
            }
        }
        Run t = run(TargetMain.commandLine(), "--help");
        assertEquals(0, t.code());
        assertTrue(t.out().contains("Usage: jbof-target"));
    }

    @Test
    void aBashCompletionScriptIsGeneratedFromTheCommands() {
        Run r = run(JbofMain.commandLine(false), "generate-completion");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("complete -F"), "a bash completion script");
        for (String verb : new String[] {"read", "bench", "mount", "durability"})
            assertTrue(r.out().contains(verb), verb);
    }

    @Test
    void aRangePastTheEndIsRefusedEvenWhenItOverflows() throws Exception {
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, dir.resolve("a.img")))) {
            Run r = run(
                    JbofMain.commandLine(false),
                    "read",
                    "-a",
                    "127.0.0.1",
                    "-s",
                    String.valueOf(TestTargets.port(t)),
                    "-n",
                    NQN,
                    "--offset",
                    "8",
                    "--length",
                    "9223372036854775807",
                    "--output",
                    dir.resolve("out").toString());
            assertEquals(2, r.code(), r.err());
            assertTrue(r.err().contains("reaches beyond namespace 1"), r.err());
        }
    }

    @Test
    void anUnresolvableHostIsNamedAsSuch() {
        Run r = run(JbofMain.commandLine(false), "list", "-a", "nosuchhost.invalid", "-s", "4420", "-n", NQN);
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("cannot resolve") && r.err().contains("-a/--traddr"), r.err());
    }

    @Test
    void targetOptionsThatCannotWorkAreRefusedWithWhatToDo() {
        String ns = dir.resolve("a.img") + ":1M";
        Run nsid = run(TargetMain.commandLine(), "--nqn", NQN, "--namespace", ns + ",nsid=abc");
        assertEquals(2, nsid.code());
        assertTrue(nsid.err().contains("nsid=abc") && nsid.err().contains("not a number"), nsid.err());

        Run controllers = run(TargetMain.commandLine(), "--nqn", NQN, "--namespace", ns, "--max-controllers", "-1");
        assertEquals(2, controllers.code());
        assertTrue(controllers.err().contains("--max-controllers must be"), controllers.err());

        Run twice = run(
                TargetMain.commandLine(),
                "--nqn",
                NQN,
                "--namespace",
                ns,
                "--namespace",
                dir.resolve("a.img").toString());
        assertEquals(2, twice.code());
        assertTrue(
                twice.err().contains("is already namespace 1") && twice.err().contains("needs a file of its own"),
                twice.err());

        // Even root may not create files in /sys.
        Run denied = run(TargetMain.commandLine(), "--nqn", NQN, "--namespace", "/sys/jbof-cli-test.img:1M");
        assertEquals(2, denied.code());
        assertTrue(
                denied.err().contains("permission denied") && denied.err().contains("/sys/jbof-cli-test.img"),
                denied.err());
    }
}
