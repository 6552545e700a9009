package io.jbof.target.mgmt;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.jbof.target.config.ListenAddress;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The management API over HTTP for a cluster manager on another host: JSON-RPC 2.0 in the body of a
 * POST, a bearer token on every request, and TLS on any address but loopback (the token, and what
 * the calls carry, must not cross a network in clear text). The token is compared in constant time
 * and never logged.
 */
public final class RpcHttpServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RpcHttpServer.class);
    /** Larger requests are refused: no call needs more. */
    static final int MAX_BODY = 1 << 20;

    private final HttpServer server;
    private final ExecutorService executor;

    private RpcHttpServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Serves on {@code listen}; {@code certPem}/{@code keyPem} (PEM certificate chain and PKCS#8 key) turn
     * on TLS, which any non-loopback address requires.
     */
    public static RpcHttpServer start(
            String listen, String token, Path certPem, Path keyPem, JsonRpcDispatcher dispatcher) throws IOException {
        ListenAddress a = ListenAddress.parse(listen);
        if (token == null || token.length() < 16) {
            throw new IllegalArgumentException(
                    "--rpc-listen needs --rpc-token with at least 16 characters (give it as @FILE so ps does not show it)");
        }
        boolean tls = certPem != null || keyPem != null;
        if (tls && (certPem == null || keyPem == null))
            throw new IllegalArgumentException("TLS for --rpc-listen needs both --rpc-tls-cert and --rpc-tls-key");
        if (!tls && !a.isLoopback()) {
            throw new IllegalArgumentException(
                    "--rpc-listen " + listen + " is not loopback: the token would cross the network in clear text;"
                            + " add --rpc-tls-cert CERT.pem --rpc-tls-key KEY.pem");
        }
        InetSocketAddress addr = a.resolve();
        HttpServer s;
        if (tls) {
            HttpsServer https = HttpsServer.create(addr, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(sslContext(certPem, keyPem)));
            s = https;
        } else {
            s = HttpServer.create(addr, 64);
        }
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        ObjectMapper json = new ObjectMapper();
        s.createContext("/", ex -> handle(ex, expected, json, dispatcher));
        ExecutorService pool = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "jbof-rpc-http");
            t.setDaemon(true);
            return t;
        });
        s.setExecutor(pool);
        s.start();
        log.info("management API on {}://{}", tls ? "https" : "http", s.getAddress());
        return new RpcHttpServer(s, pool);
    }

    public InetSocketAddress address() {
        return server.getAddress();
    }

    private static void handle(HttpExchange ex, byte[] expected, ObjectMapper json, JsonRpcDispatcher dispatcher)
            throws IOException {
        try {
            // Read the body (bounded) whatever the answer: an unread body left on a kept-alive connection breaks the
            // client's next request.
            byte[] body = readAtMost(ex.getRequestBody(), MAX_BODY);
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            if (auth == null || !MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), expected)) {
                log.warn("management API: refused a request from {} without the right token", ex.getRemoteAddress());
                ex.getResponseHeaders().add("WWW-Authenticate", "Bearer");
                send(ex, 401, "{\"error\":\"a valid bearer token is required\"}");
                return;
            }
            if (!"POST".equals(ex.getRequestMethod())) {
                ex.getResponseHeaders().add("Allow", "POST");
                send(ex, 405, "{\"error\":\"POST a JSON-RPC 2.0 request\"}");
                return;
            }
            if (body == null) {
                ex.getResponseHeaders().set("Connection", "close");
                send(ex, 413, "{\"error\":\"request larger than 1 MiB\"}");
                return;
            }
            ObjectNode response;
            try {
                JsonNode request = json.readTree(new ByteArrayInputStream(body));
                response = dispatcher.handle(request);
            } catch (JsonProcessingException e) {
                response = JsonRpcDispatcher.parseError("not JSON: " + e.getOriginalMessage());
            }
            if (response == null) {
                ex.sendResponseHeaders(204, -1);
                return;
            }
            send(ex, 200, json.writeValueAsString(response));
        } finally {
            ex.close();
        }
    }

    private static byte[] readAtMost(InputStream in, int max) throws IOException {
        byte[] b = in.readNBytes(max + 1);
        return b.length > max ? null : b;
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    /** TLS from PEM files: the certificate chain and its PKCS#8 private key (RSA or EC). */
    static SSLContext sslContext(Path certPem, Path keyPem) throws IOException {
        try {
            Collection<? extends Certificate> chain;
            try (InputStream in = Files.newInputStream(certPem)) {
                chain = CertificateFactory.getInstance("X.509").generateCertificates(in);
            }
            if (chain.isEmpty()) throw new IOException(certPem + " holds no certificate");
            byte[] der = pemBody(Files.readString(keyPem), keyPem);
            PrivateKey key = null;
            for (String alg : new String[] {"RSA", "EC", "Ed25519"}) {
                try {
                    key = KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
                    break;
                } catch (GeneralSecurityException ignored) {
                    // try the next algorithm
                }
            }
            if (key == null)
                throw new IOException(
                        keyPem
                                + " is not an unencrypted PKCS#8 RSA, EC or Ed25519 key (openssl pkcs8 -topk8 -nocrypt converts one)");
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] pw = new char[0];
            ks.setKeyEntry("rpc", key, pw, chain.toArray(new Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            SSLContext ctx = SSLContext.getInstance("TLSv1.3");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot set up TLS from " + certPem + " and " + keyPem + ": " + e.getMessage(), e);
        }
    }

    private static byte[] pemBody(String pem, Path file) throws IOException {
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new IOException(
                    file
                            + " has no '-----BEGIN PRIVATE KEY-----' block (PKCS#8; openssl pkcs8 -topk8 -nocrypt converts other forms)");
        }
        String b64 = pem.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end)
                .replaceAll("\\s", "");
        return Base64.getDecoder().decode(b64);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
