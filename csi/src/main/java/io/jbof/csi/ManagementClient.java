package io.jbof.csi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A JSON-RPC 2.0 client of one target's management API: its Unix socket (one request, one line back,
 * as jbof-ctl does) or its HTTP(S) endpoint with a bearer token. The token travels only in the
 * Authorization header and is never logged.
 */
final class ManagementClient {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Path socket;
    private final URI url;
    private final String token;
    private final HttpClient http;
    private final AtomicLong ids = new AtomicLong();

    /** {@code endpoint}: unix:///PATH, http://HOST:PORT (loopback only, as the target allows) or https://HOST:PORT. */
    ManagementClient(String endpoint, String token) {
        this(endpoint, token, null);
    }

    /** As {@link #ManagementClient(String, String)}; {@code cacert}: a PEM file of the CA that signed the target's certificate (null: the JVM's). */
    ManagementClient(String endpoint, String token, Path cacert) {
        this.token = token;
        if (endpoint.startsWith("unix://")) {
            this.socket = Path.of(endpoint.substring("unix://".length()));
            this.url = null;
            this.http = null;
        } else if (endpoint.startsWith("http://") || endpoint.startsWith("https://")) {
            this.socket = null;
            this.url = URI.create(endpoint);
            HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(TIMEOUT);
            if (cacert != null) b.sslContext(trusting(cacert));
            this.http = b.build();
        } else {
            throw new IllegalArgumentException(
                    "management endpoint '" + endpoint + "': use unix:///PATH, http://HOST:PORT or https://HOST:PORT");
        }
    }

    /** The call's result; a JSON-RPC error becomes a {@link CallFailed} with its code. */
    JsonNode call(String method, ObjectNode params) throws IOException {
        ObjectNode req = JSON.createObjectNode()
                .put("jsonrpc", "2.0")
                .put("id", ids.incrementAndGet())
                .put("method", method);
        if (params != null) req.set("params", params);
        JsonNode resp =
                socket != null ? overSocket(JSON.writeValueAsString(req)) : overHttp(JSON.writeValueAsString(req));
        JsonNode error = resp.get("error");
        if (error != null) {
            throw new CallFailed(
                    method, error.path("code").asInt(), error.path("message").asText());
        }
        return resp.get("result");
    }

    private JsonNode overSocket(String text) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            ByteBuffer b = ByteBuffer.wrap((text + "\n").getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) c.write(b);
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(Channels.newInputStream(c), StandardCharsets.UTF_8));
            String line = in.readLine();
            if (line == null)
                throw new IOException("the target at " + socket + " closed the connection without answering");
            return JSON.readTree(line);
        }
    }

    private JsonNode overHttp(String text) throws IOException {
        HttpRequest.Builder b = HttpRequest.newBuilder(url)
                .timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(text));
        if (token != null) b.header("Authorization", "Bearer " + token);
        HttpResponse<String> r;
        try {
            r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while calling " + url, e);
        }
        if (r.statusCode() == 401)
            throw new IOException(url + " refused the token (401): check the storage host's token");
        if (r.statusCode() != 200) throw new IOException(url + " answered HTTP " + r.statusCode());
        return JSON.readTree(r.body());
    }

    /** TLS that trusts the certificates in {@code pem} (a storage host's own CA or self-signed certificate). */
    private static SSLContext trusting(Path pem) {
        try (InputStream in = Files.newInputStream(pem)) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in))
                ks.setCertificateEntry("ca" + i++, c);
            if (i == 0) throw new IllegalArgumentException("cacert " + pem + " holds no certificate");
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cacert " + pem + ": " + e.getMessage(), e);
        }
    }

    static ObjectNode params() {
        return JSON.createObjectNode();
    }

    /** A call the target answered with a JSON-RPC error; {@link #code} says the kind (-32001 not found, -32002 in use...). */
    static final class CallFailed extends IOException {
        static final int NOT_FOUND = -32001;
        static final int ALREADY_EXISTS = -32002;

        final int code;

        CallFailed(String method, int code, String message) {
            super(method + ": " + message);
            this.code = code;
        }
    }
}
