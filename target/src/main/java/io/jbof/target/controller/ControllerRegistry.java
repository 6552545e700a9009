package io.jbof.target.controller;

import io.jbof.target.subsystem.Listener;
import io.jbof.target.subsystem.Subsystem;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Allocates controller IDs (dynamic model) from this target's range, 1..0xFFEF unless narrowed as
 * nvmet's cntlid_min/cntlid_max (two targets serving one subsystem must never hand out the same ID),
 * and finds controllers for I/O queue Connects.
 */
public final class ControllerRegistry {
    private static final Logger log = LoggerFactory.getLogger(ControllerRegistry.class);
    public static final int MAX_CNTLID = 0xFFEF;

    private final Controller[] byId = new Controller[MAX_CNTLID + 1];
    private final int maxControllers;
    private final int minId;
    private final int maxId;
    private int next;
    private int live;

    public ControllerRegistry(int maxControllers) {
        this(maxControllers, 1, MAX_CNTLID);
    }

    public ControllerRegistry(int maxControllers, int minId, int maxId) {
        if (minId < 1 || maxId > MAX_CNTLID || minId > maxId) {
            throw new IllegalArgumentException(
                    "controller ID range must lie within 1-" + MAX_CNTLID + ", not " + minId + "-" + maxId);
        }
        this.maxControllers = maxControllers;
        this.minId = minId;
        this.maxId = maxId;
        this.next = minId;
    }

    /** A new controller, or null when the limit of live controllers is reached. */
    public synchronized Controller create(
            Subsystem subsystem,
            boolean discovery,
            String hostNqn,
            UUID hostId,
            int katoMillis,
            TargetContext target,
            Listener listener) {
        if (live >= maxControllers) return null;
        for (int tries = 0; tries <= maxId - minId; tries++) {
            int id = next;
            next = next == maxId ? minId : next + 1;
            if (byId[id] == null) {
                Controller c = new Controller(id, subsystem, discovery, hostNqn, hostId, katoMillis, target, listener);
                byId[id] = c;
                live++;
                log.debug("controller {} created for host {} on {}", id, hostNqn, subsystem.nqn());
                return c;
            }
        }
        return null;
    }

    public synchronized Controller find(int cntlid) {
        return cntlid > 0 && cntlid <= MAX_CNTLID ? byId[cntlid] : null;
    }

    synchronized void remove(Controller c) {
        if (byId[c.id()] == c) {
            byId[c.id()] = null;
            live--;
        }
    }

    public synchronized int live() {
        return live;
    }

    public synchronized List<Controller> all() {
        List<Controller> out = new ArrayList<>();
        for (Controller c : byId) if (c != null) out.add(c);
        return out;
    }
}
