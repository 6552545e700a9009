package io.jbof.target.controller;

import io.jbof.nvme.Properties;
import io.jbof.nvme.Status;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Listener;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.transport.TargetRequest;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One host's association with a subsystem: its admin queue, its I/O queues, the controller
 * properties (CC/CSTS state machine), keep-alive, and asynchronous events. Queues live on different
 * event loops, so the few cross-queue transitions (queue attach/detach, teardown) synchronize here.
 */
public final class Controller {
    private static final Logger log = LoggerFactory.getLogger(Controller.class);

    private final int id;
    private final Subsystem subsystem;
    private final boolean discovery;
    private final String hostNqn;
    private final UUID hostId;
    /** The subsystem's listener on the port the host connected through (its ANA states); null for discovery. */
    private final Listener listener;

    private final TargetContext target;
    private final long cap;
    private final QueueSession[] ioQueues;

    private volatile int cc;
    private volatile int csts;
    private volatile int katoMillis;
    private volatile long lastKeepAliveNanos = System.nanoTime();
    private volatile int grantedIoQueues;
    private volatile int asyncEventConfig;

    private QueueSession admin;
    private ScheduledFuture<?> keepAliveTimer;
    private boolean destroyed;

    // Admin-queue thread only
    private final ArrayDeque<TargetRequest> pendingAers = new ArrayDeque<>();
    private final TreeSet<Integer> changedNamespaces = new TreeSet<>();
    private boolean namespaceEventPending;
    private boolean namespaceEventMasked;
    private boolean discoveryEventPending;
    private boolean discoveryEventMasked;
    private boolean anaEventPending;
    private boolean anaEventMasked;

    Controller(
            int id,
            Subsystem subsystem,
            boolean discovery,
            String hostNqn,
            UUID hostId,
            int katoMillis,
            TargetContext target,
            Listener listener) {
        this.id = id;
        this.listener = listener;
        this.subsystem = subsystem;
        this.discovery = discovery;
        this.hostNqn = hostNqn;
        this.hostId = hostId;
        this.katoMillis = katoMillis;
        this.target = target;
        TargetLimits limits = target.limits();
        this.cap = Properties.cap(limits.maxQueueEntries(), 15);
        this.ioQueues = new QueueSession[limits.maxIoQueues() + 1];
        this.grantedIoQueues = limits.maxIoQueues();
    }

    public int id() {
        return id;
    }

    public Subsystem subsystem() {
        return subsystem;
    }

    public boolean isDiscovery() {
        return discovery;
    }

    public String hostNqn() {
        return hostNqn;
    }

    public UUID hostId() {
        return hostId;
    }

    public long cap() {
        return cap;
    }

    public int cc() {
        return cc;
    }

    public int csts() {
        return csts;
    }

    public int katoMillis() {
        return katoMillis;
    }

    public int grantedIoQueues() {
        return grantedIoQueues;
    }

    public int asyncEventConfig() {
        return asyncEventConfig;
    }

    public TargetContext target() {
        return target;
    }

    public Listener listener() {
        return listener;
    }

    /** SUCCESS when commands to {@code ns} may run on this controller's path, else the path status (ANA inaccessible, ...). */
    int pathStatus(TargetNamespace ns) {
        return listener == null ? Status.SUCCESS : listener.state(ns.anaGroup()).pathStatus();
    }

    public boolean ready() {
        return (csts & Properties.CSTS_RDY) != 0 && (csts & Properties.CSTS_CFS) == 0;
    }

    void grantIoQueues(int n) {
        grantedIoQueues = n;
    }

    void asyncEventConfig(int v) {
        asyncEventConfig = v;
    }

    /** Any command on the admin queue counts as host activity for the keep-alive timer. */
    void keepAlive() {
        lastKeepAliveNanos = System.nanoTime();
    }

    synchronized void attachAdmin(QueueSession session) {
        this.admin = session;
        scheduleKeepAliveCheck(katoMillis);
    }

    void katoMillis(int ms) {
        this.katoMillis = ms;
        keepAlive();
        synchronized (this) {
            if (keepAliveTimer != null) keepAliveTimer.cancel(false);
            keepAliveTimer = null;
            scheduleKeepAliveCheck(ms);
        }
    }

    private void scheduleKeepAliveCheck(int delayMillis) {
        if (delayMillis <= 0 || admin == null || destroyed) return;
        keepAliveTimer = admin.queue().executor().schedule(this::checkKeepAlive, delayMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * While the admin queue authenticates, the host may compute a large DH group for seconds without
     * sending anything: the bound is then this (SPDK's default authentication timeout), not KATO.
     */
    static final int AUTHENTICATION_TIMEOUT_MILLIS = 120_000;

    private void checkKeepAlive() {
        QueueAuthentication auth = admin != null ? admin.auth() : null;
        int kato = auth != null && !auth.authenticated()
                ? Math.max(katoMillis, AUTHENTICATION_TIMEOUT_MILLIS)
                : katoMillis;
        if (kato <= 0) return;
        long idleMillis = (System.nanoTime() - lastKeepAliveNanos) / 1_000_000;
        if (idleMillis >= kato) {
            log.warn(
                    "keep-alive timeout: controller {} of host {} on {} heard nothing for {} ms (KATO {} ms); tearing it down",
                    id,
                    hostNqn,
                    subsystem.nqn(),
                    idleMillis,
                    kato);
            fatal("keep-alive timeout");
            return;
        }
        synchronized (this) {
            scheduleKeepAliveCheck((int) (kato - idleMillis));
        }
    }

    /**
     * Installs an I/O queue; returns null on success or a message naming what is wrong. The controller
     * must be enabled, the QID within what was granted, and not in use.
     */
    synchronized AttachRefusal attachIo(int qid, QueueSession session) {
        if (destroyed) return AttachRefusal.CONTROLLER_GONE;
        if (qid < 1 || qid > grantedIoQueues || qid >= ioQueues.length) return AttachRefusal.QID_NOT_GRANTED;
        if (ioQueues[qid] != null) return AttachRefusal.QID_IN_USE;
        ioQueues[qid] = session;
        return null;
    }

    /** Why {@link #attachIo} refused an I/O queue; the kind decides the Connect status. */
    enum AttachRefusal {
        CONTROLLER_GONE("the controller is gone"),
        QID_NOT_GRANTED("the QID exceeds the I/O queues granted"),
        QID_IN_USE("the QID is already connected");

        final String reason;

        AttachRefusal(String reason) {
            this.reason = reason;
        }
    }

    /** A queue's connection closed: an I/O queue just detaches; the admin queue takes the controller with it. */
    void detach(QueueSession session) {
        boolean adminGone;
        synchronized (this) {
            adminGone = session == admin;
            for (int i = 1; i < ioQueues.length; i++) if (ioQueues[i] == session) ioQueues[i] = null;
        }
        if (adminGone) {
            // On the admin queue's thread: the AERs it held end with it (their completions only recycle slots).
            TargetRequest r;
            while ((r = pendingAers.poll()) != null) r.complete(Status.ABORTED_SQ_DELETION, 0);
            destroy("admin queue closed");
        }
    }

    /** A fatal controller error (keep-alive expiry, transport error): CSTS.CFS and every queue is closed. */
    void fatal(String reason) {
        csts |= Properties.CSTS_CFS;
        destroy(reason);
    }

    void destroy(String reason) {
        QueueSession[] toClose;
        QueueSession adminToClose;
        synchronized (this) {
            if (destroyed) return;
            destroyed = true;
            if (keepAliveTimer != null) keepAliveTimer.cancel(false);
            toClose = ioQueues.clone();
            Arrays.fill(ioQueues, null);
            adminToClose = admin;
        }
        log.debug("controller {} of host {} destroyed: {}", id, hostNqn, reason);
        target.controllers().remove(this);
        for (QueueSession s : toClose) if (s != null) s.closeQueue(reason);
        if (adminToClose != null) adminToClose.closeQueue(reason);
    }

    /** Closes every I/O queue (controller reset by CC.EN 1 -> 0). */
    void closeIoQueues(String reason) {
        QueueSession[] toClose;
        synchronized (this) {
            toClose = ioQueues.clone();
            for (int i = 1; i < ioQueues.length; i++) ioQueues[i] = null;
        }
        for (QueueSession s : toClose) if (s != null) s.closeQueue(reason);
    }

    void setCc(int value) {
        cc = value;
    }

    void setCsts(int value) {
        csts = value;
    }

    public synchronized QueueSession[] queues() {
        QueueSession[] all = ioQueues.clone();
        all[0] = admin;
        return all;
    }

    // ---- asynchronous events (admin queue thread) ----

    /** Holds an Asynchronous Event Request; false when the limit (AERL + 1) is reached. */
    boolean holdAer(TargetRequest request, int limit) {
        if (pendingAers.size() >= limit) return false;
        pendingAers.add(request);
        deliverEvents();
        return true;
    }

    /** From any thread: a namespace of this subsystem was added, removed or resized; the admin queue's thread tells the host. */
    public void notifyNamespaceChanged(int nsid) {
        onAdminThread(() -> namespaceChanged(nsid));
    }

    /** Runs {@code r} on the admin queue's thread, where the event state lives; nothing once the controller is gone. */
    private void onAdminThread(Runnable r) {
        QueueSession a;
        synchronized (this) {
            if (destroyed || admin == null) return;
            a = admin;
        }
        try {
            a.queue().executor().execute(r);
        } catch (RejectedExecutionException e) {
            // the loop is shutting down, and the controller with it
        }
    }

    /** From any thread: the discovery log changed; a discovery controller that asked to hear of it is told by AER. */
    public void notifyDiscoveryChanged() {
        if (!discovery) return;
        onAdminThread(() -> {
            if ((asyncEventConfig & (1 << 31)) != 0) discoveryEventPending = true;
            deliverEvents();
        });
    }

    /** From any thread: an ANA state this controller reports changed; the host is told by AER (Notice, ANA change). */
    public void notifyAnaChanged() {
        if (discovery) return;
        onAdminThread(() -> {
            if ((asyncEventConfig & (1 << 11)) != 0) anaEventPending = true;
            deliverEvents();
        });
    }

    /** The host read the ANA log (without Retain Asynchronous Event): its change notice may come again. */
    void anaLogRead() {
        anaEventMasked = false;
        deliverEvents();
    }

    /** The host read the discovery log (without Retain Asynchronous Event): its change notice may come again. */
    void discoveryLogRead() {
        discoveryEventMasked = false;
        deliverEvents();
    }

    /** From any thread: ends this controller and closes its queues (its host was removed, its subsystem deleted). */
    public void tearDown(String reason) {
        destroy(reason);
    }

    /** A namespace was added, removed or changed: remember it and tell the host by AER (Notice, NS attribute changed). */
    void namespaceChanged(int nsid) {
        changedNamespaces.add(nsid);
        if ((asyncEventConfig & (1 << 8)) != 0) namespaceEventPending = true;
        deliverEvents();
    }

    private void deliverEvents() {
        if (discoveryEventPending && !discoveryEventMasked && !pendingAers.isEmpty()) {
            discoveryEventPending = false;
            discoveryEventMasked = true; // masked until the host reads the discovery log
            // Type 2 (Notice), info F0h (Discovery Log Page Change), log page 70h
            pendingAers.poll().complete(Status.SUCCESS, 0x2 | (0xF0 << 8) | (0x70 << 16));
        }
        if (namespaceEventPending && !namespaceEventMasked && !pendingAers.isEmpty()) {
            namespaceEventPending = false;
            namespaceEventMasked = true; // masked until the host reads the Changed Namespace List
            TargetRequest r = pendingAers.poll();
            // Type 2 (Notice), info 0 (Namespace Attribute Changed), log page 04h
            r.complete(Status.SUCCESS, 0x2 | (0x00 << 8) | (0x04 << 16));
        }
        if (anaEventPending && !anaEventMasked && !pendingAers.isEmpty()) {
            anaEventPending = false;
            anaEventMasked = true; // masked until the host reads the ANA log
            // Type 2 (Notice), info 03h (Asymmetric Namespace Access Change), log page 0Ch
            pendingAers.poll().complete(Status.SUCCESS, 0x2 | (0x03 << 8) | (0x0C << 16));
        }
    }

    /** Returns and (unless retained) clears the changed-namespace list; unmasks the event. */
    int[] takeChangedNamespaces(boolean retain) {
        int[] out = changedNamespaces.stream().mapToInt(Integer::intValue).toArray();
        if (!retain) {
            changedNamespaces.clear();
            namespaceEventMasked = false;
        }
        return out;
    }

    /** {read commands, write commands, bytes read, bytes written} summed over the queues (SMART log, statistics). */
    public long[] ioCounters() {
        long[] sum = new long[4];
        for (QueueSession s : queues()) {
            if (s == null) continue;
            sum[0] += s.readCommands;
            sum[1] += s.writeCommands;
            sum[2] += s.bytesRead;
            sum[3] += s.bytesWritten;
        }
        return sum;
    }
}
