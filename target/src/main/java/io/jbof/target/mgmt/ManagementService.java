package io.jbof.target.mgmt;

import io.jbof.nvme.AnaState;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.controller.Controller;
import io.jbof.target.controller.PortInfo;
import io.jbof.target.mgmt.ManagementException.Kind;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Listener;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.util.Sizes;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The target's live configuration, changed one call at a time: each change is applied to the running
 * target, recorded in the configuration it was started from, and (when it came from a file) that file
 * is rewritten atomically before the call returns, so the file always loads into what is running.
 */
public final class ManagementService {
    private static final Logger log = LoggerFactory.getLogger(ManagementService.class);

    private final TargetServer target;
    /** What is running, in the form {@code --config} loads; changed only under this object's monitor. */
    private final TargetConfig config;
    /** Where every change is saved; null when the target was configured by flags only (save_config writes on request). */
    private final Path configFile;

    /** {@code config}: what {@code target} was started from (the start wrote its NSIDs and UUIDs into it). */
    public ManagementService(TargetServer target, TargetConfig config, Path configFile) {
        this.target = target;
        this.config = ConfigFile.copy(config);
        this.configFile = configFile;
    }

    // ---- views (what nvmf_get_subsystems and friends return) ----

    public record NamespaceView(
            int nsid,
            String path,
            long size,
            int blockSize,
            String uuid,
            boolean readOnly,
            boolean direct,
            boolean blockDevice,
            int anagrpid) {}

    public record AnaStateView(int anaGroup, String anaState) {}

    public record ListenerView(
            String trtype, String adrfam, String traddr, String trsvcid, List<AnaStateView> anaStates) {}

    public record SubsystemView(
            String nqn,
            String subtype,
            String modelNumber,
            String serialNumber,
            boolean allowAnyHost,
            List<String> hosts,
            List<NamespaceView> namespaces,
            List<ListenerView> listenAddresses,
            int controllers) {}

    /** {@code listen}: the address:port the host connected through. */
    public record ControllerView(
            int cntlid,
            String subnqn,
            String hostnqn,
            String listen,
            int queues,
            long readCommands,
            long writeCommands,
            long bytesRead,
            long bytesWritten) {}

    public record Stats(
            List<ControllerView> controllers,
            long inflightBytes,
            long inflightLimit,
            long inflightWaits,
            long discoveryGeneration) {}

    public record FolderCapacity(String folder, long totalBytes, long usableBytes, List<String> files) {}

    public synchronized List<SubsystemView> subsystems() {
        List<SubsystemView> out = new ArrayList<>();
        for (Subsystem s : target.subsystems()) {
            List<NamespaceView> nss = new ArrayList<>();
            for (TargetNamespace ns : s.namespaces()) {
                nss.add(new NamespaceView(
                        ns.nsid(),
                        ns.path().toString(),
                        ns.sizeBytes(),
                        ns.blockSize(),
                        ns.uuid().toString(),
                        ns.readOnly(),
                        ns.direct(),
                        ns.blockDevice(),
                        ns.anaGroup()));
            }
            out.add(new SubsystemView(
                    s.nqn(),
                    "NVMe",
                    s.model(),
                    s.serial(),
                    s.allowsAnyHost(),
                    List.copyOf(s.allowedHosts()),
                    nss,
                    listeners(s),
                    target.controllersOf(s, null).size()));
        }
        return out;
    }

    /** A subsystem's listeners with the state of each ANA group in use (nvmf_subsystem_get_listeners). */
    public synchronized List<ListenerView> listeners(String nqn) {
        existing(nqn);
        return listeners(target.subsystem(nqn));
    }

    private List<ListenerView> listeners(Subsystem s) {
        List<ListenerView> out = new ArrayList<>();
        int[] groups = s.anaGroups();
        for (Listener l : s.listeners()) {
            PortInfo p = target.port(l.portId());
            if (p == null) continue;
            List<AnaStateView> states = new ArrayList<>();
            for (int g : groups) states.add(new AnaStateView(g, l.state(g).id()));
            out.add(new ListenerView(
                    p.transport().id().toUpperCase(),
                    p.ipv6() ? "IPv6" : "IPv4",
                    p.address(),
                    Integer.toString(p.port()),
                    states));
        }
        return out;
    }

    public synchronized Stats stats() {
        List<ControllerView> cs = new ArrayList<>();
        for (Subsystem s : target.subsystems()) {
            for (Controller c : target.controllersOf(s, null)) {
                long[] io = c.ioCounters();
                int queues = 0;
                for (Object q : c.queues()) if (q != null) queues++;
                PortInfo p =
                        c.listener() == null ? null : target.port(c.listener().portId());
                String listen = p == null ? null : p.hostPort();
                cs.add(new ControllerView(c.id(), s.nqn(), c.hostNqn(), listen, queues, io[0], io[1], io[2], io[3]));
            }
        }
        return new Stats(
                cs,
                target.inflight().used(),
                target.inflight().limit(),
                target.inflight().waits(),
                target.discoveryGeneration());
    }

    /** Total and free space of each folder that holds namespace files (where new volumes would go). */
    public synchronized List<FolderCapacity> capacity() {
        Map<Path, List<String>> byFolder = new LinkedHashMap<>();
        for (Subsystem s : target.subsystems()) {
            for (TargetNamespace ns : s.namespaces()) {
                if (ns.blockDevice()) continue;
                Path dir = ns.path().toAbsolutePath().getParent();
                byFolder.computeIfAbsent(dir, d -> new ArrayList<>())
                        .add(ns.path().toString());
            }
        }
        List<FolderCapacity> out = new ArrayList<>();
        for (Map.Entry<Path, List<String>> e : byFolder.entrySet()) {
            try {
                FileStore fs = Files.getFileStore(e.getKey());
                out.add(new FolderCapacity(
                        e.getKey().toString(), fs.getTotalSpace(), fs.getUsableSpace(), e.getValue()));
            } catch (IOException ex) {
                throw new ManagementException(
                        Kind.IO_ERROR, "cannot read the capacity of " + e.getKey() + ": " + ex.getMessage(), ex);
            }
        }
        return out;
    }

    /** A copy of the running configuration. */
    public synchronized TargetConfig configuration() {
        return ConfigFile.copy(config);
    }

    /** What is running, for a caller over the API: as {@link #configuration()}, with secrets given as values hidden (an @FILE stays). */
    public synchronized TargetConfig redactedConfiguration() {
        TargetConfig c = ConfigFile.copy(config);
        for (TargetConfig.SubsystemConfig sc : c.subsystems) {
            for (Map<String, String> secrets : List.of(sc.dhchapSecrets, sc.dhchapCtrlSecrets, sc.tlsKeys))
                secrets.replaceAll((host, v) -> v.startsWith("@") ? v : REDACTED);
        }
        return c;
    }

    /** In place of a secret {@link #redactedConfiguration()} hides. */
    public static final String REDACTED = "(secret: save_config with a file on the target keeps it)";

    // ---- changes ----

    public synchronized void createSubsystem(String nqn, boolean allowAnyHost, String model) {
        if (find(nqn) != null)
            throw new ManagementException(Kind.ALREADY_EXISTS, "subsystem " + nqn + " already exists");
        TargetConfig.SubsystemConfig sc = new TargetConfig.SubsystemConfig();
        sc.nqn = nqn;
        sc.allowAnyHost = allowAnyHost;
        if (model != null) sc.model = model;
        apply(() -> target.addSubsystem(sc));
        config.subsystems.add(sc);
        persist("subsystem " + nqn + " created");
    }

    /**
     * Deletes a subsystem; with {@code deleteFiles}, also the regular files its namespaces were (a block
     * device is never deleted), as a provisioner wants when it removes a volume for good. A file still
     * open by a closing namespace is only unlinked: its space comes back when the namespace closes.
     */
    public synchronized void deleteSubsystem(String nqn, boolean deleteFiles) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        List<Path> files = new ArrayList<>();
        if (deleteFiles) {
            for (TargetNamespace ns : target.subsystem(nqn).namespaces()) {
                if (!ns.blockDevice()) files.add(ns.path());
            }
        }
        apply(() -> {
            target.removeSubsystem(nqn);
            return null;
        });
        config.subsystems.remove(sc);
        persist("subsystem " + nqn + " deleted");
        for (Path f : files) {
            try {
                Files.deleteIfExists(f);
            } catch (IOException e) {
                throw new ManagementException(
                        Kind.IO_ERROR,
                        "subsystem " + nqn + " is deleted, but its file " + f + " is not: " + e.getMessage(),
                        e);
            }
        }
    }

    /** Adds a namespace; returns its NSID. A new UUID is generated unless one is given, and stored. */
    public synchronized int addNamespace(String nqn, TargetConfig.NamespaceConfig nc) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        TargetConfig.NamespaceConfig stored = copy(nc);
        if (stored.uuid == null) stored.uuid = UUID.randomUUID().toString();
        int nsid = apply(() -> target.addNamespace(nqn, stored)).nsid(); // stored now holds the NSID it got
        sc.namespaces.add(stored);
        persist("namespace " + nsid + " of " + nqn + " added");
        return nsid;
    }

    public synchronized void removeNamespace(String nqn, int nsid) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        boolean removed = apply(() -> target.removeNamespace(nqn, nsid));
        if (!removed) throw new ManagementException(Kind.NOT_FOUND, "subsystem " + nqn + " has no namespace " + nsid);
        sc.namespaces.removeIf(n -> n.nsid != null && n.nsid == nsid);
        persist("namespace " + nsid + " of " + nqn + " removed");
    }

    /** Grows a namespace to {@code sizeBytes}; returns its size now. */
    public synchronized long resizeNamespace(String nqn, int nsid, long sizeBytes) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        long size = apply(() -> target.growNamespace(nqn, nsid, sizeBytes)).sizeBytes();
        for (TargetConfig.NamespaceConfig n : sc.namespaces)
            if (n.nsid != null && n.nsid == nsid) n.size = Long.toString(size);
        persist("namespace " + nsid + " of " + nqn + " resized to " + Sizes.format(size));
        return size;
    }

    public synchronized void addHost(String nqn, String hostNqn) {
        addHost(nqn, hostNqn, null, null);
    }

    /**
     * Allows a host; with {@code dhchapSecret} (DHHC-1:...), only after DH-HMAC-CHAP with it, and with
     * {@code dhchapCtrlSecret} the host may authenticate the target too. The secrets are values, never
     * {@code @FILE}: a caller must not make the target read its own files. They are saved with the
     * configuration (a file only root reads) and never returned or logged.
     */
    public synchronized void addHost(String nqn, String hostNqn, String dhchapSecret, String dhchapCtrlSecret) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        DhchapKey host = key(dhchapSecret, "dhchap_key");
        DhchapKey ctrl = key(dhchapCtrlSecret, "dhchap_ctrlr_key");
        apply(() -> target.addHost(nqn, hostNqn, host, ctrl));
        if (!sc.hosts.contains(hostNqn)) sc.hosts.add(hostNqn);
        if (host != null) {
            sc.dhchapSecrets.put(hostNqn, dhchapSecret);
            if (ctrl != null) sc.dhchapCtrlSecrets.put(hostNqn, dhchapCtrlSecret);
            else sc.dhchapCtrlSecrets.remove(hostNqn);
        }
        persist("host " + hostNqn + " allowed on " + nqn + (host != null ? " with DH-HMAC-CHAP" : ""));
    }

    private static DhchapKey key(String secret, String param) {
        if (secret == null) return null;
        try {
            return DhchapKey.parse(secret);
        } catch (IllegalArgumentException e) {
            throw new ManagementException(
                    Kind.INVALID_PARAMS, param + ": " + e.getMessage(), e); // says what, never the key
        }
    }

    public synchronized void removeHost(String nqn, String hostNqn) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        boolean known =
                sc.hosts.contains(hostNqn) || sc.dhchapSecrets.containsKey(hostNqn) || sc.tlsKeys.containsKey(hostNqn);
        if (!known) throw new ManagementException(Kind.NOT_FOUND, "host " + hostNqn + " is not allowed on " + nqn);
        apply(() -> target.removeHost(nqn, hostNqn));
        sc.hosts.remove(hostNqn);
        sc.dhchapSecrets.remove(hostNqn);
        sc.dhchapCtrlSecrets.remove(hostNqn);
        sc.tlsKeys.remove(hostNqn);
        persist("host " + hostNqn + " removed from " + nqn);
    }

    public synchronized void allowAnyHost(String nqn, boolean any) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        apply(() -> {
            target.allowAnyHost(nqn, any);
            return null;
        });
        sc.allowAnyHost = any;
        persist("subsystem " + nqn + (any ? " lets any host in" : " lets only its hosts in"));
    }

    /** Makes a subsystem reachable on {@code listen} (binding it when the target does not listen there yet). */
    public synchronized void addListener(String nqn, String listen, String trtype) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        checkTransport(trtype);
        PortInfo p = apply(() -> target.addListener(nqn, listen));
        String spec = target.portSpec(p.portId());
        if (!config.listen.contains(spec)) {
            pinListenLists(); // a subsystem that listened "everywhere" meant the ports there were, not this new one
            config.listen.add(spec);
        }
        if (sc.listen == null) sc.listen = new ArrayList<>(config.listen);
        if (!sc.listen.contains(spec)) sc.listen.add(spec);
        persist("subsystem " + nqn + " listens on " + spec);
    }

    public synchronized void removeListener(String nqn, String listen, String trtype) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        checkTransport(trtype);
        PortInfo p = apply(() -> target.removeListener(nqn, listen));
        String spec = target.portSpec(p.portId());
        if (sc.listen == null) sc.listen = new ArrayList<>(config.listen);
        sc.listen.remove(spec);
        sc.ana.removeIf(a -> spec.equals(a.listen));
        persist("subsystem " + nqn + " no longer listens on " + spec);
    }

    /** Sets an ANA group's state on one listener of a subsystem; only states other than optimized are stored. */
    public synchronized void setAnaState(String nqn, String listen, int group, String state) {
        TargetConfig.SubsystemConfig sc = existing(nqn);
        AnaState st = apply(() -> AnaState.parse(state));
        PortInfo p = apply(() -> target.setAnaState(nqn, listen, group, st));
        String spec = target.portSpec(p.portId());
        sc.ana.removeIf(a -> spec.equals(a.listen) && a.group == group);
        if (st != AnaState.OPTIMIZED) {
            TargetConfig.AnaConfig a = new TargetConfig.AnaConfig();
            a.listen = spec;
            a.group = group;
            a.state = st.id();
            sc.ana.add(a);
        }
        persist("ANA group " + group + " of " + nqn + " on " + spec + " set " + st.id());
    }

    private void checkTransport(String trtype) {
        if (trtype != null && !trtype.equalsIgnoreCase(config.transport)) {
            throw new ManagementException(
                    Kind.INVALID_PARAMS,
                    "this target serves " + config.transport + ", not " + trtype + "; start another target with -t "
                            + trtype.toLowerCase() + " for that");
        }
    }

    private void pinListenLists() {
        for (TargetConfig.SubsystemConfig sc : config.subsystems)
            if (sc.listen == null) sc.listen = new ArrayList<>(config.listen);
    }

    /** Writes the running configuration to {@code file} (atomically); returns it. */
    public synchronized TargetConfig save(Path file) {
        try {
            ConfigFile.write(file, config);
        } catch (IOException e) {
            throw new ManagementException(
                    Kind.IO_ERROR, "cannot save the configuration to " + file + ": " + e.getMessage(), e);
        }
        return ConfigFile.copy(config);
    }

    /** The file every change is saved to, or null. */
    public Path configFile() {
        return configFile;
    }

    // ---- helpers ----

    /** A live change that may fail: its exceptions become typed management errors. */
    private interface Change<T> {
        T run() throws IOException;
    }

    private static <T> T apply(Change<T> change) {
        try {
            return change.run();
        } catch (NoSuchElementException e) {
            throw new ManagementException(Kind.NOT_FOUND, e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new ManagementException(Kind.ALREADY_EXISTS, e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new ManagementException(Kind.INVALID_PARAMS, e.getMessage(), e);
        } catch (IOException e) {
            throw new ManagementException(Kind.IO_ERROR, e.getMessage(), e);
        }
    }

    private void persist(String what) {
        log.debug("{}", what);
        if (configFile == null) return;
        try {
            ConfigFile.write(configFile, config);
        } catch (IOException e) {
            throw new ManagementException(
                    Kind.IO_ERROR,
                    what + " on the running target, but saving " + configFile + " failed: " + e.getMessage()
                            + "; fix that and call save_config",
                    e);
        }
    }

    private TargetConfig.SubsystemConfig find(String nqn) {
        for (TargetConfig.SubsystemConfig sc : config.subsystems) if (sc.nqn.equals(nqn)) return sc;
        return null;
    }

    private TargetConfig.SubsystemConfig existing(String nqn) {
        TargetConfig.SubsystemConfig sc = find(nqn);
        if (sc == null) throw new ManagementException(Kind.NOT_FOUND, "no subsystem " + nqn);
        return sc;
    }

    private static TargetConfig.NamespaceConfig copy(TargetConfig.NamespaceConfig nc) {
        return ConfigFile.JSON.convertValue(nc, TargetConfig.NamespaceConfig.class);
    }
}
