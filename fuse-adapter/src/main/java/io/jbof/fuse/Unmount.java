package io.jbof.fuse;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Unmounts a FUSE mount point with fusermount (or umount where fusermount is missing, as root). */
public final class Unmount {
    private Unmount() {}

    /**
     * @param lazy detach now even while files are open (they get errors), as {@code umount -l}
     * @return the tool's exit status; its messages go to this process's stderr
     */
    public static int run(Path mountPoint, boolean lazy) throws IOException {
        String mp = mountPoint.toAbsolutePath().toString();
        List<String> cmd = new ArrayList<>(List.of("fusermount", "-u"));
        if (lazy) cmd.add("-z");
        cmd.add(mp);
        try {
            return exec(cmd);
        } catch (IOException noFusermount) {
            return exec(lazy ? List.of("umount", "-l", mp) : List.of("umount", mp));
        }
    }

    private static int exec(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish within 30 s");
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
