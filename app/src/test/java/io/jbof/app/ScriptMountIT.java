package io.jbof.app;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The mount contract, from the packaged jar through the launcher: `jbof mount -t tcp -a 127.0.0.1 -s PORT
 * -n NQN MOUNTPOINT` prints a line with "mounted", the files are ns1, ns2 by NSID; `jbof umount` and
 * SIGTERM both end it with exit 0 and nothing left mounted.
 */
class ScriptMountIT {
    static final String NQN = "nqn.2024-01.io.jbof:mount-it";
    static final Path ROOT = Path.of(System.getProperty("jbof.root", "..")).toAbsolutePath().normalize();
    @TempDir Path dir;

    @Test
    void mountPrintsMountedNamesFilesByNsidAndUnmountsOnUmountAndOnSigterm() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")),
                "no /dev/fuse on this machine (modprobe fuse)");
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        byte[] data = new byte[123_457];
        new SplittableRandom(5).nextBytes(data);
        try (DaemonProcess t = DaemonProcess.start(List.of(script("jbof-target"), "--listen", "127.0.0.1:0", "--nqn", NQN,
                "--namespace", dir.resolve("a.img") + ":32M", "--namespace", dir.resolve("b.img") + ":8M,bs=512"))) {
            List<String> mount = List.of(script("jbof"), "mount", "-t", "tcp", "-a", "127.0.0.1", "-s", String.valueOf(t.port), "-n", NQN, mnt.toString());
            try (DaemonProcess m = DaemonProcess.start(mount, Pattern.compile("mounted"))) {
                try (var files = Files.list(mnt)) {
                    assertEquals(List.of("ns1", "ns2"), files.map(p -> p.getFileName().toString()).sorted().toList());
                }
                Files.write(mnt.resolve("ns2"), data, java.nio.file.StandardOpenOption.WRITE);
                Process u = new ProcessBuilder(script("jbof"), "umount", mnt.toString()).inheritIO().start();
                assertTrue(u.waitFor(60, TimeUnit.SECONDS));
                assertEquals(0, u.exitValue(), "jbof umount");
                assertTrue(m.process.waitFor(60, TimeUnit.SECONDS), "the mount process ends after jbof umount");
                assertEquals(0, m.process.exitValue(), m.outputText());
            }
            assertFalse(Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()));
            try (DaemonProcess m = DaemonProcess.start(mount, Pattern.compile("mounted"))) {
                byte[] back = new byte[data.length];
                try (var in = Files.newInputStream(mnt.resolve("ns2"))) {
                    assertEquals(data.length, in.readNBytes(back, 0, back.length));
                }
                assertArrayEquals(data, back, "written by the first mount, read by the second");
                assertEquals(0, m.terminate(), "SIGTERM: unmount, flush, exit 0; output:\n" + m.outputText());
            }
            assertFalse(Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()));
        }
    }

    @Test
    void aMountWhoseProcessWasKilledIsClearedByJbofUmount() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        try (DaemonProcess t = DaemonProcess.start(List.of(script("jbof-target"), "--listen", "127.0.0.1:0", "--nqn", NQN,
                "--namespace", dir.resolve("a.img") + ":8M"))) {
            List<String> mount = List.of(script("jbof"), "mount", "-a", "127.0.0.1", "-s", String.valueOf(t.port), "-n", NQN, mnt.toString());
            try (DaemonProcess m = DaemonProcess.start(mount, Pattern.compile("mounted"))) {
                m.process.destroyForcibly(); // SIGKILL: no unmount, no flush
                assertTrue(m.process.waitFor(60, TimeUnit.SECONDS));
            }
            assertTrue(Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()), "the dead mount is still there");
            IOException dead = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> Files.size(mnt.resolve("ns1")));
            assertTrue(dead.getMessage() == null || !dead.getMessage().isEmpty());
            Process u = new ProcessBuilder(script("jbof"), "umount", mnt.toString()).inheritIO().start();
            assertTrue(u.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, u.exitValue(), "jbof umount of a dead mount");
            assertFalse(Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()));
            try (var files = Files.list(mnt)) {
                assertEquals(0, files.count(), "the mount point is a plain empty directory again");
            }
        }
    }

    private static String script(String name) {
        return ROOT.resolve("scripts").resolve(name).toString();
    }
}
