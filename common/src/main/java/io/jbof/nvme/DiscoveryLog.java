package io.jbof.nvme;

/** Layout of the Discovery log page (LID 70h): a 1024-byte header, then 1024-byte entries. */
public final class DiscoveryLog {
    private DiscoveryLog() {}

    public static final int HEADER_SIZE = 1024;
    public static final int ENTRY_SIZE = 1024;
    public static final int GENCTR = 0;
    public static final int NUMREC = 8;
    public static final int RECFMT = 16;

    // entry fields
    public static final int TRTYPE = 0;
    public static final int ADRFAM = 1;
    public static final int SUBTYPE = 2;
    public static final int TREQ = 3;
    public static final int PORTID = 4;
    public static final int CNTLID = 6;
    public static final int ASQSZ = 8;
    public static final int EFLAGS = 10;
    public static final int TRSVCID = 32; // 32 bytes ASCII
    public static final int SUBNQN = 256; // 256 bytes
    public static final int TRADDR = 512; // 256 bytes ASCII
    public static final int TSAS = 768; // 256 bytes

    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_TCP = 3;
    public static final int ADRFAM_IPV4 = 1;
    public static final int ADRFAM_IPV6 = 2;
    public static final int SUBTYPE_DISCOVERY_REFERRAL = 1;
    public static final int SUBTYPE_NVME = 2;
    public static final int SUBTYPE_CURRENT_DISCOVERY = 3;
    /** TREQ bits 1:0 = 10b: a secure channel is not required. */
    public static final int TREQ_SECURE_NOT_REQUIRED = 0x2;
    /** TREQ bits 1:0 = 01b: a secure channel is required. */
    public static final int TREQ_SECURE_REQUIRED = 0x1;
    /** NVMe/TCP TSAS byte 0, SECTYPE: TLS 1.3 (0: none). */
    public static final int TCP_SECTYPE_TLS13 = 2;
}
