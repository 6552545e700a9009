package io.jbof.transport.rdma;

import com.ibm.disni.util.MemoryUtils;
import io.jbof.util.Tunable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * jbof's own native methods, in libjbofrdma.so beside DiSNI's libdisni.so (both built by rdma-native/):
 * what DiSNI's API does not offer. CM private data on accept and reject and the private data and status an event carried
 * (the NVMe-oF RDMA binding puts queue sizes and reject statuses there), one wait on a completion
 * channel and a wake-up eventfd together (so an idle event loop sleeps and still runs tasks at once),
 * and the device list for error messages.
 */
public final class RdmaNative {
    private RdmaNative() {}

    private static final String PROBLEM = load();

    private static String load() {
        try {
            System.loadLibrary("jbofrdma");
            if (abiVersion() != 4)
                return "libjbofrdma.so is of another version; rebuild rdma-native (mvn -pl rdma-native compile)";
            System.loadLibrary("disni");
            return null;
        } catch (UnsatisfiedLinkError e) {
            return "cannot load the RDMA native libraries (" + e.getMessage() + "); java.library.path="
                    + System.getProperty("java.library.path")
                    + ". Build rdma-native's libdisni.so and libjbofrdma.so with `mvn -pl rdma-native compile` (needs gcc,"
                    + " libibverbs-dev, librdmacm-dev) and start through scripts/jbof, or pass -Djava.library.path=DIR";
        }
    }

    /** Null when the library is there; otherwise what is wrong and what to do. */
    public static String problem() {
        return PROBLEM;
    }

    /** JVM option DiSNI needs: it reads direct buffer addresses through sun.nio.ch.DirectBuffer. */
    public static final String ADD_EXPORTS = "--add-exports java.base/sun.nio.ch=ALL-UNNAMED";

    /** Throws with a message naming the devices searched and what to install when RDMA cannot run here. */
    public static void check() throws IOException {
        if (PROBLEM != null) throw new IOException(PROBLEM);
        try {
            MemoryUtils.getAddress(ByteBuffer.allocateDirect(8));
        } catch (IllegalAccessError e) {
            throw new IOException("DiSNI cannot read direct buffer addresses: start the JVM with " + ADD_EXPORTS
                    + " (scripts/jbof does)");
        }
        String[] devices = deviceNames();
        if (devices == null || devices.length == 0) {
            throw new IOException("no RDMA device: ibv_get_device_list() found none (searched /sys/class/infiniband)."
                    + " For Soft-RoCE: apt-get install -y rdma-core ibverbs-providers; modprobe rdma_rxe ib_uverbs rdma_ucm;"
                    + " rdma link add rxe0 type rxe netdev IFACE");
        }
    }

    static native int abiVersion();

    /** The device's {@code enum ibv_transport_type} (0 InfiniBand/RoCE, 1 iWARP) for an ibv_context pointer; -1 if none. */
    static native int transportType(long context);

    /** Names of the RDMA devices libibverbs sees (rxe0, mlx5_0, ...). */
    public static native String[] deviceNames();

    /**
     * The private data the id's last connect request, accept or reject carried, or null: jbof's
     * libdisni.so keeps it; another libdisni acknowledges events without keeping it.
     */
    public static native byte[] privateData(long cmId);

    /** The status of the id's last CM event (for a reject: the reason code). */
    public static native int eventStatus(long cmId);

    public static native void accept(long cmId, int retry, int rnrRetry, byte[] privateData) throws IOException;

    public static native void reject(long cmId, byte[] privateData) throws IOException;

    /** The id's local ACK timeout (4.096 us x 2^timeout, 1..31), before connect or accept. */
    public static native void setAckTimeout(long cmId, int timeout) throws IOException;

    /** Applies {@code jbof.rdma.ackTimeout} to the id on a fabric that has one, unless it is 0 (rdma_cm's own). */
    public static void applyAckTimeout(long cmId, RdmaFabric fabric) throws IOException {
        int t = ACK_TIMEOUT;
        if (t == 0 || !fabric.hasAckTimeout()) return;
        if (t < 1 || t > 31)
            throw new IllegalArgumentException(
                    "-D" + Tunable.RDMA_ACK_TIMEOUT.property() + "=" + t + " is out of range (1..31, or 0)");
        setAckTimeout(cmId, t);
    }

    private static final int ACK_TIMEOUT = Tunable.RDMA_ACK_TIMEOUT.intValue();

    /** Posts the response capsule by SEND with Invalidate of the host's {@code rkey} (signaled). */
    public static native void postSendInvalidate(long qp, long wrId, long addr, int length, int lkey, int rkey)
            throws IOException;

    static native int eventFd() throws IOException;

    static native void signal(int fd);

    static native void closeFd(int fd);

    /** 1: completion events (taken and acknowledged), 2: woken, 3: both, 0: timeout, negative: -errno. */
    static native int await(long compChannel, int eventFd, int timeoutMillis);
}
