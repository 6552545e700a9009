package io.jbof.target.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The target's configuration: what the JSON config file holds and what the command-line flags build.
 * Field names are the JSON keys.
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class TargetConfig {
    /** host:port addresses to listen on (IPv6 as [addr]:port). */
    public List<String> listen = new ArrayList<>();

    public String transport = "tcp";
    public List<SubsystemConfig> subsystems = new ArrayList<>();
    public int maxIoQueues = Math.max(1, Runtime.getRuntime().availableProcessors());
    public int queueDepth = 128;
    public int ioThreads = Math.max(1, Runtime.getRuntime().availableProcessors());
    public int inCapsuleData = 16384; // as Linux's nvmet-tcp: a 16 KiB write needs no R2T round trip
    public int maxControllers = 1024;
    public boolean digests = true;
    /** Data bytes of Read/Write commands in progress target-wide (e.g. "256M"); commands beyond wait. Null or 0: no bound. */
    public String maxInflightBytes;
    /** NVMe/TCP over TLS 1.3: "off", "optional" or "required"; null: required when any subsystem has tlsKeys. */
    public String tls;
    /** HKDF label encoding of TLS PSK derivations: "legacy" (libnvme 1.x, default) or "rfc8446". */
    public String tlsHkdf = "legacy";
    /** Controller IDs this target hands out, "MIN-MAX" within 1-65519 (as nvmet's cntlid_min/max); null: all. */
    public String cntlidRange;

    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class SubsystemConfig {
        public String nqn;
        public String model = "jbof";
        /** Any host NQN may connect; otherwise only those in {@link #hosts}. */
        public Boolean allowAnyHost;

        public List<String> hosts = new ArrayList<>();
        /**
         * Host NQN to its DH-HMAC-CHAP secret ({@code DHHC-1:...}, or {@code @FILE} holding one): the host
         * must authenticate every queue. A host named here is allowed.
         */
        public Map<String, String> dhchapSecrets = new LinkedHashMap<>();
        /** Host NQN to the controller's secret: the host may then authenticate the controller too (bidirectional). */
        public Map<String, String> dhchapCtrlSecrets = new LinkedHashMap<>();
        /** Per host NQN: its configured TLS PSK (NVMeTLSkey-1:..., or @FILE). Such a host is allowed. */
        public Map<String, String> tlsKeys = new LinkedHashMap<>();

        public List<NamespaceConfig> namespaces = new ArrayList<>();
        /** The target's listen addresses this subsystem is reachable on; null: every one of them. */
        public List<String> listen;
        /** ANA states other than optimized, per listen address and ANA group. */
        public List<AnaConfig> ana = new ArrayList<>();
    }

    /** One ANA group's state as hosts on one listen address see it. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class AnaConfig {
        public String listen;
        public int group = 1;
        /** optimized, non_optimized, inaccessible, persistent_loss or change. */
        public String state;
    }

    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class NamespaceConfig {
        public Integer nsid;
        public String path;
        /** Size used to create the file when it does not exist, e.g. "1G". */
        public String size;

        public int blockSize = 4096;
        public boolean readOnly;
        /** O_DIRECT: reads and writes bypass the target's page cache. */
        public boolean direct;
        /** Export a block device even when it is in use (mounted or held exclusively elsewhere). */
        public boolean force;
        /** The namespace's UUID (NGUID follows from it), generated once when the management API adds it; null: derived from NQN, NSID and path. */
        public String uuid;
        /** Its ANA group (1..128); null: 1. */
        public Integer anaGroup;
    }

    /**
     * One subsystem on 127.0.0.1 (an ephemeral port) exporting {@code files}, each created
     * sparse with {@code size} when absent: the target that tests, demos and benchmarks start.
     */
    public static TargetConfig loopback(String nqn, String size, Path... files) {
        TargetConfig cfg = new TargetConfig();
        cfg.listen.add("127.0.0.1:0");
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = nqn;
        for (Path f : files) {
            NamespaceConfig n = new NamespaceConfig();
            n.path = f.toString();
            n.size = size;
            s.namespaces.add(n);
        }
        cfg.subsystems.add(s);
        return cfg;
    }

    /** {min, max} of {@link #cntlidRange}. */
    public int[] cntlidBounds() {
        if (cntlidRange == null) return new int[] {1, 0xFFEF};
        String[] p = cntlidRange.split("-");
        try {
            if (p.length == 2) return new int[] {Integer.parseInt(p[0].trim()), Integer.parseInt(p[1].trim())};
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                "controller ID range must be MIN-MAX (e.g. 1-1000), not '" + cntlidRange + "'");
    }

    public static TargetConfig read(Path file) throws IOException {
        ObjectMapper m = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        try {
            return m.readValue(file.toFile(), TargetConfig.class);
        } catch (JsonProcessingException e) {
            throw new IOException(
                    "config file " + file + " is not valid: " + e.getOriginalMessage()
                            + (e.getLocation() != null
                                    ? " (line " + e.getLocation().getLineNr() + ")"
                                    : ""),
                    e);
        }
    }
}
