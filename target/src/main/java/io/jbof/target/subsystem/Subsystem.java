package io.jbof.target.subsystem;

import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.tls.TlsPskKey;
import io.jbof.target.namespace.TargetNamespace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/** An NVM subsystem: an NQN, its namespaces by NSID, the hosts allowed to connect, and the ports it listens on. */
public final class Subsystem implements AutoCloseable {
    private final String nqn;
    private final String serial;
    private final String model;
    /**
     * Copy on write: every I/O command looks its namespace up, from every event loop, so reads take no
     * lock (a synchronized lookup was a monitor all loops contended for); changes are rare.
     */
    private volatile TreeMap<Integer, TargetNamespace> namespaces = new TreeMap<>();
    /** Changed live by the management API; read by every Connect. */
    private volatile boolean allowAnyHost;

    private volatile Set<String> allowedHosts;
    /** By port ID, copy on write: every Connect looks its port up. */
    private volatile Map<Integer, Listener> listeners = Map.of();
    /** The ANA log's change count: moves with every ANA state or group membership change. */
    private final AtomicLong anaChangeCount = new AtomicLong(1);
    /** Per host NQN: its DH-HMAC-CHAP secret and, for bidirectional authentication, the controller's. */
    private final Map<String, DhchapKey[]> dhchapKeys = new ConcurrentHashMap<>();

    public Subsystem(String nqn, String model, boolean allowAnyHost, Set<String> allowedHosts) {
        this.nqn = nqn;
        this.model = model;
        this.allowAnyHost = allowAnyHost;
        this.allowedHosts = Collections.unmodifiableSet(new LinkedHashSet<>(allowedHosts));
        CRC32C crc = new CRC32C();
        crc.update(nqn.getBytes(StandardCharsets.UTF_8));
        this.serial = String.format("jbof%08x", crc.getValue());
    }

    public String nqn() {
        return nqn;
    }

    public String serial() {
        return serial;
    }

    public String model() {
        return model;
    }

    public synchronized void addNamespace(TargetNamespace ns) {
        if (namespaces.containsKey(ns.nsid()))
            throw new IllegalArgumentException("NSID " + ns.nsid() + " is already used in " + nqn);
        TreeMap<Integer, TargetNamespace> next = new TreeMap<>(namespaces);
        next.put(ns.nsid(), ns);
        namespaces = next;
    }

    /** Takes the namespace out: new commands for its NSID fail with Invalid Namespace. Null when there is none. */
    public synchronized TargetNamespace removeNamespace(int nsid) {
        if (!namespaces.containsKey(nsid)) return null;
        TreeMap<Integer, TargetNamespace> next = new TreeMap<>(namespaces);
        TargetNamespace gone = next.remove(nsid);
        namespaces = next;
        return gone;
    }

    /** The lowest NSID not in use. */
    public synchronized int freeNsid() {
        int n = 1;
        while (namespaces.containsKey(n)) n++;
        return n;
    }

    public TargetNamespace namespace(int nsid) {
        return namespaces.get(nsid);
    }

    public Collection<TargetNamespace> namespaces() {
        return Collections.unmodifiableCollection(namespaces.values());
    }

    public int maxNsid() {
        TreeMap<Integer, TargetNamespace> n = namespaces;
        return n.isEmpty() ? 0 : n.lastKey();
    }

    /** This subsystem's listener on port {@code portId}, or null when hosts may not reach it there. */
    public Listener listener(int portId) {
        return listeners.get(portId);
    }

    public Collection<Listener> listeners() {
        return listeners.values();
    }

    /** Makes the subsystem reachable on a port; false when it already was. */
    public synchronized boolean addListener(Listener l) {
        if (listeners.containsKey(l.portId())) return false;
        Map<Integer, Listener> next = new TreeMap<>(listeners);
        next.put(l.portId(), l);
        listeners = Collections.unmodifiableMap(next);
        return true;
    }

    /** Takes a port away; the listener, or null when there was none. */
    public synchronized Listener removeListener(int portId) {
        if (!listeners.containsKey(portId)) return null;
        Map<Integer, Listener> next = new TreeMap<>(listeners);
        Listener gone = next.remove(portId);
        listeners = Collections.unmodifiableMap(next);
        return gone;
    }

    public long anaChangeCount() {
        return anaChangeCount.get();
    }

    /** An ANA state or a group's membership changed. */
    public void anaChanged() {
        anaChangeCount.incrementAndGet();
    }

    /** The ANA groups in use: group 1 always (as nvmet), and every namespace's, ascending. */
    public int[] anaGroups() {
        return anaGroups(namespaces());
    }

    /** The ANA groups of these namespaces, with group 1, ascending. */
    public static int[] anaGroups(Collection<TargetNamespace> namespaces) {
        TreeSet<Integer> g = new TreeSet<>();
        g.add(1);
        for (TargetNamespace ns : namespaces) g.add(ns.anaGroup());
        return g.stream().mapToInt(Integer::intValue).toArray();
    }

    public boolean allows(String hostNqn) {
        return allowAnyHost || allowedHosts.contains(hostNqn);
    }

    public boolean allowsAnyHost() {
        return allowAnyHost;
    }

    public void allowAnyHost(boolean any) {
        allowAnyHost = any;
    }

    /** Lets {@code hostNqn} connect; false when it already could. */
    public synchronized boolean addHost(String hostNqn) {
        Set<String> next = new LinkedHashSet<>(allowedHosts);
        if (!next.add(hostNqn)) return false;
        allowedHosts = Collections.unmodifiableSet(next);
        return true;
    }

    /** Stops {@code hostNqn} connecting (its keys go too); false when it was not allowed. */
    public synchronized boolean removeHost(String hostNqn) {
        dhchapKeys.remove(hostNqn);
        tlsKeys.remove(hostNqn);
        Set<String> next = new LinkedHashSet<>(allowedHosts);
        if (!next.remove(hostNqn)) return false;
        allowedHosts = Collections.unmodifiableSet(next);
        return true;
    }

    /** Requires DH-HMAC-CHAP of {@code hostNqn} with {@code hostKey}; {@code ctrlKey} (or null) lets the host authenticate us too. */
    public void dhchapKeys(String hostNqn, DhchapKey hostKey, DhchapKey ctrlKey) {
        dhchapKeys.put(hostNqn, new DhchapKey[] {hostKey, ctrlKey});
    }

    /** {host key, controller key or null} when the host must authenticate, else null. */
    public DhchapKey[] dhchapKeys(String hostNqn) {
        return dhchapKeys.get(hostNqn);
    }

    public Set<String> allowedHosts() {
        return allowedHosts;
    }

    private final Map<String, TlsPskKey> tlsKeys = new ConcurrentHashMap<>();

    /** The configured TLS PSK of {@code hostNqn} for NVMe/TCP over TLS. */
    public void tlsKey(String hostNqn, TlsPskKey key) {
        tlsKeys.put(hostNqn, key);
    }

    /** The host's configured TLS PSK, or null. */
    public TlsPskKey tlsKey(String hostNqn) {
        return tlsKeys.get(hostNqn);
    }

    /** fdatasync of every namespace. */
    public void forceAll() throws IOException {
        for (TargetNamespace ns : namespaces()) ns.force();
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        for (TargetNamespace ns : namespaces()) {
            try {
                ns.close();
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }
}
