package io.jbof.nvme;

/** Layout of the Asymmetric Namespace Access log page (LID 0Ch): a header, then one descriptor per ANA group. */
public final class AnaLog {
    private AnaLog() {}

    public static final int HEADER_SIZE = 16;
    /** u64: moves whenever any group's state or membership changes. */
    public static final int CHGCNT = 0;
    /** u16: how many group descriptors follow. */
    public static final int NGRPS = 8;

    /** A group descriptor's fixed part; its NSIDs (u32 each, ascending) follow it. */
    public static final int DESC_SIZE = 32;

    public static final int D_GRPID = 0;
    public static final int D_NNSIDS = 4;
    public static final int D_CHGCNT = 8;
    public static final int D_STATE = 16;

    /** Log Specific Field bit 0 (Get Log Page CDW10 bits 11:8): Return Groups Only, without their NSIDs. */
    public static final int LSP_RGO = 1;

    /** The ANA groups a jbof subsystem has (ANAGRPMAX and NANAGRPID; Linux's nvmet has as many). */
    public static final int MAX_GROUPS = 128;
}
