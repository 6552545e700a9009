package io.jbof.target.config;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** host:port, [v6]:port or host (port 4420) as written on the command line. */
public record ListenAddress(String host, int port) {
    public static final int NVME_PORT = 4420;

    public static ListenAddress parse(String text) {
        String host;
        int port = NVME_PORT;
        String t = text.trim();
        if (t.startsWith("[")) {
            int end = t.indexOf(']');
            if (end < 0) throw new IllegalArgumentException("'" + text + "': missing ']' after the IPv6 address");
            host = t.substring(1, end);
            if (end + 1 < t.length()) {
                if (t.charAt(end + 1) != ':')
                    throw new IllegalArgumentException("'" + text + "': expected ':' after ']'");
                port = parsePort(text, t.substring(end + 2));
            }
        } else {
            int colon = t.lastIndexOf(':');
            if (colon >= 0 && t.indexOf(':') == colon) {
                host = t.substring(0, colon);
                port = parsePort(text, t.substring(colon + 1));
            } else {
                host = t; // a bare host, or a bare IPv6 address
            }
        }
        if (host.isEmpty()) throw new IllegalArgumentException("'" + text + "' names no address (e.g. 127.0.0.1:4420)");
        return new ListenAddress(host, port);
    }

    private static int parsePort(String text, String p) {
        try {
            int port = Integer.parseInt(p);
            if (port < 0 || port > 65535) throw new NumberFormatException();
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "': port '" + p + "' is not a number from 0 to 65535");
        }
    }

    /** host:port as written on the command line and in the configuration, an IPv6 address in brackets. */
    public String text() {
        return text(host, port);
    }

    public static String text(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    public InetSocketAddress resolve() throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }

    public boolean isLoopback() {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
