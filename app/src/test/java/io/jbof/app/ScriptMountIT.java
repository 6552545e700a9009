package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mount contract, from the packaged jar through the launcher: `jbof mount -t tcp -a 127.0.0.1 -s PORT
 * -n NQN MOUNTPOINT` prints a line with "mounted", the files are ns1, ns2 by NSID; `jbof umount` and
 * SIGTERM both end it with exit 0 and nothing left mounted.
 */
class ScriptMountIT {
    static final String NQN = "nqn.2024-01.io.jbof:mount-it";
    static final Path ROOT =
            Path.of(System.getProperty("jbof.root", "..")).toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void mountPrintsMountedNamesFilesByNsidAndUnmountsOnUmountAndOnSigterm() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        byte[] data = new byte[123_457];
        new SplittableRandom(5).nextBytes(data);
        try (DaemonProcess t = DaemonProcess.start(List.of(
                script("jbof-target"),
                "--listen",
                "127.0.0.1:0",
                "--nqn",
                NQN,
                "--namespace",
                dir.resolve("a.img") + ":32M",
                "--namespace",
                dir.resolve("b.img") + ":8M,bs=512"))) {
            List<String> mount = List.of(
                    script("jbof"),
                    "mount",
                    "-t",
                    "tcp",
                    "-a",
                    "127.0.0.1",
                    "-s",
                    String.valueOf(t.port),
                    "-n",
                    NQN,
                    mnt.toString());
            try (DaemonProcess m = DaemonProcess.start(mount, Pattern.compile("mounted"))) {
                try (var files = Files.list(mnt)) {
                    assertEquals(
                            List.of("ns1", "ns2"),
                            files.map(p -> p.getFileName().toString()).sorted().toList());
                }
                Files.write(mnt.resolve("ns2"), data, java.nio.file.StandardOpenOption.WRITE);
                Process u = new ProcessBuilder(script("jbof"), "umount", mnt.toString())
                        .inheritIO()
                        .start();
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
        try (DaemonProcess t = DaemonProcess.start(List.of(
                script("jbof-target"),
                "--listen",
                "127.0.0.1:0",
                "--nqn",
                NQN,
                "--namespace",
                dir.resolve("a.img") + ":8M"))) {
            List<String> mount = List.of(
                    script("jbof"),
                    "mount",
                    "-a",
                    "127.0.0.1",
                    "-s",
                    String.valueOf(t.port),
                    "-n",
                    NQN,
                    mnt.toString());
            try (DaemonProcess m = DaemonProcess.start(mount, Pattern.compile("mounted"))) {
                m.process.destroyForcibly(); // SIGKILL: no unmount, no flush
                assertTrue(m.process.waitFor(60, TimeUnit.SECONDS));
            }
            assertTrue(
                    Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()),
                    "the dead mount is still there");
            IOException dead = org.junit.jupiter.api.Assertions.assertThrows(
                    IOException.class, () -> Files.size(mnt.resolve("ns1")));
            assertTrue(dead.getMessage() == null || !dead.getMessage().isEmpty());
            Process u = new ProcessBuilder(script("jbof"), "umount", mnt.toString())
                    .inheritIO()
                    .start();
            assertTrue(u.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, u.exitValue(), "jbof umount of a dead mount");
            assertFalse(Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()));
            try (var files = Files.list(mnt)) {
                assertEquals(0, files.count(), "the mount point is a plain empty directory again");
            }
        }
    }

    @Test
    void aUserWithoutRootMountsThroughFusermount3AndUnmountsWithJbofUmount() throws Exception {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "no /dev/fuse on this machine (modprobe fuse)");
        assumeTrue("root".equals(System.getProperty("user.name")), "switching to another user needs root");
        assumeTrue(
                Files.getPosixFilePermissions(Path.of("/dev/fuse"))
                        .contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE),
                "/dev/fuse is not open to other users (no udev here to apply fuse's MODE=0666 rule: chmod 0666 /dev/fuse)");
        List<String> asNobody = List.of(
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/tmp", "JBOF_NO_BUILD=1");
        assumeTrue(
                run(concat(
                                asNobody,
                                List.of(
                                        "sh",
                                        "-c",
                                        "command -v fusermount3 && test -r " + ROOT.resolve("app/build/jbof-run.jar"))))
                        == 0,
                "setpriv, fusermount3 (apt-get install fuse3) or a jar readable by other users is missing");
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        Files.setOwner(mnt, mnt.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        try (DaemonProcess t = DaemonProcess.start(List.of(
                script("jbof-target"),
                "--listen",
                "127.0.0.1:0",
                "--nqn",
                NQN,
                "--namespace",
                dir.resolve("a.img") + ":8M"))) {
            List<String> mount = concat(
                    asNobody,
                    List.of(
                            script("jbof"),
                            "mount",
                            "-a",
                            "127.0.0.1",
                            "-s",
                            String.valueOf(t.port),
                            "-n",
                            NQN,
                            mnt.toString()));
            try (DaemonProcess m = DaemonProcess.start(mount, Pattern.compile("mounted"))) {
                String line = Files.readAllLines(Path.of("/proc/mounts")).stream()
                        .filter(l -> l.contains(mnt.toString()))
                        .findFirst()
                        .orElseThrow();
                assertTrue(line.contains("user_id=65534"), line);
                assertEquals(
                        0,
                        run(concat(
                                asNobody,
                                List.of(
                                        "sh",
                                        "-c",
                                        "head -c 100000 /dev/urandom > /tmp/jbof-nobody-" + t.port
                                                + " && dd if=/tmp/jbof-nobody-" + t.port + " of=" + mnt.resolve("ns1")
                                                + " bs=4096 conv=notrunc,fsync status=none"
                                                + " && cmp -n 100000 /tmp/jbof-nobody-" + t.port + " "
                                                + mnt.resolve("ns1") + " && rm /tmp/jbof-nobody-" + t.port))),
                        "the user writes and reads back through the mount");
                assertEquals(
                        0,
                        run(concat(asNobody, List.of(script("jbof"), "umount", mnt.toString()))),
                        "jbof umount by the user");
                assertTrue(m.process.waitFor(60, TimeUnit.SECONDS), "the mount process ends after jbof umount");
                assertEquals(0, m.process.exitValue(), m.outputText());
            }
            assertFalse(Files.readString(Path.of("/proc/mounts")).contains(mnt.toString()));
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new java.util.ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static int run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), String.join(" ", cmd));
        return p.exitValue();
    }

    private static String script(String name) {
        return ROOT.resolve("scripts").resolve(name).toString();
    }
}
