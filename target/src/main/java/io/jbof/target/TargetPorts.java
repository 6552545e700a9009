package io.jbof.target;

import io.jbof.target.config.ListenAddress;
import io.jbof.target.controller.PortInfo;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The ports a target listens on (nvmet's ports): each with its ID, the address it is bound to, and the
 * text it was configured with (what subsystems' listen lists and the saved configuration name it by).
 * Discovery and Connect read them from every event loop; the management API adds to them.
 */
final class TargetPorts {
    private final List<PortInfo> ports = new CopyOnWriteArrayList<>();
    private final Map<Integer, String> specs = new ConcurrentHashMap<>();

    void add(PortInfo p, String spec) {
        specs.put(p.portId(), spec);
        ports.add(p);
    }

    List<PortInfo> all() {
        return ports;
    }

    int nextId() {
        int max = 0;
        for (PortInfo p : ports) max = Math.max(max, p.portId());
        return max + 1;
    }

    /** The configured text of a port ("127.0.0.1:4420"). */
    String spec(int portId) {
        return specs.get(portId);
    }

    /**
     * The port {@code text} names: one configured with exactly that text, else one bound to that address
     * and port (an ephemeral ":0" port is named by the port it got). Null when none is.
     */
    PortInfo find(String text) {
        for (PortInfo p : ports) if (text.trim().equals(specs.get(p.portId()))) return p;
        ListenAddress a = ListenAddress.parse(text);
        InetAddress want;
        try {
            want = InetAddress.getByName(a.host());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + text + "': unknown host " + a.host());
        }
        for (PortInfo p : ports) {
            try {
                if (p.port() == a.port() && InetAddress.getByName(p.address()).equals(want)) return p;
            } catch (UnknownHostException e) {
                // a bound address always resolves
            }
        }
        return null;
    }

    /** The port with this ID, or null. */
    PortInfo byId(int portId) {
        for (PortInfo p : ports) if (p.portId() == portId) return p;
        return null;
    }
}
