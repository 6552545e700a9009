package io.jbof.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** A JSON-RPC 2.0 client of a target's management socket, as jbof-ctl is: one request, one line back. */
final class RpcClient {
    static final ObjectMapper JSON = new ObjectMapper();

    private RpcClient() {}

    /** The whole response object (with "result" or "error"). */
    static JsonNode call(Path socket, String method, ObjectNode params) throws IOException {
        ObjectNode req =
                JSON.createObjectNode().put("jsonrpc", "2.0").put("id", 7).put("method", method);
        if (params != null) req.set("params", params);
        return raw(socket, JSON.writeValueAsString(req));
    }

    /** Sends {@code text} as it is and reads one line of response. */
    static JsonNode raw(Path socket, String text) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            ByteBuffer b = ByteBuffer.wrap((text + "\n").getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) c.write(b);
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(Channels.newInputStream(c), StandardCharsets.UTF_8));
            String line = in.readLine();
            if (line == null) throw new IOException("the target closed the management connection without answering");
            return JSON.readTree(line);
        }
    }

    /** The result of a call that must succeed. */
    static JsonNode ok(Path socket, String method, ObjectNode params) throws IOException {
        JsonNode r = call(socket, method, params);
        if (r.has("error")) throw new AssertionError(method + " failed: " + r.get("error"));
        return r.get("result");
    }

    static ObjectNode params() {
        return JSON.createObjectNode();
    }
}
