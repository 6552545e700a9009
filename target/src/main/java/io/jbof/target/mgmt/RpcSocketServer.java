package io.jbof.target.mgmt;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The management API on a Unix socket: JSON-RPC 2.0 requests, one JSON value after another (as SPDK's
 * rpc.py sends them), each answered by one line of JSON. The socket is mode 0600: whoever may open it
 * may change every volume, so the file mode is the authentication. Calls are rare and serialised by
 * the {@link ManagementService}, so each connection simply gets a thread, a bounded number at once.
 */
public final class RpcSocketServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RpcSocketServer.class);
    /** Connections served at once; more wait in the listen backlog. */
    private static final int MAX_CONNECTIONS = 16;

    private final Path path;
    private final ServerSocketChannel server;
    private final JsonRpcDispatcher dispatcher;
    private final ObjectMapper json = new ObjectMapper();
    private final Semaphore slots = new Semaphore(MAX_CONNECTIONS);
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    private RpcSocketServer(Path path, ServerSocketChannel server, JsonRpcDispatcher dispatcher) {
        this.path = path;
        this.server = server;
        this.dispatcher = dispatcher;
        this.acceptor = new Thread(this::acceptLoop, "jbof-rpc-accept");
        acceptor.setDaemon(true);
    }

    /** Listens on {@code path} (its folder is created 0700 if missing); a stale socket of a killed target is replaced. */
    public static RpcSocketServer start(Path path, JsonRpcDispatcher dispatcher) throws IOException {
        Path abs = path.toAbsolutePath();
        Path dir = abs.getParent();
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(
                    dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        if (Files.exists(abs)) {
            if (answers(abs))
                throw new IOException(
                        "another target serves its management API on " + abs + ": give --rpc-socket another path");
            Files.delete(abs); // left by a target that was killed
        }
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.bind(UnixDomainSocketAddress.of(abs), 64);
            // bind creates the file by the umask (normally without write for others, so nobody else can connect);
            // tighten it to the owner at once.
            Files.setPosixFilePermissions(abs, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException e) {
            ch.close();
            throw new IOException("cannot serve the management API on " + abs + ": " + e.getMessage(), e);
        }
        RpcSocketServer s = new RpcSocketServer(abs, ch, dispatcher);
        s.acceptor.start();
        log.info("management API on {}", abs);
        return s;
    }

    private static boolean answers(Path socket) {
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            return c.isConnected();
        } catch (IOException e) {
            return false;
        }
    }

    public Path path() {
        return path;
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel c;
            try {
                slots.acquire();
                c = server.accept();
            } catch (ClosedChannelException | InterruptedException e) {
                return;
            } catch (IOException e) {
                if (!closed) log.warn("management API: accept failed: {}", e.getMessage());
                slots.release();
                continue;
            }
            open.add(c);
            Thread t = new Thread(() -> serve(c), "jbof-rpc-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(SocketChannel c) {
        try (c;
                InputStream in = Channels.newInputStream(c);
                OutputStream out = Channels.newOutputStream(c);
                JsonParser parser = json.getFactory().createParser(in)) {
            while (!closed) {
                JsonNode request;
                try {
                    if (parser.nextToken() == null) return; // the client closed
                    request = json.readTree(parser);
                } catch (JsonProcessingException e) {
                    reply(out, JsonRpcDispatcher.parseError("not JSON: " + e.getOriginalMessage()));
                    return; // the stream cannot be resynchronised
                }
                ObjectNode response = dispatcher.handle(request);
                if (response != null) reply(out, response);
            }
        } catch (IOException e) {
            if (!closed) log.debug("management connection ended: {}", e.getMessage());
        } finally {
            open.remove(c);
            slots.release();
        }
    }

    private void reply(OutputStream out, ObjectNode response) throws IOException {
        byte[] b = json.writeValueAsBytes(response);
        out.write(b);
        out.write('\n');
        out.flush();
    }

    /** Stops serving: the socket file goes, open connections close. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing: nothing to do
        }
        for (SocketChannel c : open) {
            try {
                c.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        acceptor.interrupt();
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            log.warn("cannot remove the management socket {}: {}", path, e.getMessage());
        }
    }
}
