package io.jbof.target.cli;

import java.nio.charset.StandardCharsets;
import jnr.ffi.LibraryLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * sd_notify(3) without libsystemd: one datagram to the socket systemd names in NOTIFY_SOCKET, so a
 * {@code Type=notify} unit is "started" only once the target listens (and "stopping" when it drains).
 * The JDK has no Unix datagram sockets, hence three libc calls through jnr-ffi.
 */
public final class SystemdNotify {
    private static final Logger log = LoggerFactory.getLogger(SystemdNotify.class);
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 02000000;
    private static final int SUN_PATH = 108;

    /** The libc calls; public only because jnr-ffi implements it in a class loader of its own. */
    public interface Socket {
        int socket(int domain, int type, int protocol);

        long sendto(int fd, byte[] buf, long len, int flags, byte[] addr, int addrlen);

        int close(int fd);
    }

    private SystemdNotify() {}

    /** Sends {@code state} (e.g. "READY=1") when systemd supervises us; false when it does not or the send failed. */
    public static boolean send(String state) {
        String socket = System.getenv("NOTIFY_SOCKET");
        if (socket == null || socket.isEmpty()) return false;
        byte[] path = socket.getBytes(StandardCharsets.UTF_8);
        if (path.length >= SUN_PATH || (path[0] != '/' && path[0] != '@')) {
            log.warn("NOTIFY_SOCKET '{}' is not a socket path; readiness not reported", socket);
            return false;
        }
        byte[] addr = new byte[2 + path.length + 1];
        addr[0] = AF_UNIX; // sa_family, little-endian
        System.arraycopy(path, 0, addr, 2, path.length);
        int addrlen = addr.length;
        if (path[0] == '@') { // abstract namespace: a leading NUL, no trailing one
            addr[2] = 0;
            addrlen = 2 + path.length;
        }
        try {
            Socket libc = LibraryLoader.create(Socket.class).load("c");
            int fd = libc.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) return false;
            try {
                byte[] msg = state.getBytes(StandardCharsets.UTF_8);
                return libc.sendto(fd, msg, msg.length, 0, addr, addrlen) == msg.length;
            } finally {
                libc.close(fd);
            }
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            log.warn("cannot tell systemd the target's state: {}", e.toString());
            return false;
        }
    }
}
