package io.jbof.nvme;

/** Byte offsets of the 4096-byte Identify Namespace data structure (CNS 00h) and the descriptor list. */
public final class IdentifyNamespace {
    private IdentifyNamespace() {}

    public static final int SIZE = 4096;
    public static final int NSZE = 0;
    public static final int NCAP = 8;
    public static final int NUSE = 16;
    public static final int NSFEAT = 24;
    /** NSFEAT bit 4: NPWG, NPWA, NPDG, NPDA and NOWS are valid. */
    public static final int NSFEAT_OPTPERF = 1 << 4;

    public static final int NLBAF = 25;
    public static final int FLBAS = 26;
    /** Namespace Multi-path I/O and Sharing: bit 0, may be attached to several controllers. */
    public static final int NMIC = 30;

    public static final int DLFEAT = 33;
    /** Preferred write granularity and alignment, optimal write size (0's based, in logical blocks). */
    public static final int NPWG = 64;

    public static final int NPWA = 66;
    public static final int NOWS = 72;
    /** The namespace's ANA group (u32). */
    public static final int ANAGRPID = 92;

    public static final int NSATTR = 99;
    public static final int NGUID = 104;
    public static final int EUI64 = 120;
    public static final int LBAF0 = 128;

    /** DLFEAT bits 2:0 = 001b: deallocated blocks read as zeroes; bit 3: Write Zeroes may deallocate. */
    public static final int DLFEAT_READ_ZEROES = 0x1;

    public static final int NSATTR_WRITE_PROTECTED = 1;

    // Namespace Identification Descriptor types (CNS 03h)
    public static final int NIDT_EUI64 = 1;
    public static final int NIDT_NGUID = 2;
    public static final int NIDT_UUID = 3;
    public static final int NIDT_CSI = 4;
}
