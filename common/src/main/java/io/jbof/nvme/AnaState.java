package io.jbof.nvme;

import java.util.Locale;

/** Asymmetric Namespace Access states, as the ANA log page codes them, with the names SPDK's RPC uses. */
public enum AnaState {
    OPTIMIZED(0x01),
    NON_OPTIMIZED(0x02),
    INACCESSIBLE(0x03),
    PERSISTENT_LOSS(0x04),
    CHANGE(0x0F);

    public final int code;

    AnaState(int code) {
        this.code = code;
    }

    /** The lower-case name ({@code non_optimized}); SPDK's RPC names. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** A state by its name; '-' and '_' are alike ("non-optimized" as nvmetcli spells it). */
    public static AnaState parse(String name) {
        String n = name == null ? "" : name.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (AnaState s : values()) if (s.name().equals(n)) return s;
        throw new IllegalArgumentException(
                "ANA state must be optimized, non_optimized, inaccessible, persistent_loss or change, not '" + name
                        + "'");
    }

    public static AnaState of(int code) {
        for (AnaState s : values()) if (s.code == code) return s;
        throw new IllegalArgumentException("no ANA state " + code);
    }

    /** Whether commands to a namespace in this state may run: optimized and non-optimized paths serve I/O. */
    public boolean accessible() {
        return this == OPTIMIZED || this == NON_OPTIMIZED;
    }

    /** The path status a command gets on a path in this state (as Linux's nvmet_check_ana_state), or SUCCESS. */
    public int pathStatus() {
        switch (this) {
            case INACCESSIBLE:
                return Status.ANA_INACCESSIBLE;
            case PERSISTENT_LOSS:
                return Status.ANA_PERSISTENT_LOSS;
            case CHANGE:
                return Status.ANA_TRANSITION;
            default:
                return Status.SUCCESS;
        }
    }
}
