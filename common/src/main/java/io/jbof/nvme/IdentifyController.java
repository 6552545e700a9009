package io.jbof.nvme;

/** Byte offsets of the 4096-byte Identify Controller data structure (CNS 01h) that jbof fills or reads. */
public final class IdentifyController {
    private IdentifyController() {}

    public static final int SIZE = 4096;
    public static final int VID = 0;
    public static final int SSVID = 2;
    public static final int SN = 4; // 20 bytes ASCII
    public static final int MN = 24; // 40 bytes ASCII
    public static final int FR = 64; // 8 bytes ASCII
    public static final int RAB = 72;
    public static final int IEEE = 73;
    public static final int CMIC = 76;
    public static final int MDTS = 77;
    public static final int CNTLID = 78;
    public static final int VER = 80;
    public static final int OAES = 92;
    public static final int CTRATT = 96;
    public static final int CNTRLTYPE = 111;
    public static final int OACS = 256;
    public static final int ACL = 258;
    public static final int AERL = 259;
    public static final int FRMW = 260;
    public static final int LPA = 261;
    public static final int ELPE = 262;
    public static final int NPSS = 263;
    public static final int KAS = 320;
    public static final int ANATT = 342;
    public static final int ANACAP = 343;
    public static final int ANAGRPMAX = 344;
    public static final int NANAGRPID = 348;
    public static final int SQES = 512;
    public static final int CQES = 513;
    public static final int MAXCMD = 514;
    public static final int NN = 516;
    public static final int ONCS = 520;
    public static final int FUSES = 522;
    public static final int FNA = 524;
    public static final int VWC = 525;
    public static final int AWUN = 526;
    public static final int AWUPF = 528;
    public static final int SGLS = 536;
    public static final int MNAN = 540;
    public static final int SUBNQN = 768;
    public static final int IOCCSZ = 1792;
    public static final int IORCSZ = 1796;
    public static final int ICDOFF = 1800;
    public static final int FCATT = 1802;
    public static final int MSDBD = 1803;
    public static final int OFCS = 1804;
    public static final int PSD0 = 2048;

    public static final int CNTRLTYPE_IO = 1;
    public static final int CNTRLTYPE_DISCOVERY = 2;

    public static final int CTRATT_HOST_ID_128 = 1;
    /** CMIC: may have several ports, several controllers, and reports Asymmetric Namespace Access. */
    public static final int CMIC_MULTI_PORT = 1;

    public static final int CMIC_MULTI_CONTROLLER = 1 << 1;
    public static final int CMIC_ANA = 1 << 3;
    /** ANACAP: reports optimized, non-optimized, inaccessible, persistent loss and change states. */
    public static final int ANACAP_ALL_STATES = 0x1F;
    /** OAES: ANA Change notices. */
    public static final int OAES_ANA_CHANGE = 1 << 11;

    public static final int OAES_NS_ATTRIBUTE = 1 << 8;
    /** Discovery controllers: Discovery Log Page Change notices. */
    public static final int OAES_DISCOVERY_CHANGE = 1 << 31;

    public static final int LPA_EXTENDED_DATA = 1 << 2;
    public static final int ONCS_DSM = 1 << 2;
    public static final int ONCS_WRITE_ZEROES = 1 << 3;
    public static final int VWC_PRESENT = 1;
    public static final int SGLS_SUPPORTED = 1;
    public static final int SGLS_KEYED = 1 << 2;
    public static final int SGLS_OFFSET = 1 << 20;
    public static final int OFCS_DISCONNECT = 1;
}
