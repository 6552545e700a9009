package io.jbof.csi;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.jbof.csi.v1.CapacityRange;
import io.jbof.csi.v1.ControllerExpandVolumeRequest;
import io.jbof.csi.v1.ControllerExpandVolumeResponse;
import io.jbof.csi.v1.ControllerGetCapabilitiesRequest;
import io.jbof.csi.v1.ControllerGetCapabilitiesResponse;
import io.jbof.csi.v1.ControllerPublishVolumeRequest;
import io.jbof.csi.v1.ControllerPublishVolumeResponse;
import io.jbof.csi.v1.ControllerServiceCapability;
import io.jbof.csi.v1.ControllerUnpublishVolumeRequest;
import io.jbof.csi.v1.ControllerUnpublishVolumeResponse;
import io.jbof.csi.v1.CreateVolumeRequest;
import io.jbof.csi.v1.CreateVolumeResponse;
import io.jbof.csi.v1.DeleteVolumeRequest;
import io.jbof.csi.v1.DeleteVolumeResponse;
import io.jbof.csi.v1.GetCapacityRequest;
import io.jbof.csi.v1.GetCapacityResponse;
import io.jbof.csi.v1.ListVolumesRequest;
import io.jbof.csi.v1.ListVolumesResponse;
import io.jbof.csi.v1.ValidateVolumeCapabilitiesRequest;
import io.jbof.csi.v1.ValidateVolumeCapabilitiesResponse;
import io.jbof.csi.v1.Volume;
import io.jbof.csi.v1.VolumeCapability;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CSI Controller service: one subsystem with one namespace (a file) per volume, placed on the first
 * storage host with room, as SPDK-CSI does; publishing a volume to a node allows that node's host NQN
 * on the subsystem. Calls on one volume are serialised, so a retried or concurrent call finds what the
 * first one did.
 */
final class ControllerService {
    private static final Logger log = LoggerFactory.getLogger(ControllerService.class);
    /** Size of a volume whose CreateVolume gives no capacity. */
    static final long DEFAULT_SIZE = 1L << 30;
    /** Volumes are whole 1 MiB units: any block size divides them, and hosts see round sizes. */
    static final long UNIT = 1L << 20;

    static final String CTX_NQN = "nqn";
    static final String CTX_PORTALS = "portals";
    static final String CTX_UUID = "uuid";

    private final Map<String, StorageHost> hosts = new LinkedHashMap<>();
    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();

    ControllerService(List<StorageHost> storageHosts) {
        for (StorageHost h : storageHosts) {
            if (hosts.put(h.name, h) != null)
                throw new IllegalArgumentException("storage host " + h.name + " is given twice");
        }
    }

    ServerServiceDefinition bind() {
        return new CsiMethods.Binder("Controller")
                .unary(
                        "CreateVolume",
                        CreateVolumeRequest.getDefaultInstance(),
                        CreateVolumeResponse.getDefaultInstance(),
                        this::create)
                .unary(
                        "DeleteVolume",
                        DeleteVolumeRequest.getDefaultInstance(),
                        DeleteVolumeResponse.getDefaultInstance(),
                        this::delete)
                .unary(
                        "ControllerPublishVolume",
                        ControllerPublishVolumeRequest.getDefaultInstance(),
                        ControllerPublishVolumeResponse.getDefaultInstance(),
                        this::publish)
                .unary(
                        "ControllerUnpublishVolume",
                        ControllerUnpublishVolumeRequest.getDefaultInstance(),
                        ControllerUnpublishVolumeResponse.getDefaultInstance(),
                        this::unpublish)
                .unary(
                        "ValidateVolumeCapabilities",
                        ValidateVolumeCapabilitiesRequest.getDefaultInstance(),
                        ValidateVolumeCapabilitiesResponse.getDefaultInstance(),
                        this::validate)
                .unary(
                        "ListVolumes",
                        ListVolumesRequest.getDefaultInstance(),
                        ListVolumesResponse.getDefaultInstance(),
                        this::list)
                .unary(
                        "GetCapacity",
                        GetCapacityRequest.getDefaultInstance(),
                        GetCapacityResponse.getDefaultInstance(),
                        this::capacity)
                .unary(
                        "ControllerGetCapabilities",
                        ControllerGetCapabilitiesRequest.getDefaultInstance(),
                        ControllerGetCapabilitiesResponse.getDefaultInstance(),
                        r -> capabilities())
                .unary(
                        "ControllerExpandVolume",
                        ControllerExpandVolumeRequest.getDefaultInstance(),
                        ControllerExpandVolumeResponse.getDefaultInstance(),
                        this::expand)
                .build();
    }

    // ---- CreateVolume / DeleteVolume ----

    private CreateVolumeResponse create(CreateVolumeRequest r) throws IOException {
        if (r.getName().isEmpty()) throw invalid("name is required");
        if (r.getVolumeCapabilitiesCount() == 0) throw invalid("volume_capabilities is required");
        for (VolumeCapability c : r.getVolumeCapabilitiesList()) {
            String why = unsupported(c);
            if (why != null) throw invalid(why);
        }
        if (r.hasVolumeContentSource())
            throw invalid("volumes are created empty: jbof offers no snapshots or clones yet");
        long size = sizeFor(r.getCapacityRange());
        String key = VolumeId.keyOf(r.getName());
        synchronized (lock(key)) {
            for (StorageHost h : hosts.values()) {
                JsonNode s;
                try {
                    s = h.subsystem(VolumeId.NQN_PREFIX + key);
                } catch (ManagementClient.CallFailed e) {
                    throw e;
                } catch (IOException e) {
                    // Provisioning goes on while a host is down. The one risk, a second copy of a volume whose
                    // first CreateVolume succeeded there but whose answer was lost, is logged for the operator.
                    log.warn(
                            "storage host {} is not reachable; volume {} is looked for on the others: {}",
                            h.name,
                            r.getName(),
                            e.getMessage());
                    continue;
                }
                if (s == null) continue;
                VolumeId id = new VolumeId(h.name, key);
                long have = s.path("namespaces").path(0).path("size").asLong();
                if (!fits(have, r.getCapacityRange())) {
                    throw Status.ALREADY_EXISTS
                            .withDescription("volume " + r.getName() + " exists with " + have
                                    + " bytes, outside the capacity range asked for")
                            .asRuntimeException();
                }
                return CreateVolumeResponse.newBuilder()
                        .setVolume(volume(h, id, s))
                        .build();
            }
            StorageHost h = placeFor(size);
            VolumeId id = new VolumeId(h.name, key);
            String uuid = UUID.randomUUID().toString();
            try {
                h.create(id.nqn(), id.file(h.dir), size, uuid);
            } catch (ManagementClient.CallFailed e) {
                throw Status.INTERNAL
                        .withDescription("storage host " + h.name + ": " + e.getMessage())
                        .asRuntimeException();
            }
            log.info("volume {} ({} bytes) created on {} as {}", r.getName(), size, h.name, id);
            return CreateVolumeResponse.newBuilder()
                    .setVolume(volume(h, id, h.subsystem(id.nqn())))
                    .build();
        }
    }

    private StorageHost placeFor(long size) throws IOException {
        IOException unreachable = null;
        for (StorageHost h : hosts.values()) {
            try {
                if (h.available() >= size) return h;
            } catch (ManagementClient.CallFailed e) {
                throw e;
            } catch (IOException e) {
                log.warn("storage host {} is not reachable: {}", h.name, e.getMessage());
                unreachable = e;
            }
        }
        if (unreachable != null) throw unreachable;
        throw Status.RESOURCE_EXHAUSTED
                .withDescription("no storage host has room for " + size + " bytes")
                .asRuntimeException();
    }

    private DeleteVolumeResponse delete(DeleteVolumeRequest r) throws IOException {
        if (r.getVolumeId().isEmpty()) throw invalid("volume_id is required");
        VolumeId id = VolumeId.parse(r.getVolumeId());
        StorageHost h = id == null ? null : hosts.get(id.host());
        if (h == null)
            return DeleteVolumeResponse.getDefaultInstance(); // never ours, or gone with its host: nothing to delete
        synchronized (lock(id.key())) {
            JsonNode s = h.subsystem(id.nqn());
            if (s != null) {
                if (s.path("controllers").asInt() > 0) {
                    throw Status.FAILED_PRECONDITION
                            .withDescription("volume " + id + " is still connected from " + s.path("hosts")
                                    + ": unstage it first")
                            .asRuntimeException();
                }
                try {
                    h.delete(id.nqn());
                } catch (ManagementClient.CallFailed e) {
                    if (e.code != ManagementClient.CallFailed.NOT_FOUND) throw e;
                }
                log.info("volume {} deleted", id);
            }
        }
        return DeleteVolumeResponse.getDefaultInstance();
    }

    // ---- ControllerPublishVolume / ControllerUnpublishVolume ----

    private ControllerPublishVolumeResponse publish(ControllerPublishVolumeRequest r) throws IOException {
        if (r.getVolumeId().isEmpty()) throw invalid("volume_id is required");
        if (r.getNodeId().isEmpty()) throw invalid("node_id is required");
        if (!r.hasVolumeCapability()) throw invalid("volume_capability is required");
        String why = unsupported(r.getVolumeCapability());
        if (why != null) throw invalid(why);
        if (!r.getNodeId().startsWith("nqn."))
            throw notFound("node " + r.getNodeId() + ": a node ID is the node's host NQN");
        DhchapSecrets auth = DhchapSecrets.of(r.getSecretsMap());
        VolumeId id = VolumeId.parse(r.getVolumeId());
        StorageHost h = hostOf(id, r.getVolumeId());
        synchronized (lock(id.key())) {
            JsonNode s = existing(h, id);
            boolean multiNode = isMultiNode(r.getVolumeCapability());
            for (JsonNode other : s.path("hosts")) {
                if (!multiNode && !other.asText().equals(r.getNodeId())) {
                    throw Status.FAILED_PRECONDITION
                            .withDescription(
                                    "volume " + id + " is published to " + other.asText() + " and is single-node")
                            .asRuntimeException();
                }
            }
            try {
                h.addHost(id.nqn(), r.getNodeId(), auth);
            } catch (ManagementClient.CallFailed e) {
                if (e.code != ManagementClient.CallFailed.ALREADY_EXISTS) throw e;
            }
            return ControllerPublishVolumeResponse.newBuilder()
                    .putAllPublishContext(context(h, id, s))
                    .build();
        }
    }

    private ControllerUnpublishVolumeResponse unpublish(ControllerUnpublishVolumeRequest r) throws IOException {
        if (r.getVolumeId().isEmpty()) throw invalid("volume_id is required");
        VolumeId id = VolumeId.parse(r.getVolumeId());
        StorageHost h = id == null ? null : hosts.get(id.host());
        if (h == null) return ControllerUnpublishVolumeResponse.getDefaultInstance();
        synchronized (lock(id.key())) {
            JsonNode s = h.subsystem(id.nqn());
            if (s == null)
                return ControllerUnpublishVolumeResponse.getDefaultInstance(); // gone: unpublished everywhere
            for (JsonNode host : s.path("hosts")) {
                if (!r.getNodeId().isEmpty() && !r.getNodeId().equals(host.asText())) continue;
                try {
                    h.removeHost(id.nqn(), host.asText()); // its controllers on this volume are torn down too
                } catch (ManagementClient.CallFailed e) {
                    if (e.code != ManagementClient.CallFailed.NOT_FOUND) throw e;
                }
            }
        }
        return ControllerUnpublishVolumeResponse.getDefaultInstance();
    }

    // ---- ValidateVolumeCapabilities / ListVolumes / GetCapacity / ControllerExpandVolume ----

    private ValidateVolumeCapabilitiesResponse validate(ValidateVolumeCapabilitiesRequest r) throws IOException {
        if (r.getVolumeId().isEmpty()) throw invalid("volume_id is required");
        if (r.getVolumeCapabilitiesCount() == 0) throw invalid("volume_capabilities is required");
        VolumeId id = VolumeId.parse(r.getVolumeId());
        existing(hostOf(id, r.getVolumeId()), id);
        for (VolumeCapability c : r.getVolumeCapabilitiesList()) {
            String why = unsupported(c);
            if (why != null)
                return ValidateVolumeCapabilitiesResponse.newBuilder()
                        .setMessage(why)
                        .build();
        }
        return ValidateVolumeCapabilitiesResponse.newBuilder()
                .setConfirmed(ValidateVolumeCapabilitiesResponse.Confirmed.newBuilder()
                        .addAllVolumeCapabilities(r.getVolumeCapabilitiesList())
                        .putAllVolumeContext(r.getVolumeContextMap())
                        .putAllParameters(r.getParametersMap()))
                .build();
    }

    private ListVolumesResponse list(ListVolumesRequest r) throws IOException {
        if (r.getMaxEntries() < 0) throw invalid("max_entries must not be negative");
        List<Volume> all = new ArrayList<>();
        for (StorageHost h : hosts.values()) {
            for (JsonNode s : h.subsystems()) {
                String nqn = s.path("nqn").asText();
                if (VolumeId.isVolumeNqn(nqn)) all.add(volume(h, new VolumeId(h.name, VolumeId.keyOfNqn(nqn)), s));
            }
        }
        all.sort((a, b) -> a.getVolumeId().compareTo(b.getVolumeId()));
        int start = 0;
        if (!r.getStartingToken().isEmpty()) {
            try {
                start = Integer.parseInt(r.getStartingToken());
            } catch (NumberFormatException e) {
                start = -1;
            }
            if (start < 0 || start > all.size()) {
                throw Status.ABORTED
                        .withDescription("starting_token " + r.getStartingToken() + " is not one ListVolumes gave")
                        .asRuntimeException();
            }
        }
        int end = r.getMaxEntries() == 0 ? all.size() : Math.min(all.size(), start + r.getMaxEntries());
        ListVolumesResponse.Builder out = ListVolumesResponse.newBuilder();
        for (Volume v : all.subList(start, end))
            out.addEntries(ListVolumesResponse.Entry.newBuilder().setVolume(v));
        if (end < all.size()) out.setNextToken(Integer.toString(end));
        return out.build();
    }

    private GetCapacityResponse capacity(GetCapacityRequest r) throws IOException {
        for (VolumeCapability c : r.getVolumeCapabilitiesList()) {
            if (unsupported(c) != null)
                return GetCapacityResponse.getDefaultInstance(); // no room for what cannot be made
        }
        long total = 0;
        for (StorageHost h : hosts.values()) {
            long a = h.available();
            total = a == Long.MAX_VALUE || total + a < 0 ? Long.MAX_VALUE : total + a;
        }
        return GetCapacityResponse.newBuilder().setAvailableCapacity(total).build();
    }

    private ControllerExpandVolumeResponse expand(ControllerExpandVolumeRequest r) throws IOException {
        if (r.getVolumeId().isEmpty()) throw invalid("volume_id is required");
        if (!r.hasCapacityRange()) throw invalid("capacity_range is required");
        VolumeId id = VolumeId.parse(r.getVolumeId());
        StorageHost h = hostOf(id, r.getVolumeId());
        long want = sizeFor(r.getCapacityRange());
        synchronized (lock(id.key())) {
            JsonNode ns = existing(h, id).path("namespaces").path(0);
            long size = ns.path("size").asLong();
            if (size < want) size = h.resize(id.nqn(), ns.path("nsid").asInt(1), want);
            boolean block = r.hasVolumeCapability() && r.getVolumeCapability().hasBlock();
            return ControllerExpandVolumeResponse.newBuilder()
                    .setCapacityBytes(size)
                    .setNodeExpansionRequired(!block) // a file system on it grows on the node (resize2fs)
                    .build();
        }
    }

    private static ControllerGetCapabilitiesResponse capabilities() {
        ControllerGetCapabilitiesResponse.Builder b = ControllerGetCapabilitiesResponse.newBuilder();
        for (ControllerServiceCapability.RPC.Type t : List.of(
                ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME,
                ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME,
                ControllerServiceCapability.RPC.Type.LIST_VOLUMES,
                ControllerServiceCapability.RPC.Type.GET_CAPACITY,
                ControllerServiceCapability.RPC.Type.EXPAND_VOLUME)) {
            b.addCapabilities(ControllerServiceCapability.newBuilder()
                    .setRpc(ControllerServiceCapability.RPC.newBuilder().setType(t)));
        }
        return b.build();
    }

    // ---- helpers ----

    /** The size a volume gets for {@code range}: the least it may have, in whole MiB, within its limit. */
    static long sizeFor(CapacityRange range) {
        long required = range.getRequiredBytes();
        long limit = range.getLimitBytes();
        if (required < 0 || limit < 0) throw invalid("capacity_range must not be negative");
        if (limit > 0 && required > limit)
            throw invalid("capacity_range: required_bytes " + required + " exceeds limit_bytes " + limit);
        long size = required == 0
                ? (limit > 0 ? Math.min(DEFAULT_SIZE, limit / UNIT * UNIT) : DEFAULT_SIZE)
                : (required + UNIT - 1) / UNIT * UNIT;
        if (size == 0 || (limit > 0 && size > limit)) {
            throw Status.OUT_OF_RANGE
                    .withDescription("capacity_range: volumes are whole MiB, and none lies within it")
                    .asRuntimeException();
        }
        return size;
    }

    private static boolean fits(long size, CapacityRange range) {
        return size >= range.getRequiredBytes() && (range.getLimitBytes() == 0 || size <= range.getLimitBytes());
    }

    /** Why jbof cannot serve {@code c}, or null when it can. */
    static String unsupported(VolumeCapability c) {
        if (!c.hasAccessMode()) return "volume_capability.access_mode is required";
        if (!c.hasBlock() && !c.hasMount()) return "volume_capability: block or mount is required";
        VolumeCapability.AccessMode.Mode m = c.getAccessMode().getMode();
        return switch (m) {
            case SINGLE_NODE_WRITER,
                    SINGLE_NODE_READER_ONLY,
                    SINGLE_NODE_SINGLE_WRITER,
                    SINGLE_NODE_MULTI_WRITER,
                    MULTI_NODE_READER_ONLY -> null;
            // Several writers on one block device are safe only to software that coordinates them; a file
            // system mounted on several nodes would be corrupted.
            case MULTI_NODE_SINGLE_WRITER, MULTI_NODE_MULTI_WRITER ->
                c.hasBlock() ? null : "access mode " + m + " needs a raw block volume";
            default -> "access mode " + m + " is not one jbof serves";
        };
    }

    private static boolean isMultiNode(VolumeCapability c) {
        return switch (c.getAccessMode().getMode()) {
            case MULTI_NODE_READER_ONLY, MULTI_NODE_SINGLE_WRITER, MULTI_NODE_MULTI_WRITER -> true;
            default -> false;
        };
    }

    private Volume volume(StorageHost h, VolumeId id, JsonNode s) {
        return Volume.newBuilder()
                .setVolumeId(id.toString())
                .setCapacityBytes(s.path("namespaces").path(0).path("size").asLong())
                .putAllVolumeContext(context(h, id, s))
                .build();
    }

    /** What a node needs to attach the volume: the subsystem, where to connect, and the namespace's UUID to find it by. */
    private static Map<String, String> context(StorageHost h, VolumeId id, JsonNode s) {
        Map<String, String> ctx = new LinkedHashMap<>();
        ctx.put(CTX_NQN, id.nqn());
        ctx.put(CTX_PORTALS, String.join(",", h.portals));
        ctx.put(CTX_UUID, s.path("namespaces").path(0).path("uuid").asText());
        return ctx;
    }

    private StorageHost hostOf(VolumeId id, String raw) {
        StorageHost h = id == null ? null : hosts.get(id.host());
        if (h == null) throw notFound("volume " + raw + " does not exist");
        return h;
    }

    private static JsonNode existing(StorageHost h, VolumeId id) throws IOException {
        JsonNode s = h.subsystem(id.nqn());
        if (s == null) throw notFound("volume " + id + " does not exist");
        return s;
    }

    private Object lock(String key) {
        return locks.computeIfAbsent(key, k -> new Object());
    }

    static StatusRuntimeException invalid(String why) {
        return Status.INVALID_ARGUMENT.withDescription(why).asRuntimeException();
    }

    static StatusRuntimeException notFound(String why) {
        return Status.NOT_FOUND.withDescription(why).asRuntimeException();
    }
}
