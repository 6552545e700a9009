package io.jbof.csi;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --attach jbof}: a volume is a {@code jbof mount} process of its own (so it outlives a restart of
 * the driver) and a loop device over the mount's file; no kernel NVMe-oF is needed on the node. Each
 * volume has its own mount, hence its own controller, so a detach never takes another volume's.
 */
final class JbofMountAttacher implements VolumeAttacher {
    private static final Logger log = LoggerFactory.getLogger(JbofMountAttacher.class);
    /** How long a jbof mount may take to show its file. */
    private static final long ATTACH_TIMEOUT_MS = 60_000;

    private final String nodeId;
    private final Path stateDir;
    private final List<String> jbof;

    /** {@code jbof}: the command that runs jbof (its launcher script, or java -jar ...). */
    JbofMountAttacher(String nodeId, Path stateDir, List<String> jbof) {
        this.nodeId = nodeId;
        this.stateDir = stateDir;
        this.jbof = List.copyOf(jbof);
    }

    /**
     * Starts the volume's jbof mount through the first of its portals that answers, waits for its file, and
     * puts a loop device over it. DH-HMAC-CHAP secrets reach the mount as @FILE (mode 0600, removed once it
     * runs), never on its command line.
     */
    @Override
    public Attachment attach(VolumeId id, String nqn, String uuid, List<String> portals, DhchapSecrets auth)
            throws IOException {
        Path dir = Files.createDirectories(stateDir.resolve(id.key()));
        if (Mounts.isMountPoint(dir))
            Commands.run(List.of("umount", "-l", dir.toString())); // a mount whose process died
        List<Path> secretFiles = new ArrayList<>();
        try {
            List<String> authArgs = new ArrayList<>();
            if (auth != null) {
                authArgs.addAll(List.of("--dhchap-secret", "@" + secretFile(id, "dhchap", auth.host(), secretFiles)));
                if (auth.ctrl() != null) {
                    authArgs.addAll(List.of(
                            "--dhchap-ctrl-secret", "@" + secretFile(id, "dhchap-ctrl", auth.ctrl(), secretFiles)));
                }
            }
            List<String> failures = new ArrayList<>();
            for (String portal : portals) {
                try {
                    return attachVia(id, nqn, portal.strip(), authArgs, dir);
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) throw e;
                    failures.add(e.getStatus().getDescription());
                    log.warn("volume {}: {}", id, e.getStatus().getDescription());
                }
            }
            throw Status.UNAVAILABLE
                    .withDescription("no portal of " + nqn + " could be attached: " + String.join("; ", failures))
                    .asRuntimeException();
        } finally {
            for (Path f : secretFiles) Files.deleteIfExists(f);
        }
    }

    /** Writes {@code secret} to a file only root reads, for a jbof mount's @FILE option. */
    private Path secretFile(VolumeId id, String kind, String secret, List<Path> made) throws IOException {
        Path f = stateDir.resolve(id.key() + "." + kind);
        Files.deleteIfExists(f);
        Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        made.add(f);
        Files.writeString(f, secret + "\n");
        return f;
    }

    /** One portal's try: the jbof mount process, ready or failed (UNAVAILABLE when it ended). */
    private Attachment attachVia(VolumeId id, String nqn, String portal, List<String> authArgs, Path dir)
            throws IOException {
        int colon = portal.lastIndexOf(':');
        List<String> cmd = new ArrayList<>(jbof);
        cmd.addAll(List.of(
                "mount",
                "-a",
                portal.substring(0, colon),
                "-s",
                portal.substring(colon + 1),
                "-n",
                nqn,
                "-q",
                nodeId,
                "--direct-io"));
        cmd.addAll(authArgs);
        cmd.add(dir.toString());
        Path logFile = stateDir.resolve(id.key() + ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(logFile.toFile())
                .start();
        Path file = dir.resolve("ns1");
        long deadline = System.currentTimeMillis() + ATTACH_TIMEOUT_MS;
        try {
            // The mount is ready when the kernel shows it and its file is there; the process ending first is a failure.
            while (!isFuse(Mounts.typeAt(dir)) || !Files.isRegularFile(file)) {
                if (p.waitFor(50, TimeUnit.MILLISECONDS)) {
                    throw Status.UNAVAILABLE
                            .withDescription("jbof mount of " + nqn + " at " + portal + " ended: "
                                    + Files.readString(logFile).strip())
                            .asRuntimeException();
                }
                if (System.currentTimeMillis() > deadline) {
                    p.destroyForcibly();
                    throw Status.DEADLINE_EXCEEDED
                            .withDescription("jbof mount of " + nqn + " at " + portal + " showed no file within 60 s")
                            .asRuntimeException();
                }
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while attaching " + id, e);
        }
        String device = Commands.run(List.of("losetup", "--find", "--show", "--direct-io=on", file.toString()))
                .strip();
        log.info("volume {} attached: jbof mount (pid {}) at {}, {}", id, p.pid(), dir, device);
        return new Attachment(device, nqn, p.pid(), dir.toString());
    }

    @Override
    public boolean alive(Attachment a) throws IOException {
        return a.mountDir() != null
                && ProcessHandle.of(a.pid()).map(ProcessHandle::isAlive).orElse(false)
                && Mounts.isMountPoint(Path.of(a.mountDir()));
    }

    /** Fails, rather than say success, unless the mount process is gone and nothing is left mounted. */
    @Override
    public void detach(VolumeId id, Attachment a, int othersOnSubsystem) throws IOException {
        if (a.mountDir() == null) return; // not one of ours (attached another way)
        Path dir = Path.of(a.mountDir());
        if (a.device() != null && isLoopOver(a.device(), dir.resolve("ns1")))
            Commands.run(List.of("losetup", "-d", a.device()));
        if (Mounts.isMountPoint(dir)) {
            List<String> cmd = new ArrayList<>(jbof);
            cmd.addAll(List.of("umount", dir.toString()));
            Commands.run(cmd);
        }
        Optional<ProcessHandle> p = ProcessHandle.of(a.pid());
        if (p.isPresent()) {
            try {
                p.get().onExit().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw Status.INTERNAL
                        .withDescription(
                                "volume " + id + ": its jbof mount (pid " + a.pid() + ") did not end after umount")
                        .asRuntimeException();
            }
        }
        if (Mounts.isMountPoint(dir)) {
            throw Status.INTERNAL
                    .withDescription("volume " + id + " is still mounted at " + dir + " after its detach")
                    .asRuntimeException();
        }
        Files.deleteIfExists(dir);
    }

    /** The loop device takes the mount's file size (which a jbof mount keeps from when it started). */
    @Override
    public long refreshSize(Attachment a) throws IOException {
        Commands.run(List.of("losetup", "--set-capacity", a.device()));
        return Devices.bytes(a.device());
    }

    @Override
    public boolean growsOnline() {
        return false; // a jbof mount keeps the size its file was opened with
    }

    private static boolean isLoopOver(String device, Path file) {
        try {
            return Commands.run(List.of("losetup", "--noheadings", "--output", "BACK-FILE", device))
                    .strip()
                    .equals(file.toString());
        } catch (IOException e) {
            return false; // no such loop device any more
        }
    }

    private static boolean isFuse(String type) {
        return type != null && (type.equals("fuse") || type.startsWith("fuse."));
    }
}
