package io.jbof.transport.rdma;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A direct region registered once with a protection domain (one memory region, one lkey/rkey).
 * Registration pins and maps the pages, which is far too slow for the I/O path: it happens when a
 * queue or pool is set up, and the region lives until the queue or pool is closed.
 */
public final class RegisteredMemory implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegisteredMemory.class);
    public static final int LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4;

    public final ByteBuffer region;
    public final ByteBuf buf;
    public final long address;
    public final int lkey;
    public final int rkey;
    private final IbvMr mr;

    public RegisteredMemory(IbvPd pd, ByteBuffer region, int access) throws IOException {
        this.region = region;
        this.buf = Unpooled.wrappedBuffer(region).clear();
        this.address = PlatformDependent.directBufferAddress(region);
        SVCRegMr reg;
        try {
            reg = pd.regMr(region, access).execute();
        } catch (IOException e) {
            throw new IOException(
                    e.getMessage() + " (registering " + (region.capacity() >> 10) + " KiB; " + lockLimit()
                            + ". Registered memory is locked memory: raise the limit with `ulimit -l unlimited`, or"
                            + " LimitMEMLOCK=infinity under systemd. Soft-iWARP holds even root to it)",
                    e);
        }
        this.mr = reg.getMr();
        reg.free();
        this.lkey = mr.getLkey();
        this.rkey = mr.getRkey();
    }

    /** This process's locked-memory limit as /proc/self/limits gives it, for error messages. */
    static String lockLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max locked memory")) {
                    String[] f =
                            line.substring("Max locked memory".length()).trim().split("\\s+");
                    return "this process may lock "
                            + (f[0].equals("unlimited") ? "unlimited memory" : (Long.parseLong(f[0]) >> 10) + " KiB");
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("reading /proc/self/limits: {}", e.toString());
        }
        return "the locked-memory limit is unknown";
    }

    public RegisteredMemory(IbvPd pd, int size, int access) throws IOException {
        this(pd, ByteBuffer.allocateDirect(size), access);
    }

    @Override
    public void close() {
        try {
            mr.deregMr().execute().free();
        } catch (IOException | RuntimeException e) {
            log.debug("deregistering a memory region: {}", e.toString());
        }
    }
}
