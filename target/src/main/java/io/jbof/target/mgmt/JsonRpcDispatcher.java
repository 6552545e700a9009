package io.jbof.target.mgmt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jbof.target.config.ListenAddress;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.mgmt.ManagementException.Kind;
import io.jbof.util.Sizes;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JSON-RPC 2.0 over the {@link ManagementService}: method names as SPDK's {@code rpc.py} where they
 * mean the same, parameters in snake_case, unknown parameters refused (a typo must not pass silently).
 */
public final class JsonRpcDispatcher {
    private static final Logger log = LoggerFactory.getLogger(JsonRpcDispatcher.class);
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** Results as SPDK spells them (snake_case); the configuration itself keeps the keys its file has. */
    private static final ObjectMapper RESULTS =
            new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);

    /** One method: its parameters (checked against {@code allowed}) to its result. */
    private interface Method {
        Object call(Params p);
    }

    private record Entry(Set<String> allowed, Method method) {}

    private final Map<String, Entry> methods = new LinkedHashMap<>();

    public JsonRpcDispatcher(ManagementService m) {
        add("rpc_get_methods", Set.of(), p -> methods.keySet());
        add("nvmf_get_subsystems", Set.of(), p -> m.subsystems());
        add("nvmf_get_stats", Set.of(), p -> m.stats());
        add("jbof_get_capacity", Set.of(), p -> m.capacity());
        add("nvmf_create_subsystem", Set.of("nqn", "allow_any_host", "model_number"), p -> {
            m.createSubsystem(p.nqn(), p.bool("allow_any_host", false), p.optText("model_number"));
            return true;
        });
        add("nvmf_delete_subsystem", Set.of("nqn", "delete_files"), p -> {
            m.deleteSubsystem(p.nqn(), p.bool("delete_files", false));
            return true;
        });
        add("nvmf_subsystem_add_ns", Set.of("nqn", "namespace"), p -> m.addNamespace(p.nqn(), p.namespace()));
        add("nvmf_subsystem_remove_ns", Set.of("nqn", "nsid"), p -> {
            m.removeNamespace(p.nqn(), p.nsid());
            return true;
        });
        add(
                "jbof_subsystem_resize_ns",
                Set.of("nqn", "nsid", "size"),
                p -> m.resizeNamespace(p.nqn(), p.nsid(), p.size("size")));
        add("nvmf_subsystem_add_host", Set.of("nqn", "host", "dhchap_key", "dhchap_ctrlr_key"), p -> {
            m.addHost(p.nqn(), p.text("host"), p.optText("dhchap_key"), p.optText("dhchap_ctrlr_key"));
            return true;
        });
        add("nvmf_subsystem_remove_host", Set.of("nqn", "host"), p -> {
            m.removeHost(p.nqn(), p.text("host"));
            return true;
        });
        add("nvmf_subsystem_allow_any_host", Set.of("nqn", "allow_any_host"), p -> {
            m.allowAnyHost(p.nqn(), p.bool("allow_any_host", true));
            return true;
        });
        add("nvmf_subsystem_get_listeners", Set.of("nqn"), p -> m.listeners(p.nqn()));
        add("nvmf_subsystem_add_listener", Set.of("nqn", "listen_address"), p -> {
            m.addListener(p.nqn(), p.listenAddress(), p.trtype());
            return true;
        });
        add("nvmf_subsystem_remove_listener", Set.of("nqn", "listen_address"), p -> {
            m.removeListener(p.nqn(), p.listenAddress(), p.trtype());
            return true;
        });
        add("nvmf_subsystem_listener_set_ana_state", Set.of("nqn", "listen_address", "ana_state", "anagrpid"), p -> {
            m.setAnaState(p.nqn(), p.listenAddress(), p.intOr("anagrpid", 1), p.text("ana_state"));
            return true;
        });
        add("save_config", Set.of("file"), p -> {
            String file = p.optText("file");
            return file == null ? m.redactedConfiguration() : m.save(Path.of(file)); // secrets never travel
        });
    }

    private void add(String name, Set<String> allowed, Method method) {
        methods.put(name, new Entry(allowed, method));
    }

    /** The response to one request, or null for a notification (no id). */
    public ObjectNode handle(JsonNode request) {
        JsonNode id = request == null ? null : request.get("id");
        try {
            if (request == null || !request.isObject()) {
                throw new ManagementException(
                        Kind.INVALID_REQUEST,
                        request != null && request.isArray()
                                ? "batch requests are not supported: send one request at a time"
                                : "a request is a JSON object");
            }
            if (!"2.0".equals(request.path("jsonrpc").asText(null)))
                throw new ManagementException(Kind.INVALID_REQUEST, "\"jsonrpc\": \"2.0\" is missing");
            JsonNode name = request.get("method");
            if (name == null || !name.isTextual())
                throw new ManagementException(Kind.INVALID_REQUEST, "\"method\" must be a string");
            Entry e = methods.get(name.asText());
            if (e == null)
                throw new ManagementException(
                        Kind.METHOD_NOT_FOUND, "no method " + name.asText() + " (rpc_get_methods lists them)");
            JsonNode params = request.get("params");
            if (params != null && !params.isNull() && !params.isObject()) {
                throw new ManagementException(Kind.INVALID_PARAMS, "params must be an object of named parameters");
            }
            Params p = new Params(params == null || params.isNull() ? NODES.objectNode() : (ObjectNode) params);
            p.check(e.allowed());
            Object result = e.method().call(p);
            if (id == null) return null;
            JsonNode value =
                    result instanceof TargetConfig ? ConfigFile.JSON.valueToTree(result) : RESULTS.valueToTree(result);
            ObjectNode out = NODES.objectNode().put("jsonrpc", "2.0");
            out.set("result", value);
            out.set("id", id);
            return out;
        } catch (ManagementException ex) {
            return id == null && request != null && request.isObject()
                    ? null
                    : error(id, ex.kind().code, ex.getMessage());
        } catch (RuntimeException ex) {
            log.error("management call failed", ex);
            return error(id, Kind.INTERNAL.code, "internal error: " + ex);
        }
    }

    /** The error response to a request that could not even be parsed. */
    public static ObjectNode parseError(String message) {
        return error(null, Kind.PARSE_ERROR.code, message);
    }

    private static ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode out = NODES.objectNode().put("jsonrpc", "2.0");
        out.putObject("error").put("code", code).put("message", message);
        out.set("id", id == null ? NODES.nullNode() : id);
        return out;
    }

    /** A request's named parameters, read with clear errors. */
    private static final class Params {
        private final ObjectNode node;

        Params(ObjectNode node) {
            this.node = node;
        }

        void check(Set<String> allowed) {
            for (Iterator<String> i = node.fieldNames(); i.hasNext(); ) {
                String f = i.next();
                if (!allowed.contains(f)) {
                    throw new ManagementException(
                            Kind.INVALID_PARAMS,
                            "unknown parameter '" + f + "'" + (allowed.isEmpty() ? "" : "; known: " + allowed));
                }
            }
        }

        String nqn() {
            return text("nqn");
        }

        /** SPDK's listen_address object {trtype, adrfam, traddr, trsvcid} as host:port ([v6]:port). */
        String listenAddress() {
            Params a = listen();
            String addr = a.text("traddr");
            String port = a.optText("trsvcid");
            if (port == null) return ListenAddress.text(addr, ListenAddress.NVME_PORT);
            try {
                return ListenAddress.text(addr, Integer.parseInt(port));
            } catch (NumberFormatException e) {
                throw new ManagementException(Kind.INVALID_PARAMS, "trsvcid must be a port number, not '" + port + "'");
            }
        }

        String trtype() {
            return listen().optText("trtype");
        }

        private Params listen() {
            JsonNode n = node.get("listen_address");
            if (n == null || !n.isObject()) {
                throw new ManagementException(
                        Kind.INVALID_PARAMS,
                        "parameter 'listen_address' ({\"traddr\": ..., \"trsvcid\": ...}) is required");
            }
            Params a = new Params((ObjectNode) n);
            a.check(Set.of("trtype", "adrfam", "traddr", "trsvcid"));
            return a;
        }

        int intOr(String name, int absent) {
            JsonNode n = node.get(name);
            if (n == null || n.isNull()) return absent;
            if (!n.canConvertToInt())
                throw new ManagementException(Kind.INVALID_PARAMS, "parameter '" + name + "' must be an integer");
            return n.asInt();
        }

        int nsid() {
            JsonNode n = node.get("nsid");
            if (n == null || !n.canConvertToInt() || n.asInt() < 1)
                throw new ManagementException(Kind.INVALID_PARAMS, "nsid must be a positive integer");
            return n.asInt();
        }

        String text(String name) {
            String v = optText(name);
            if (v == null || v.isEmpty())
                throw new ManagementException(Kind.INVALID_PARAMS, "parameter '" + name + "' is required");
            return v;
        }

        String optText(String name) {
            JsonNode n = node.get(name);
            if (n == null || n.isNull()) return null;
            if (!n.isTextual())
                throw new ManagementException(Kind.INVALID_PARAMS, "parameter '" + name + "' must be a string");
            return n.asText();
        }

        boolean bool(String name, boolean absent) {
            JsonNode n = node.get(name);
            if (n == null || n.isNull()) return absent;
            if (!n.isBoolean())
                throw new ManagementException(Kind.INVALID_PARAMS, "parameter '" + name + "' must be true or false");
            return n.asBoolean();
        }

        /** A size as bytes (a number) or text with a unit ("64M", "1G"). */
        long size(String name) {
            JsonNode n = node.get(name);
            if (n == null || n.isNull())
                throw new ManagementException(Kind.INVALID_PARAMS, "parameter '" + name + "' is required");
            try {
                long v = n.isIntegralNumber() ? n.asLong() : Sizes.parse(n.asText());
                if (v <= 0) throw new IllegalArgumentException("must be positive");
                return v;
            } catch (IllegalArgumentException e) {
                throw new ManagementException(Kind.INVALID_PARAMS, "parameter '" + name + "': " + e.getMessage());
            }
        }

        /** The "namespace" object: path, and optionally size, nsid, block_size, read_only, direct, force, uuid, anagrpid. */
        TargetConfig.NamespaceConfig namespace() {
            JsonNode n = node.get("namespace");
            if (n == null || !n.isObject())
                throw new ManagementException(
                        Kind.INVALID_PARAMS, "parameter 'namespace' (an object with at least \"path\") is required");
            Params ns = new Params((ObjectNode) n);
            ns.check(Set.of("path", "size", "nsid", "block_size", "read_only", "direct", "force", "uuid", "anagrpid"));
            TargetConfig.NamespaceConfig nc = new TargetConfig.NamespaceConfig();
            nc.path = ns.text("path");
            if (n.has("size")) nc.size = Long.toString(ns.size("size"));
            if (n.has("nsid")) nc.nsid = ns.nsid();
            JsonNode bs = n.get("block_size");
            if (bs != null) {
                if (!bs.canConvertToInt())
                    throw new ManagementException(Kind.INVALID_PARAMS, "block_size must be 512 or 4096");
                nc.blockSize = bs.asInt();
            }
            nc.readOnly = ns.bool("read_only", false);
            nc.direct = ns.bool("direct", false);
            nc.force = ns.bool("force", false);
            if (n.has("anagrpid")) nc.anaGroup = ns.intOr("anagrpid", 1);
            nc.uuid = ns.optText("uuid");
            if (nc.uuid != null) {
                try {
                    nc.uuid = UUID.fromString(nc.uuid).toString();
                } catch (IllegalArgumentException e) {
                    throw new ManagementException(Kind.INVALID_PARAMS, "uuid '" + nc.uuid + "' is not a UUID");
                }
            }
            return nc;
        }
    }
}
