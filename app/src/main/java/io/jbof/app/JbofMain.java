package io.jbof.app;

import io.jbof.bench.BenchCommand;
import io.jbof.fuse.cli.MountCommand;
import io.jbof.fuse.cli.UmountCommand;
import io.jbof.initiator.cli.DiscoverCommand;
import io.jbof.initiator.cli.DurabilityCommand;
import io.jbof.initiator.cli.GenTlsKeyCommand;
import io.jbof.initiator.cli.IdCtrlCommand;
import io.jbof.initiator.cli.IdNsCommand;
import io.jbof.initiator.cli.ListCommand;
import io.jbof.initiator.cli.ReadCommand;
import io.jbof.initiator.cli.ShowHostnqnCommand;
import io.jbof.initiator.cli.VerifyCommand;
import io.jbof.initiator.cli.WriteCommand;
import io.jbof.nvme.NvmeException;
import io.jbof.target.cli.Logging;
import io.jbof.target.cli.TargetMain;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code jbof}: the initiator verbs (shaped like nvme-cli), the embedded demo, and {@code jbof target}. */
@Command(
        name = "jbof",
        mixinStandardHelpOptions = true,
        version = "jbof 0.1.0",
        description = "NVMe-over-Fabrics initiator and tools for jbof targets (and any NVMe/TCP target).",
        subcommands = {
            DemoCommand.class,
            DiscoverCommand.class,
            ListCommand.class,
            IdCtrlCommand.class,
            IdNsCommand.class,
            ReadCommand.class,
            WriteCommand.class,
            VerifyCommand.class,
            DurabilityCommand.class,
            BenchCommand.class,
            MountCommand.class,
            UmountCommand.class,
            ShowHostnqnCommand.class,
            GenTlsKeyCommand.class,
            CommandLine.HelpCommand.class,
            picocli.AutoComplete.GenerateCompletion.class
        },
        footer = {
            "",
            "Run 'jbof target --help' for the target daemon.",
            "Examples:",
            "  jbof demo",
            "  jbof discover -t tcp -a 127.0.0.1 -s 4420",
            "  jbof id-ctrl -a 127.0.0.1 -s 4420 -n nqn.2024-01.io.jbof:vol1",
            "  jbof write -n nqn.2024-01.io.jbof:vol1 --namespace-id 1 --offset 0 --input data.bin",
            "  jbof mount -n nqn.2024-01.io.jbof:vol1 /mnt/vol1",
            "  jbof bench -n nqn.2024-01.io.jbof:vol1 --rw randread --bs 4k --iodepth 32 --runtime 10s",
            "  source <(jbof generate-completion)      # bash completion of every verb and option"
        })
public final class JbofMain {
    public static void main(String[] args) {
        boolean verbose =
                Arrays.asList(args).contains("-v") || Arrays.asList(args).contains("--verbose");
        Logging.configure(verbose);
        if (args.length > 0 && args[0].equals("target")) {
            // The daemon keeps its own name and options: `jbof target ...` is `jbof-target ...`.
            TargetMain.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        System.exit(commandLine(verbose).execute(args));
    }

    static CommandLine commandLine(boolean verbose) {
        CommandLine cl = new CommandLine(new JbofMain());
        withHelp(cl);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("jbof " + cmd.getCommandName() + ": " + describe(ex));
            if (verbose) ex.printStackTrace(cmd.getErr());
            return ex instanceof NvmeException ? 3 : 2;
        });
        return cl;
    }

    /** Every verb answers -h/--help (and -V/--version), before its own arguments are checked. */
    static void withHelp(CommandLine cl) {
        for (CommandLine sub : cl.getSubcommands().values()) {
            if (!sub.getCommandSpec().mixinStandardHelpOptions())
                sub.getCommandSpec().mixinStandardHelpOptions(true);
            sub.getCommandSpec().version("jbof 0.1.0");
            withHelp(sub);
        }
    }

    private static String describe(Throwable ex) {
        String m = ex.getMessage() != null ? ex.getMessage() : ex.getClass().getSimpleName();
        Throwable c = ex.getCause();
        if (c != null && c.getMessage() != null && !m.contains(c.getMessage())) m += " (" + c.getMessage() + ")";
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof UnknownHostException) {
                return "cannot resolve the target's host name (" + t.getMessage()
                        + "): give -a/--traddr an IP address, or a name this machine resolves";
            }
        }
        if (ex instanceof ConnectException || c instanceof ConnectException) {
            m += " -- is a target listening there? start one with: scripts/jbof-target --nqn NQN --namespace FILE:SIZE";
        }
        return m;
    }
}
