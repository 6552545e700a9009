package io.jbof.initiator.transport.rdma;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.impl.NatObject;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.transport.HostCommand;
import io.jbof.transport.HostConnection;
import io.jbof.transport.HostConnectionOptions;
import io.jbof.transport.rdma.CmEvents;
import io.jbof.transport.rdma.RdmaEventLoop;
import io.jbof.transport.rdma.RdmaFabric;
import io.jbof.transport.rdma.RdmaNative;
import io.jbof.transport.rdma.RdmaPrivateData;
import io.jbof.transport.rdma.RegisteredMemory;
import io.jbof.transport.rdma.VerbsQueuePair;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NVMe queue on an RDMA queue pair, host side. Capsules go by SEND from registered send buffers
 * (small writes carry their data in the capsule); larger data moves through this queue's registered
 * buffer for the command's CID, which the keyed SGL names (address, length, rkey): the target writes
 * read data into it and reads write data from it. Responses arrive by SEND into receive buffers
 * posted ahead. Runs on the owning event loop.
 */
final class RdmaHostConnection implements HostConnection, VerbsQueuePair.Completions, CmEvents.Handler {
    private static final Logger log = LoggerFactory.getLogger(RdmaHostConnection.class);
    private static final long KIND_RECV = 1L << 32, KIND_SEND = 2L << 32;
    /** Capsule data this host sends in-capsule at most, whatever the controller allows. */
    static final int MAX_IN_CAPSULE = 8192;

    private final RdmaHostTransport transport;
    private final RdmaCmId id;
    private final RdmaEventLoop loop;
    private final HostConnectionOptions options;
    private final Listener listener;
    private final CompletableFuture<HostConnection> ready;
    private final int entries;
    private final int transferSize;
    private final String where;
    private final NvmeCompletion completion = new NvmeCompletion();
    private VerbsQueuePair verbs;
    private RegisteredMemory sendMemory;
    private RegisteredMemory recvMemory;
    private RegisteredMemory dataMemory;
    private SVCPostSend[] sendCalls;
    private SVCPostRecv[] recvCalls;
    private int[] freeSends;
    private int freeSendCount;
    private ByteBuffer privateData;
    private long domain;
    /** Per CID: the command's data is the caller's registered memory (no copy through dataMemory). */
    private boolean[] direct;

    private int inCapsule;
    private boolean open;
    private boolean torndown;
    private Throwable failure;

    RdmaHostConnection(
            RdmaHostTransport transport,
            RdmaCmId id,
            RdmaEventLoop loop,
            HostConnectionOptions options,
            Listener listener,
            CompletableFuture<HostConnection> ready) {
        this.transport = transport;
        this.id = id;
        this.loop = loop;
        this.options = options;
        this.listener = listener;
        this.ready = ready;
        this.entries = Math.max(2, options.queueEntries());
        this.transferSize = transport.transferSize();
        this.where = "rdma://" + options.address() + ":" + options.port() + " queue " + options.qid();
    }

    // ---- CM events (CM thread) ----

    @Override
    public void onEvent(int event, RdmaCmId cmId, RdmaCmEvent raw) {
        try {
            switch (event) {
                case CmEvents.ADDR_RESOLVED:
                    id.resolveRoute(options.connectTimeoutMillis());
                    break;
                case CmEvents.ROUTE_RESOLVED:
                    loop.execute(this::setUpAndConnect);
                    break;
                case CmEvents.ESTABLISHED:
                    loop.execute(() -> {
                        open = true;
                        log.debug("{}: established ({} entries)", where, entries);
                        if (!ready.complete(this)) close();
                    });
                    break;
                case CmEvents.REJECTED: {
                    int status = RdmaPrivateData.decodeReject(RdmaNative.privateData(((NatObject) id).getObjId()));
                    String why = status >= 0
                            ? "the target rejected the connection: " + RdmaPrivateData.describe(status) + " (status "
                                    + status + ")"
                            : "the connection was rejected (reason "
                                    + RdmaNative.eventStatus(((NatObject) id).getObjId())
                                    + "): is an NVMe-oF RDMA target listening on " + options.address() + ":"
                                    + options.port() + "?";
                    fail(new IOException(why));
                    break;
                }
                case CmEvents.ADDR_ERROR:
                case CmEvents.ROUTE_ERROR:
                    fail(
                            new IOException(
                                    "cannot reach " + options.address() + " over RDMA (" + CmEvents.name(event)
                                            + "): the address must be reachable through an RDMA device (rdma link show; 127.0.0.1 is not)"));
                    break;
                case CmEvents.UNREACHABLE:
                case CmEvents.CONNECT_ERROR:
                    fail(new IOException("RDMA connect to " + options.address() + ":" + options.port() + " failed ("
                            + CmEvents.name(event) + ")"));
                    break;
                case CmEvents.DISCONNECTED:
                case CmEvents.DEVICE_REMOVAL:
                    loop.execute(() -> tearDown(
                            failure != null
                                    ? failure
                                    : new IOException("the target closed the RDMA connection (" + where + ")")));
                    break;
                default:
                    log.debug("{}: RDMA CM {}", where, CmEvents.name(event));
            }
        } catch (IOException e) {
            fail(e);
        }
    }

    private void fail(Throwable cause) {
        loop.execute(() -> {
            if (failure == null) failure = cause;
            if (!ready.isDone()) {
                ready.completeExceptionally(cause);
                tearDown(cause);
            } else {
                close();
            }
        });
    }

    /** Queue pair, registered buffers, receives posted; then the connect with the binding's private data. On the loop. */
    private void setUpAndConnect() {
        if (ready.isDone()) return;
        try {
            IbvContext ctx = id.getVerbs();
            IbvPd pd = transport.domain(ctx);
            domain = ((NatObject) pd).getObjId();
            direct = new boolean[entries];
            int sendSlots = entries * 2; // a CID may be reused before the SEND of its capsule has completed
            int sendSize = NvmeCommand.SIZE + MAX_IN_CAPSULE;
            int recvCount = entries + 1;
            verbs = new VerbsQueuePair(id, pd, loop, sendSlots, recvCount, 1, this);
            sendMemory = new RegisteredMemory(pd, sendSlots * sendSize, 0);
            recvMemory = new RegisteredMemory(pd, recvCount * NvmeCompletion.SIZE, RegisteredMemory.LOCAL_WRITE);
            dataMemory = new RegisteredMemory(
                    pd,
                    entries * transferSize,
                    RegisteredMemory.LOCAL_WRITE | RegisteredMemory.REMOTE_WRITE | RegisteredMemory.REMOTE_READ);
            sendCalls = new SVCPostSend[sendSlots];
            freeSends = new int[sendSlots];
            for (int i = 0; i < sendSlots; i++) {
                sendCalls[i] = verbs.sendCall(
                        IbvSendWR.IBV_WR_SEND,
                        KIND_SEND | i,
                        sendMemory.address + (long) i * sendSize,
                        NvmeCommand.SIZE,
                        sendMemory.lkey,
                        VerbsQueuePair.SIGNALED);
                freeSends[freeSendCount++] = sendSlots - 1 - i;
            }
            recvCalls = new SVCPostRecv[recvCount];
            for (int i = 0; i < recvCount; i++) {
                recvCalls[i] = verbs.recvCall(
                        KIND_RECV | i,
                        recvMemory.address + (long) i * NvmeCompletion.SIZE,
                        NvmeCompletion.SIZE,
                        recvMemory.lkey);
                recvCalls[i].execute();
            }
            byte[] pdata = RdmaPrivateData.encodeRequest(options.qid(), entries);
            privateData = ByteBuffer.allocateDirect(pdata.length).put(pdata);
            RdmaConnParam p = new RdmaConnParam();
            p.setRetry_count((byte) 7);
            p.setRnr_retry_count((byte) 7);
            p.setPrivate_data(PlatformDependent.directBufferAddress(privateData));
            p.setPrivate_data_len((byte) pdata.length);
            RdmaNative.applyAckTimeout(((NatObject) id).getObjId(), RdmaFabric.of(ctx));
            id.connect(p);
        } catch (IOException | RuntimeException e) {
            ready.completeExceptionally(
                    new IOException("cannot set up the RDMA queue (" + where + "): " + e.getMessage(), e));
            tearDown(e);
        }
    }

    // ---- HostConnection ----

    @Override
    public EventExecutor executor() {
        return loop;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void inCapsuleDataSize(int bytes) {
        this.inCapsule = Math.max(0, Math.min(bytes, MAX_IN_CAPSULE));
    }

    @Override
    public void flush() {
        // each send was posted at once; the doorbell is the post
    }

    @Override
    public void send(HostCommand cmd) {
        ByteBuf capsule = cmd.capsule();
        int base = capsule.readerIndex();
        int cid = capsule.getUnsignedShortLE(base + NvmeCommand.OFF_CID);
        int len = cmd.dataLength();
        if (len > transferSize) {
            // Larger than this queue's registered buffer (the library splits I/O below it; a passthru may not):
            // that command fails with the NVMe status for it, the queue goes on.
            loop.execute(() -> completeLocally(cmd, cid, Status.dnr(Status.DATA_SGL_LENGTH_INVALID)));
            return;
        }
        if (!open || freeSendCount == 0 || cid >= entries) {
            String why = !open
                    ? "the RDMA queue is closed"
                    : freeSendCount == 0
                            ? "no free send buffer"
                            : "CID " + cid + " beyond the queue's " + entries + " entries";
            loop.execute(() -> failCommand(cmd, why));
            return;
        }
        int slot = freeSends[--freeSendCount];
        int sendSize = NvmeCommand.SIZE + MAX_IN_CAPSULE;
        int at = slot * sendSize;
        ByteBuf out = sendMemory.buf;
        out.setBytes(at, capsule, base, NvmeCommand.SIZE);
        int sendLength = NvmeCommand.SIZE;
        ByteBuf data = cmd.data();
        if (len > 0 && cmd.dataToController() && len <= inCapsule) {
            Sgl.write(out, at, 0, len, Sgl.ID_IN_CAPSULE);
            out.setBytes(at + NvmeCommand.SIZE, data, data.readerIndex(), len);
            sendLength += len;
        } else if (len > 0) {
            long address = data.hasMemoryAddress() ? data.memoryAddress() + data.readerIndex() : 0;
            RegisteredBuffers.Region r = address != 0 ? transport.registeredRegion(address, len) : null;
            int rkey = r != null ? r.rkey(domain) : 0;
            direct[cid] = rkey != 0;
            if (rkey != 0) {
                Sgl.writeKeyed(out, at, address, len, rkey, Sgl.SUBTYPE_ADDRESS); // the caller's registered memory
            } else {
                int dataAt = cid * transferSize;
                if (cmd.dataToController()) dataMemory.buf.setBytes(dataAt, data, data.readerIndex(), len);
                Sgl.writeKeyed(out, at, dataMemory.address + dataAt, len, dataMemory.rkey, Sgl.SUBTYPE_ADDRESS);
            }
        } else {
            Sgl.writeKeyed(out, at, 0, 0, 0, Sgl.SUBTYPE_ADDRESS);
        }
        // The command's own capsule gets the SGL as well, so logs and retries see what was sent.
        capsule.setBytes(base + NvmeCommand.OFF_DPTR, out, at + NvmeCommand.OFF_DPTR, 16);
        try {
            SVCPostSend s = sendCalls[slot];
            s.getWrMod(0).getSgeMod(0).setLength(sendLength);
            s.execute();
        } catch (IOException e) {
            freeSends[freeSendCount++] = slot;
            log.warn("{}: posting a command failed: {}", where, e.getMessage());
            failure = e;
            close();
        }
    }

    private final ByteBuf localCqe = Unpooled.buffer(NvmeCompletion.SIZE, NvmeCompletion.SIZE);

    /** Completes a command that never left this host with {@code status}. */
    private void completeLocally(HostCommand cmd, int cid, int status) {
        localCqe.setZero(0, NvmeCompletion.SIZE);
        NvmeCompletion.write(localCqe, 0, 0, 0, options.qid(), cid, status);
        cmd.onCompletion(new NvmeCompletion().wrap(localCqe, 0));
    }

    private void failCommand(HostCommand cmd, String why) {
        log.debug("{}: command not sent: {}", where, why);
        // Completed as a transport failure by closing: the queue logic fails its in-flight commands.
        if (failure == null) failure = new IOException(why);
        close();
    }

    @Override
    public void onCompletion(IbvWC wc) {
        long wrId = wc.getWr_id();
        long kind = wrId & 0xFFFFFFFF00000000L;
        int index = (int) wrId;
        if (kind == KIND_SEND) freeSends[freeSendCount++] = index;
        if (wc.getStatus() != VerbsQueuePair.WC_SUCCESS) {
            if (open) {
                log.warn("{}: work request failed with completion status {}; closing the queue", where, wc.getStatus());
                if (failure == null)
                    failure = new IOException("RDMA completion error " + wc.getStatus() + " on " + where);
                close();
            }
            return;
        }
        if (kind != KIND_RECV) return;
        int at = index * NvmeCompletion.SIZE;
        if (wc.getByte_len() != NvmeCompletion.SIZE) {
            protocolError("a " + wc.getByte_len() + "-byte response capsule");
            return;
        }
        completion.wrap(recvMemory.buf, at);
        int cid = completion.cid();
        HostCommand cmd = listener.lookup(cid);
        if (cmd == null || cid >= entries) {
            protocolError("a response for CID " + cid + ", which is not in flight");
            return;
        }
        int len = cmd.dataLength();
        if (len > 0 && !cmd.dataToController() && cmd.data() != null && !direct[cid]) {
            ByteBuf dst = cmd.data();
            dst.setBytes(dst.readerIndex(), dataMemory.buf, cid * transferSize, len);
        }
        cmd.onCompletion(completion);
        try {
            recvCalls[index].execute();
        } catch (IOException e) {
            log.warn("{}: reposting a receive failed: {}", where, e.getMessage());
            failure = e;
            close();
        }
    }

    private void protocolError(String what) {
        log.warn("{}: the target sent {}; closing the queue", where, what);
        if (failure == null) failure = new IOException("protocol error from the target: " + what);
        close();
    }

    @Override
    public void close() {
        if (torndown) return;
        if (loop.inEventLoop()) {
            boolean wasOpen = open;
            open = false;
            if (verbs != null && wasOpen) {
                verbs.disconnect();
                loop.schedule(() -> tearDown(failure), 2, TimeUnit.SECONDS);
            } else {
                tearDown(failure);
            }
        } else {
            loop.execute(this::close);
        }
    }

    private void tearDown(Throwable cause) {
        if (torndown) return;
        torndown = true;
        open = false;
        transport.forget(id);
        if (verbs != null) {
            verbs.destroy();
        } else {
            try {
                id.destroyId();
            } catch (IOException | RuntimeException e) {
                log.debug("destroying a CM id: {}", e.toString());
            }
        }
        if (sendMemory != null) sendMemory.close();
        if (recvMemory != null) recvMemory.close();
        if (dataMemory != null) dataMemory.close();
        if (ready.isDone() && !ready.isCompletedExceptionally()) {
            listener.onClosed(cause != null ? cause : new IOException("RDMA queue closed (" + where + ")"));
        }
    }

    static InetSocketAddress address(HostConnectionOptions o) {
        return new InetSocketAddress(o.address(), o.port());
    }
}
