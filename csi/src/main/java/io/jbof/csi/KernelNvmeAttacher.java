package io.jbof.csi;

import io.grpc.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --attach kernel}: the node's own nvme-tcp connects to every portal of the volume (with the
 * kernel's native multipath, one block device over all the paths), and the device is found by its
 * namespace UUID in sysfs, not by a udev link. The connect is written to /dev/nvme-fabrics, as nvme-cli
 * does, so that a DH-HMAC-CHAP secret never appears on a command line. A detach disconnects the
 * subsystem's controllers only when no other staged volume uses that subsystem, and fails unless the
 * kernel shows them gone.
 */
final class KernelNvmeAttacher implements VolumeAttacher {
    private static final Logger log = LoggerFactory.getLogger(KernelNvmeAttacher.class);
    private static final Path FABRICS = Path.of("/dev/nvme-fabrics");
    private static final Path CONTROLLERS = Path.of("/sys/class/nvme");
    private static final Path BLOCK = Path.of("/sys/block");
    /** A namespace's own device (a multipath head, or the one path), not a hidden path device nvmeXcYnZ. */
    private static final Pattern NAMESPACE_DEVICE = Pattern.compile("nvme\\d+n\\d+");
    /** How long the kernel may take to show a device after its connect, or drop controllers after a delete. */
    private static final long SETTLE_MS = 30_000;

    private final String nodeId;
    /** One host ID per host NQN, as the kernel requires of every controller a host makes. */
    private final String hostId;

    KernelNvmeAttacher(String nodeId) {
        this.nodeId = nodeId;
        this.hostId =
                UUID.nameUUIDFromBytes(nodeId.getBytes(StandardCharsets.UTF_8)).toString();
    }

    @Override
    public Attachment attach(VolumeId id, String nqn, String uuid, List<String> portals, DhchapSecrets auth)
            throws IOException {
        if (uuid == null || uuid.isEmpty())
            throw ControllerService.invalid("publish_context lacks the namespace uuid the device is found by");
        if (!Files.exists(FABRICS)) Commands.run(List.of("modprobe", "nvme-tcp"));
        List<String> failures = new ArrayList<>();
        List<String> made = new ArrayList<>(); // controllers this call connected, taken away again if it fails
        int paths = 0;
        for (String portal : portals) {
            String p = portal.strip();
            if (controllerAt(nqn, p) != null) {
                paths++; // a retried stage: this path is there already
                continue;
            }
            try {
                String answer = connect(nqn, p, auth);
                log.info("volume {}: connected {} at {} ({})", id, nqn, p, answer);
                String instance = answer.replaceFirst("^instance=(\\d+).*$", "$1");
                if (!instance.equals(answer)) made.add("nvme" + instance);
                paths++;
            } catch (IOException e) {
                failures.add(p + ": " + e.getMessage());
                log.warn("volume {}: connect to {} failed: {}", id, p, e.getMessage());
            }
        }
        if (paths == 0) {
            throw Status.UNAVAILABLE
                    .withDescription("no portal of " + nqn + " could be connected (the kernel logs why): "
                            + String.join("; ", failures))
                    .asRuntimeException();
        }
        String device = awaitDevice(uuid);
        if (device == null) {
            for (String c : made) deleteController(c); // no half-attached volume that no state file names
            throw Status.DEADLINE_EXCEEDED
                    .withDescription("connected to " + nqn + ", but no block device with namespace UUID " + uuid
                            + " appeared within 30 s")
                    .asRuntimeException();
        }
        return new Attachment("/dev/" + device, nqn, 0, null);
    }

    /** Connects one path; what the kernel answered (instance=N,cntlid=M). */
    private String connect(String nqn, String portal, DhchapSecrets auth) throws IOException {
        int colon = portal.lastIndexOf(':');
        if (colon <= 0) throw new IOException("portal '" + portal + "' is not HOST:PORT");
        StringBuilder o = new StringBuilder()
                .append("nqn=")
                .append(nqn)
                .append(",transport=tcp,traddr=")
                .append(portal, 0, colon)
                .append(",trsvcid=")
                .append(portal.substring(colon + 1))
                .append(",hostnqn=")
                .append(nodeId)
                .append(",hostid=")
                .append(hostId);
        if (auth != null) {
            o.append(",dhchap_secret=").append(auth.host());
            if (auth.ctrl() != null) o.append(",dhchap_ctrl_secret=").append(auth.ctrl());
        }
        try (FileChannel ch = FileChannel.open(FABRICS, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(o.toString().getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer answer = ByteBuffer.allocate(128);
            ch.read(answer);
            return new String(answer.array(), 0, answer.position(), StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            // The kernel refuses with an errno only; the reason (authentication, unknown host, ...) is in its log.
            throw new IOException("the kernel refused the connect: " + e.getMessage(), e);
        }
    }

    /** The name of the namespace device with {@code uuid}, polling sysfs until it shows or 30 s pass. */
    private static String awaitDevice(String uuid) throws IOException {
        long deadline = System.currentTimeMillis() + SETTLE_MS;
        while (true) {
            String found = deviceWithUuid(uuid);
            if (found != null || System.currentTimeMillis() > deadline) return found;
            pause();
        }
    }

    static String deviceWithUuid(String uuid) throws IOException {
        try (Stream<Path> devices = Files.list(BLOCK)) {
            for (Path d : devices.sorted().toList()) {
                String name = d.getFileName().toString();
                if (!NAMESPACE_DEVICE.matcher(name).matches()) continue;
                if (uuid.equalsIgnoreCase(read(d.resolve("uuid")))) return name;
            }
        }
        return null;
    }

    /** The controller (nvmeN) connected to {@code nqn} through {@code portal}, or null. */
    private static String controllerAt(String nqn, String portal) throws IOException {
        int colon = portal.lastIndexOf(':');
        String addr = "traddr=" + portal.substring(0, colon) + ",trsvcid=" + portal.substring(colon + 1);
        for (String c : controllersOf(nqn)) {
            String a = read(CONTROLLERS.resolve(c).resolve("address"));
            if (a != null && (a.equals(addr) || a.startsWith(addr + ","))) return c;
        }
        return null;
    }

    /** The controllers (nvmeN) the kernel has for subsystem {@code nqn}. */
    static List<String> controllersOf(String nqn) throws IOException {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(CONTROLLERS)) return out;
        try (Stream<Path> cs = Files.list(CONTROLLERS)) {
            for (Path c : cs.sorted().toList()) {
                if (nqn.equals(read(c.resolve("subsysnqn"))))
                    out.add(c.getFileName().toString());
            }
        }
        return out;
    }

    @Override
    public boolean alive(Attachment a) throws IOException {
        return a.mountDir() == null
                && a.device() != null
                && Files.exists(BLOCK.resolve(Path.of(a.device()).getFileName()))
                && !controllersOf(a.nqn()).isEmpty();
    }

    @Override
    public void detach(VolumeId id, Attachment a, int othersOnSubsystem) throws IOException {
        if (a.mountDir() != null) return; // attached by a jbof mount, not by the kernel
        if (othersOnSubsystem > 0) {
            log.info("volume {}: {} stays connected, {} other staged volume(s) use it", id, a.nqn(), othersOnSubsystem);
            return;
        }
        for (String c : controllersOf(a.nqn())) deleteController(c);
        long deadline = System.currentTimeMillis() + SETTLE_MS;
        while (!controllersOf(a.nqn()).isEmpty()
                || Files.exists(BLOCK.resolve(Path.of(a.device()).getFileName()))) {
            if (System.currentTimeMillis() > deadline) {
                throw Status.INTERNAL
                        .withDescription("volume " + id + ": after disconnecting " + a.nqn() + ", the kernel still has "
                                + controllersOf(a.nqn()) + " and " + a.device())
                        .asRuntimeException();
            }
            pause();
        }
    }

    /** Disconnects controller {@code c} (as {@code nvme disconnect}); one already gone is what was wanted. */
    private static void deleteController(String c) throws IOException {
        try {
            Files.writeString(CONTROLLERS.resolve(c).resolve("delete_controller"), "1");
        } catch (IOException e) {
            if (Files.exists(CONTROLLERS.resolve(c))) throw e;
        }
    }

    /** Asks each controller to rescan its namespaces (as {@code nvme ns-rescan}); the device's size then. */
    @Override
    public long refreshSize(Attachment a) throws IOException {
        for (String c : controllersOf(a.nqn()))
            Files.writeString(CONTROLLERS.resolve(c).resolve("rescan_controller"), "1");
        return Devices.bytes(a.device());
    }

    @Override
    public boolean growsOnline() {
        return true; // the target's namespace-changed notice, or the rescan, resizes the device in use
    }

    private static String read(Path f) {
        try {
            return Files.readString(f).strip();
        } catch (IOException e) {
            return null; // gone meanwhile, or not this kind of device
        }
    }

    private static void pause() throws IOException {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
