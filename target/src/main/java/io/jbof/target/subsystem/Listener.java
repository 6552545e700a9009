package io.jbof.target.subsystem;

import io.jbof.nvme.AnaLog;
import io.jbof.nvme.AnaState;
import java.util.Arrays;

/**
 * A subsystem reachable through one of the target's ports (SPDK's listener; nvmet's port-subsystem
 * link), with the ANA state of each ANA group as hosts on that port see it. I/O commands read the
 * state on every command from every event loop, so it is an array replaced whole on change (no lock).
 */
public final class Listener {
    private final int portId;
    /** By group ID (1..MAX_GROUPS); index 0 unused. */
    private volatile AnaState[] states;
    /** While the target drains for shutdown every group reads inaccessible; not part of the configuration. */
    private volatile boolean draining;

    public Listener(int portId) {
        this.portId = portId;
        AnaState[] s = new AnaState[AnaLog.MAX_GROUPS + 1];
        Arrays.fill(s, AnaState.OPTIMIZED);
        this.states = s;
    }

    public int portId() {
        return portId;
    }

    /** The state hosts on this port see for {@code group}. */
    public AnaState state(int group) {
        if (draining) return AnaState.INACCESSIBLE;
        AnaState[] s = states;
        return group > 0 && group < s.length ? s[group] : AnaState.OPTIMIZED;
    }

    /** The configured state of {@code group}, whatever a drain shows. */
    public AnaState configuredState(int group) {
        return states[group];
    }

    /** Sets one group's state; false when it already was. */
    public synchronized boolean state(int group, AnaState state) {
        checkGroup(group);
        if (states[group] == state) return false;
        AnaState[] next = states.clone();
        next[group] = state;
        states = next;
        return true;
    }

    public void draining(boolean on) {
        draining = on;
    }

    public static void checkGroup(int group) {
        if (group < 1 || group > AnaLog.MAX_GROUPS)
            throw new IllegalArgumentException("ANA group must be 1.." + AnaLog.MAX_GROUPS + ", not " + group);
    }
}
