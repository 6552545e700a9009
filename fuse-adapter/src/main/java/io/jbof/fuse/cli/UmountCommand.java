package io.jbof.fuse.cli;

import io.jbof.fuse.Unmount;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(
        name = "umount",
        description = "Unmount a 'jbof mount' (the mount process then flushes, shuts the controller down and exits).")
public final class UmountCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "MOUNTPOINT")
    Path mountPoint;

    @Option(
            names = {"-l", "--lazy"},
            description = "Detach now even while files are open (umount -l).")
    boolean lazy;

    @Override
    public Integer call() throws Exception {
        int rc = Unmount.run(mountPoint, lazy);
        if (rc != 0) {
            System.err.println(
                    "jbof umount: " + mountPoint + " was not unmounted (is it a jbof mount? busy? try --lazy)");
            return 2;
        }
        return 0;
    }
}
