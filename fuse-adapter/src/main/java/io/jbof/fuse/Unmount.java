package io.jbof.fuse;

import io.jbof.fuse.kernel.FuseDevice;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Unmounts a FUSE mount point: umount2(2) as root, else fusermount3 -u (fusermount where that is missing). */
public final class Unmount {
    private Unmount() {}

    /**
     * @param lazy detach now even while files are open, as {@code umount -l}; also clears a mount whose
     *             daemon was killed (its files answer ENOTCONN until then)
     * @return 0, or the errno / tool exit status; messages go to this process's stderr
     */
    public static int run(Path mountPoint, boolean lazy) throws IOException {
        int rc = FuseDevice.unmount(mountPoint, lazy);
        if (rc == 0 || rc != 1 /* EPERM: not root, try the setuid helper */) return rc;
        String mp = mountPoint.toAbsolutePath().toString();
        for (String tool : new String[] {"fusermount3", "fusermount"}) {
            List<String> cmd = new ArrayList<>(List.of(tool, "-u"));
            if (lazy) cmd.add("-z");
            cmd.add(mp);
            try {
                return exec(cmd);
            } catch (IOException missing) {
                // try the next
            }
        }
        throw new IOException("cannot unmount " + mp
                + ": not root, and neither fusermount3 nor fusermount is installed (apt-get install fuse3)");
    }

    private static int exec(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
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
