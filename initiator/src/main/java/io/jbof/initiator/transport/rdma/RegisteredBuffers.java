package io.jbof.initiator.transport.rdma;

import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.impl.NatObject;
import io.jbof.transport.rdma.RegisteredMemory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Data buffers the initiator library hands to callers already registered with every device the
 * transport uses, so the target reads and writes them directly (keyed SGL on the caller's memory,
 * no copy through the queue's own buffers). Registration happens when a buffer is allocated;
 * releasing the buffer deregisters it. Buffers not from here still work: they are copied.
 */
final class RegisteredBuffers {
    private static final Logger log = LoggerFactory.getLogger(RegisteredBuffers.class);

    /** One registered buffer: its address range and its keys per protection domain. */
    static final class Region {
        final long address;
        final int length;
        final long[] domains;
        final int[] rkeys;
        final List<RegisteredMemory> registrations = new ArrayList<>();

        Region(long address, int length, int n) {
            this.address = address;
            this.length = length;
            this.domains = new long[n];
            this.rkeys = new int[n];
        }

        /** The rkey of this region on {@code domain}, or 0 when it is not registered there. */
        int rkey(long domain) {
            for (int i = 0; i < domains.length; i++) if (domains[i] == domain) return rkeys[i];
            return 0;
        }
    }

    private final ConcurrentSkipListMap<Long, Region> regions = new ConcurrentSkipListMap<>();

    /** A direct buffer of {@code size} bytes registered with each of {@code pds}. */
    ByteBuf allocate(int size, List<IbvPd> pds) throws IOException {
        ByteBuffer bb = ByteBuffer.allocateDirect(size);
        Region r = new Region(PlatformDependent.directBufferAddress(bb), size, pds.size());
        try {
            for (int i = 0; i < pds.size(); i++) {
                RegisteredMemory m = new RegisteredMemory(
                        pds.get(i),
                        bb,
                        RegisteredMemory.LOCAL_WRITE | RegisteredMemory.REMOTE_WRITE | RegisteredMemory.REMOTE_READ);
                r.registrations.add(m);
                r.domains[i] = ((NatObject) pds.get(i)).getObjId();
                r.rkeys[i] = m.rkey;
            }
        } catch (IOException e) {
            for (RegisteredMemory m : r.registrations) m.close();
            throw e;
        }
        regions.put(r.address, r);
        return new Buffer(bb, r);
    }

    /** The region holding [address, address + length), or null when that memory is not registered here. */
    Region find(long address, int length) {
        Map.Entry<Long, Region> e = regions.floorEntry(address);
        if (e == null) return null;
        Region r = e.getValue();
        return address + length <= r.address + r.length ? r : null;
    }

    private final class Buffer extends UnpooledUnsafeDirectByteBuf {
        private final Region region;

        Buffer(ByteBuffer bb, Region region) {
            super(UnpooledByteBufAllocator.DEFAULT, bb, bb.capacity());
            this.region = region;
            clear();
        }

        @Override
        protected void deallocate() {
            regions.remove(region.address);
            for (RegisteredMemory m : region.registrations) m.close();
            log.trace("deregistered a {}-byte data buffer", region.length);
            super.deallocate();
        }
    }
}
