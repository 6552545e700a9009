package io.jbof.transport.rdma;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RDMA CM event channel and the thread that reads it: connection setup and teardown events go to
 * the handler registered for the id they concern (the listening id gets connect requests). Not on
 * the I/O path.
 */
public final class CmEvents implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CmEvents.class);

    // librdmacm's enum rdma_cm_event_type
    public static final int ADDR_RESOLVED = 0,
            ADDR_ERROR = 1,
            ROUTE_RESOLVED = 2,
            ROUTE_ERROR = 3,
            CONNECT_REQUEST = 4,
            CONNECT_RESPONSE = 5,
            CONNECT_ERROR = 6,
            UNREACHABLE = 7,
            REJECTED = 8,
            ESTABLISHED = 9,
            DISCONNECTED = 10,
            DEVICE_REMOVAL = 11,
            ADDR_CHANGE = 14,
            TIMEWAIT_EXIT = 15;

    /** Handles the events of one id; called on the CM thread. */
    public interface Handler {
        void onEvent(int event, RdmaCmId id, RdmaCmEvent raw);
    }

    private final RdmaEventChannel channel;
    private final Map<RdmaCmId, Handler> handlers = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closed;

    public CmEvents(String name) throws IOException {
        this.channel = RdmaEventChannel.createEventChannel();
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    public RdmaCmId createId() throws IOException {
        return channel.createId(RdmaCm_PS_TCP);
    }

    private static final short RdmaCm_PS_TCP = 0x0106;

    public void register(RdmaCmId id, Handler h) {
        handlers.put(id, h);
    }

    public void unregister(RdmaCmId id) {
        handlers.remove(id);
    }

    private void run() {
        while (!closed) {
            RdmaCmEvent ev;
            try {
                ev = channel.getCmEvent(200);
            } catch (IOException | RuntimeException | LinkageError e) {
                if (!closed)
                    log.error(
                            "reading RDMA CM events failed; no more connections can be set up or torn down: {}",
                            e.toString());
                return;
            }
            if (ev == null) continue;
            int type = ev.getEvent();
            RdmaCmId id = ev.getConnIdPriv();
            RdmaCmId listen = ev.getListenIdPriv();
            Handler h = type == CONNECT_REQUEST && listen != null
                    ? handlers.get(listen)
                    : id == null ? null : handlers.get(id);
            if (h == null) {
                log.debug("RDMA CM event {} for an id nobody handles", name(type));
                continue;
            }
            try {
                h.onEvent(type, id, ev);
            } catch (RuntimeException e) {
                log.warn("handling RDMA CM event {} failed", name(type), e);
            }
        }
    }

    public static String name(int event) {
        switch (event) {
            case ADDR_RESOLVED:
                return "ADDR_RESOLVED";
            case ADDR_ERROR:
                return "ADDR_ERROR";
            case ROUTE_RESOLVED:
                return "ROUTE_RESOLVED";
            case ROUTE_ERROR:
                return "ROUTE_ERROR";
            case CONNECT_REQUEST:
                return "CONNECT_REQUEST";
            case CONNECT_RESPONSE:
                return "CONNECT_RESPONSE";
            case CONNECT_ERROR:
                return "CONNECT_ERROR";
            case UNREACHABLE:
                return "UNREACHABLE";
            case REJECTED:
                return "REJECTED";
            case ESTABLISHED:
                return "ESTABLISHED";
            case DISCONNECTED:
                return "DISCONNECTED";
            case DEVICE_REMOVAL:
                return "DEVICE_REMOVAL";
            case ADDR_CHANGE:
                return "ADDR_CHANGE";
            case TIMEWAIT_EXIT:
                return "TIMEWAIT_EXIT";
            default:
                return "event " + event;
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            channel.destroyEventChannel();
        } catch (IOException | RuntimeException e) {
            log.debug("destroying the RDMA CM event channel: {}", e.toString());
        }
    }
}
