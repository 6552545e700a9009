package io.jbof.util;

/**
 * Every tunable of jbof, in one place: a system property (given through {@code JBOF_JAVA_OPTS}), its
 * default and what it changes. Read once, at class initialisation of the class that uses it; the
 * README's "Tunables" table lists the same, and a test keeps the two in step.
 */
public enum Tunable {
    NIO("jbof.nio", "false", "NVMe/TCP on Java NIO instead of Netty's native epoll transport (both roles)."),
    SENDFILE_MIN(
            "jbof.sendfileMin",
            "0",
            "Target, NVMe/TCP: reads of at least this many bytes go by sendfile (zero copy), the others are copied into"
                    + " their PDU; 0 (the default) copies all: on loopback the copy measured faster and cheaper in CPU."),
    DIRECT_IO_THREADS(
            "jbof.directIoThreads",
            "64",
            "Target: threads that direct namespaces' reads and writes block in, shared by all of them (so the depth a drive sees)."),
    DIRECT_IO_RING(
            "jbof.directIoRing",
            "true",
            "Target: direct namespaces' reads and writes through one io_uring per event loop, submitted once per loop turn;"
                    + " false (or no io_uring): on the thread pool above."),
    DIRECT_IO_SPIN_MICROS(
            "jbof.directIoRing.spinMicros",
            "200",
            "Target, NVMe/TCP: microseconds an event loop with a direct namespace's ring polls (sockets and ring) before it"
                    + " sleeps, once traffic is steady: each sleep there also waits for the drive (0: as jbof.tcp.spinMicros)."),
    TCP_CONNECT_TIMEOUT_MS(
            "jbof.tcp.connectTimeoutMs",
            "30000",
            "Target, NVMe/TCP: bound on the time from accepting a connection to its Fabrics Connect (ICReq included)."),
    TCP_DATA_TIMEOUT_MS(
            "jbof.tcp.dataTimeoutMs",
            "30000",
            "Target, NVMe/TCP: bound on the wait for a host's data after an R2T, or between its H2CData PDUs."),
    TCP_WRITE_HIGH_WATER(
            "jbof.tcp.writeHighWater",
            String.valueOf(2 << 20),
            "Target, NVMe/TCP: bytes queued to one socket above which that queue stops reading commands."),
    TCP_WRITE_LOW_WATER(
            "jbof.tcp.writeLowWater",
            String.valueOf(1 << 20),
            "Target, NVMe/TCP: bytes queued below which it reads commands again."),
    TCP_SEND_BUDGET(
            "jbof.tcp.sendBudget",
            "8",
            "Both roles, NVMe/TCP: a burst of commands (host) or of responses to one read's commands (target) is flushed every this many; 0: once per burst."),
    TCP_SPIN_MICROS(
            "jbof.tcp.spinMicros",
            "0",
            "Both roles, NVMe/TCP: microseconds an event loop that was woken soon after it slept polls its sockets before it"
                    + " sleeps again (for processes with cores of their own; 0: sleep at once)."),
    TLS_HANDSHAKE_TIMEOUT_MS("jbof.tls.handshakeTimeoutMs", "30000", "Both roles: bound on a TLS 1.3 PSK handshake."),
    RDMA_ACK_TIMEOUT(
            "jbof.rdma.ackTimeout",
            "14",
            "Both roles, NVMe/RDMA on InfiniBand/RoCE: local ACK timeout, 4.096 us x 2^N (14: 67 ms) before a lost packet is sent again; 0: rdma_cm's own."),
    RDMA_BUFFERS(
            "jbof.rdma.buffers",
            "256",
            "Target, NVMe/RDMA: registered 128 KiB page buffers per event loop and device; fewer than 8 lower the MDTS RDMA hosts are told."),
    RDMA_REMOTE_INVALIDATE(
            "jbof.rdma.remoteInvalidate",
            "true",
            "Target, NVMe/RDMA: answer with SEND with Invalidate where the host's SGL asks for it."),
    RDMA_SPIN_POLLS(
            "jbof.rdma.spinPolls",
            "64",
            "Both roles, NVMe/RDMA: empty completion-queue polls before an event loop sleeps on its channel."),
    RDMA_TRANSFER_SIZE(
            "jbof.rdma.transferSize",
            String.valueOf(128 * 1024),
            "Initiator, NVMe/RDMA: the registered data buffer of each command slot, so the largest transfer of one command.");

    private final String property;
    private final String defaultValue;
    private final String description;

    Tunable(String property, String defaultValue, String description) {
        this.property = property;
        this.defaultValue = defaultValue;
        this.description = description;
    }

    public String property() {
        return property;
    }

    public String defaultValue() {
        return defaultValue;
    }

    public String description() {
        return description;
    }

    /** The value given with -D, or the default. */
    public String value() {
        return System.getProperty(property, defaultValue);
    }

    public int intValue() {
        long v = longValue();
        if (v != (int) v)
            throw new IllegalArgumentException(
                    "-D" + property + "=" + v + " is out of range (default " + defaultValue + ")");
        return (int) v;
    }

    public long longValue() {
        String v = value();
        try {
            return Long.decode(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "-D" + property + "=" + v + " is not a whole number (default " + defaultValue + ")");
        }
    }

    public boolean booleanValue() {
        String v = value().trim();
        if (v.equalsIgnoreCase("true")) return true;
        if (v.equalsIgnoreCase("false")) return false;
        throw new IllegalArgumentException(
                "-D" + property + "=" + v + " must be true or false (default " + defaultValue + ")");
    }
}
