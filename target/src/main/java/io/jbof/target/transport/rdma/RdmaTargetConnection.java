package io.jbof.target.transport.rdma;

import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.impl.NatObject;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.transport.TargetQueue;
import io.jbof.transport.TargetQueueAcceptor;
import io.jbof.transport.TargetQueueHandler;
import io.jbof.transport.TargetRequest;
import io.jbof.transport.TransportType;
import io.jbof.transport.rdma.CmEvents;
import io.jbof.transport.rdma.RdmaEventLoop;
import io.jbof.transport.rdma.RdmaFabric;
import io.jbof.transport.rdma.RdmaNative;
import io.jbof.transport.rdma.RegisteredMemory;
import io.jbof.transport.rdma.VerbsQueuePair;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NVMe queue on an RDMA queue pair, target side (the NVMe-oF RDMA binding). Command capsules
 * arrive by SEND into receive buffers posted ahead; read data goes to the host's keyed buffer by
 * RDMA WRITE from the loop's registered page buffers; write data comes by RDMA READ into them, or
 * in the capsule; the response capsule goes by SEND. Everything runs on the owning event loop.
 */
final class RdmaTargetConnection implements TargetQueue, VerbsQueuePair.Completions, CmEvents.Handler {
    private static final Logger log = LoggerFactory.getLogger(RdmaTargetConnection.class);
    private static final long KIND_RECV = 1L << 32, KIND_SEND = 2L << 32, KIND_READ = 3L << 32;
    /** Answer a host that asks for it (keyed SGL subtype Fh) with SEND with Invalidate, as nvmet-rdma does. */
    private static final boolean REMOTE_INVALIDATE = Tunable.RDMA_REMOTE_INVALIDATE.booleanValue();

    private final RdmaTargetTransport transport;
    private final RdmaCmId id;
    private final RdmaEventLoop loop;
    private final int entries;
    private final int inCapsule;
    private final int recvSize;
    private final String remote;
    private VerbsQueuePair verbs;
    private RegisteredMemory recvMemory;
    private RegisteredMemory sendMemory;
    private SVCPostRecv[] recvCalls;
    private Request[] requests;
    private int[] free;
    private int freeCount;
    private DataBufferPool buffers;
    private TargetQueueHandler handler;
    private boolean closing;
    private boolean torndown;
    private boolean invalidating;
    /** Whether a host's request for remote invalidation is honoured on this queue's device (see RdmaFabric). */
    private boolean remoteInvalidate;

    private int qid = -1;
    private int sqSize = 1;
    private int sqHead;

    RdmaTargetConnection(
            RdmaTargetTransport transport, RdmaCmId id, RdmaEventLoop loop, int entries, int inCapsule, String remote) {
        this.transport = transport;
        this.id = id;
        this.loop = loop;
        this.entries = entries;
        this.inCapsule = inCapsule;
        this.recvSize = NvmeCommand.SIZE + inCapsule;
        this.remote = remote;
    }

    /** Creates the queue pair, registers its capsule buffers and posts the receives; on the loop. */
    void setUp(IbvPd pd, DataBufferPool buffers, TargetQueueAcceptor acceptor) throws IOException {
        this.buffers = buffers;
        RdmaFabric fabric = RdmaFabric.of(pd.getContext());
        this.remoteInvalidate = REMOTE_INVALIDATE && fabric.remoteInvalidate();
        RdmaNative.applyAckTimeout(((NatObject) id).getObjId(), fabric); // before the accept that takes the QP to RTS
        int maxChunks = (int) Math.max(1, maxTransferBytes() / buffers.bufferSize());
        int requestCount =
                entries * 2; // a response's buffers stay busy until its SEND completes; new commands may arrive first
        int recvCount = entries + 1;
        int sendWrs = requestCount * (maxChunks + 1);
        verbs = new VerbsQueuePair(id, pd, loop, sendWrs, recvCount, 1, this);
        recvMemory = new RegisteredMemory(pd, recvCount * recvSize, RegisteredMemory.LOCAL_WRITE);
        sendMemory = new RegisteredMemory(pd, requestCount * NvmeCompletion.SIZE, 0);
        recvCalls = new SVCPostRecv[recvCount];
        for (int i = 0; i < recvCount; i++) {
            recvCalls[i] =
                    verbs.recvCall(KIND_RECV | i, recvMemory.address + (long) i * recvSize, recvSize, recvMemory.lkey);
        }
        requests = new Request[requestCount];
        free = new int[requestCount];
        for (int i = 0; i < requestCount; i++) {
            requests[i] = new Request(i, maxChunks);
            free[freeCount++] = requestCount - 1 - i;
        }
        for (SVCPostRecv r : recvCalls) r.execute();
        handler = acceptor.accept(this);
    }

    // ---- TargetQueue ----

    @Override
    public EventExecutor executor() {
        return loop;
    }

    @Override
    public TransportType transport() {
        return TransportType.RDMA;
    }

    @Override
    public String remoteAddress() {
        return remote;
    }

    @Override
    public int inCapsuleDataSize() {
        return inCapsule;
    }
    /** No command's data may need more registered buffers than the pool has. */
    @Override
    public long maxTransferBytes() {
        return Math.min(buffers.capacityBytes(), transport.maxTransfer());
    }

    @Override
    public void bind(int qid, int sqSize, boolean sqFlowControlDisabled) {
        this.qid = qid;
        this.sqSize = Math.max(1, sqSize);
        this.sqHead %= this.sqSize;
    }

    @Override
    public void close(String reason) {
        if (closing) return;
        closing = true;
        log.debug("closing RDMA queue {} of {}: {}", qid, remote, reason);
        verbs.disconnect();
        // The DISCONNECTED event tears the queue down; if the peer never answers, this does.
        loop.schedule(this::tearDown, 5, TimeUnit.SECONDS);
    }

    // ---- CM events (CM thread) ----

    @Override
    public void onEvent(int event, RdmaCmId cmId, RdmaCmEvent raw) {
        switch (event) {
            case CmEvents.ESTABLISHED:
                log.debug("RDMA queue from {} established", remote);
                break;
            case CmEvents.DISCONNECTED:
            case CmEvents.DEVICE_REMOVAL:
            case CmEvents.TIMEWAIT_EXIT:
                loop.execute(() -> {
                    closing = true;
                    tearDown();
                });
                break;
            default:
                log.debug("RDMA CM {} on a queue of {}", CmEvents.name(event), remote);
        }
    }

    void tearDown() {
        if (torndown) return;
        torndown = true;
        closing = true;
        transport.forget(id);
        verbs.destroy(); // no more completions, no more DMA into our buffers
        for (Request r : requests) r.abandon();
        recvMemory.close();
        sendMemory.close();
        if (handler != null) handler.onClosed();
    }

    // ---- completions (loop) ----

    @Override
    public void onCompletion(IbvWC wc) {
        long wrId = wc.getWr_id();
        long kind = wrId & 0xFFFFFFFF00000000L;
        int index = (int) wrId;
        if (wc.getStatus() != VerbsQueuePair.WC_SUCCESS) {
            if (!closing) {
                log.warn(
                        "RDMA queue {} of {}: work request failed with completion status {} (vendor error 0x{}); closing the queue",
                        qid,
                        remote,
                        wc.getStatus(),
                        Integer.toHexString(wc.getVendor_err()));
                close("completion error " + wc.getStatus());
            }
            return;
        }
        if (kind == KIND_RECV) {
            onCapsule(index, wc.getByte_len());
        } else if (kind == KIND_SEND) {
            requests[index].onSent();
        } else if (kind == KIND_READ) {
            requests[index].onDataRead();
        }
    }

    private void onCapsule(int recvIndex, int bytes) {
        if (closing) return;
        if (bytes < NvmeCommand.SIZE) {
            log.warn(
                    "RDMA queue {} of {}: a {}-byte SEND is no command capsule; closing the queue", qid, remote, bytes);
            close("short capsule");
            return;
        }
        if (freeCount == 0) {
            log.warn(
                    "RDMA queue {} of {}: more commands than the {}-entry queue holds; closing the queue",
                    qid,
                    remote,
                    entries);
            close("queue overrun");
            return;
        }
        Request r = requests[free[--freeCount]];
        r.start(recvIndex, bytes - NvmeCommand.SIZE);
        sqHead = (sqHead + 1) % sqSize;
        handler.onCommand(r);
    }

    private void recycle(Request r) {
        free[freeCount++] = r.index;
    }

    /** One command exchange; pooled per connection. */
    private final class Request implements TargetRequest, DataBufferPool.Waiter {
        final int index;
        final NvmeCommand command = new NvmeCommand();
        final ByteBuf capsuleView = recvMemory.buf.duplicate();
        final ByteBuf chunkView = buffers.memory.buf.duplicate();
        final SVCPostSend send;
        final SVCPostSend write;
        final SVCPostSend read;
        final int[] chunks;
        int chunkCount;
        boolean active;
        int recvIndex = -1;
        int capsuleData;
        int length;
        int sglStatus;
        long remoteAddress;
        int rkey;
        boolean invalidate;
        boolean inCapsuleData;
        Object attachment;
        boolean completed;
        boolean sending;
        int status;
        long result;
        // what waits for buffers or for data on the wire
        boolean waiting;
        ByteBuf pendingData;
        FileChannel pendingFile;
        long pendingPosition;
        int pendingLength;
        DataReceiver receiver;
        boolean reading;

        Request(int index, int maxChunks) throws IOException {
            this.index = index;
            this.chunks = new int[maxChunks];
            long cqe = sendMemory.address + (long) index * NvmeCompletion.SIZE;
            send = verbs.sendCall(
                    IbvSendWR.IBV_WR_SEND,
                    KIND_SEND | index,
                    cqe,
                    NvmeCompletion.SIZE,
                    sendMemory.lkey,
                    VerbsQueuePair.SIGNALED);
            write = verbs.sendCall(
                    IbvSendWR.IBV_WR_RDMA_WRITE, KIND_SEND | index, buffers.memory.address, 0, buffers.memory.lkey, 0);
            read = verbs.sendCall(
                    IbvSendWR.IBV_WR_RDMA_READ, KIND_READ | index, buffers.memory.address, 0, buffers.memory.lkey, 0);
        }

        void start(int recvIndex, int dataBytes) {
            active = true;
            completed = false;
            sending = false;
            waiting = false;
            reading = false;
            chunkCount = 0;
            receiver = null;
            this.recvIndex = recvIndex;
            this.capsuleData = dataBytes;
            command.wrap(recvMemory.buf, recvIndex * recvSize);
            classify();
        }

        private void classify() {
            sglStatus = Status.SUCCESS;
            inCapsuleData = false;
            invalidate = false;
            int sgl = command.sglIdentifier();
            int type = sgl >>> 4, subtype = sgl & 0xF;
            if (sgl == Sgl.ID_IN_CAPSULE) {
                length = command.sglLength();
                sglStatus = Sgl.checkInCapsule(command, inCapsule, capsuleData, false);
                inCapsuleData = sglStatus == Status.SUCCESS;
            } else if (type == Sgl.TYPE_KEYED_DATA_BLOCK
                    && (subtype == Sgl.SUBTYPE_ADDRESS || subtype == Sgl.SUBTYPE_INVALIDATE_KEY)) {
                length = command.sglKeyedLength();
                remoteAddress = command.sglAddress();
                rkey = command.sglKey();
                invalidate = subtype == Sgl.SUBTYPE_INVALIDATE_KEY && rkey != 0;
                if (length > maxTransferBytes()) {
                    sglStatus = Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
                }
            } else {
                sglStatus = Status.dnr(Status.SGL_DESCRIPTOR_TYPE_INVALID);
            }
            if (sglStatus != Status.SUCCESS) length = -1;
        }

        @Override
        public NvmeCommand command() {
            return command;
        }

        @Override
        public TargetQueue queue() {
            return RdmaTargetConnection.this;
        }

        @Override
        public int transferLength() {
            return length;
        }

        @Override
        public int sglStatus() {
            return sglStatus;
        }

        @Override
        public Object attachment() {
            return attachment;
        }

        @Override
        public void attach(Object a) {
            attachment = a;
        }

        private int chunksFor(int bytes) {
            return Math.max(1, (bytes + buffers.bufferSize() - 1) / buffers.bufferSize());
        }

        @Override
        public int buffersNeeded() {
            return chunksFor(
                    pendingData != null ? pendingData.readableBytes() : pendingFile != null ? pendingLength : length);
        }

        @Override
        public void sendData(ByteBuf data) {
            if (closing || !active || inCapsuleData || length <= 0) {
                data.release();
                return;
            }
            int n = Math.min(data.readableBytes(), length);
            data.writerIndex(data.readerIndex() + n);
            if (!buffers.tryAcquire(chunksFor(n), chunks)) {
                pendingData = data;
                waitForBuffers();
                return;
            }
            chunkCount = chunksFor(n);
            copyAndWrite(data, n);
        }

        /** Copies {@code n} bytes of {@code data} into the request's page buffers, releases it, writes them to the host. */
        private void copyAndWrite(ByteBuf data, int n) {
            try {
                for (int c = 0, off = 0; off < n; c++) {
                    int len = Math.min(buffers.bufferSize(), n - off);
                    buffers.memory.buf.setBytes(buffers.pool.offset(chunks[c]), data, data.readerIndex() + off, len);
                    off += len;
                }
            } finally {
                data.release();
            }
            postWrites(n);
        }

        @Override
        public void sendFile(FileChannel file, long position, int n) {
            if (closing || !active || inCapsuleData || length <= 0) return;
            n = Math.min(n, length);
            if (!buffers.tryAcquire(chunksFor(n), chunks)) {
                pendingFile = file;
                pendingPosition = position;
                pendingLength = n;
                waitForBuffers();
                return;
            }
            chunkCount = chunksFor(n);
            readFile(file, position, n);
        }

        /** Reads the file into the request's page buffers (past its end: zeroes), then writes them to the host. */
        private void readFile(FileChannel file, long position, int n) {
            try {
                for (int c = 0, off = 0; off < n; c++) {
                    int len = Math.min(buffers.bufferSize(), n - off);
                    ByteBuffer dst = buffers.memory.region.duplicate();
                    int at = buffers.pool.offset(chunks[c]);
                    dst.limit(at + len).position(at);
                    while (dst.hasRemaining()) {
                        if (file.read(dst, position + off + (dst.position() - at)) < 0) {
                            while (dst.hasRemaining()) dst.put((byte) 0);
                        }
                    }
                    off += len;
                }
            } catch (IOException e) {
                releaseChunks();
                throw new UncheckedIOException(e);
            }
            postWrites(n);
        }

        private void postWrites(int n) {
            postChunks(write, n, false, "WRITE");
        }

        /**
         * One RDMA WRITE or READ per page buffer, between the request's chunks and the host's keyed buffer;
         * {@code signalLast}: only the last asks for a completion (later ones of a queue pair complete in order).
         */
        private void postChunks(SVCPostSend call, int n, boolean signalLast, String what) {
            try {
                for (int c = 0, off = 0; off < n; c++) {
                    int len = Math.min(buffers.bufferSize(), n - off);
                    SVCPostSend.SendWRMod wr = call.getWrMod(0);
                    wr.getSgeMod(0).setAddr(buffers.address(chunks[c]));
                    wr.getSgeMod(0).setLength(len);
                    wr.getRdmaMod().setRemote_addr(remoteAddress + off);
                    wr.getRdmaMod().setRkey(rkey);
                    off += len;
                    if (signalLast) wr.setSend_flags(off == n ? VerbsQueuePair.SIGNALED : 0);
                    call.execute();
                }
            } catch (IOException e) {
                log.warn("RDMA queue {} of {}: posting an RDMA {} failed: {}", qid, remote, what, e.getMessage());
                close("post failed");
            }
        }

        @Override
        public void receiveData(DataReceiver r) {
            if (length <= 0) {
                r.onComplete(Status.SUCCESS);
                return;
            }
            if (inCapsuleData) {
                int at = recvIndex * recvSize + NvmeCommand.SIZE;
                int status = r.onData(capsuleView.setIndex(at, at + length), 0);
                r.onComplete(status);
                return;
            }
            if (closing) return;
            receiver = r;
            if (!buffers.tryAcquire(chunksFor(length), chunks)) {
                waitForBuffers();
                return;
            }
            chunkCount = chunksFor(length);
            postReads();
        }

        private void postReads() {
            reading = true;
            postChunks(read, length, true, "READ");
        }

        void onDataRead() {
            reading = false;
            DataReceiver r = receiver;
            receiver = null;
            int status = Status.SUCCESS;
            if (!completed && r != null) {
                for (int c = 0, off = 0; off < length && status == Status.SUCCESS; c++) {
                    int len = Math.min(buffers.bufferSize(), length - off);
                    int at = buffers.pool.offset(chunks[c]);
                    status = r.onData(chunkView.setIndex(at, at + len), off);
                    off += len;
                }
            }
            releaseChunks();
            if (completed) {
                finish(); // completed while the data was on its way: the response waited for it
            } else if (r != null) {
                r.onComplete(status);
            }
        }

        private void waitForBuffers() {
            waiting = true;
            buffers.waitFor(this);
        }

        @Override
        public void resume() {
            waiting = false;
            if (closing || !active) {
                if (active && completed) retire();
                return;
            }
            if (pendingData != null) {
                ByteBuf d = pendingData;
                pendingData = null;
                int n = d.readableBytes();
                buffers.take(chunksFor(n), chunks);
                chunkCount = chunksFor(n);
                copyAndWrite(d, n);
            } else if (pendingFile != null) {
                FileChannel f = pendingFile;
                pendingFile = null;
                buffers.take(chunksFor(pendingLength), chunks);
                chunkCount = chunksFor(pendingLength);
                try {
                    readFile(f, pendingPosition, pendingLength);
                } catch (UncheckedIOException e) {
                    log.warn("RDMA queue {} of {}: reading the namespace failed: {}", qid, remote, e.getMessage());
                    if (completed) status = Status.dnr(Status.INTERNAL_ERROR);
                }
            } else if (receiver != null) {
                buffers.take(chunksFor(length), chunks);
                chunkCount = chunksFor(length);
                postReads();
                return;
            }
            if (completed) finish();
        }

        @Override
        public void complete(int status, long result) {
            if (completed) throw new IllegalStateException("command completed twice: " + command);
            completed = true;
            if (handler != null) handler.onCompleted(this, status);
            this.status = status;
            this.result = result;
            if ((waiting || reading) && !closing) return; // the response follows the data
            finish();
        }

        private void finish() {
            if (!active || sending) return;
            if (closing) {
                releaseChunks();
                retire();
                return;
            }
            sending = true;
            try {
                recvCalls[recvIndex].execute(); // the capsule is consumed: its buffer takes the next one
                NvmeCompletion.write(
                        sendMemory.buf,
                        index * NvmeCompletion.SIZE,
                        result,
                        sqHead,
                        Math.max(qid, 0),
                        command.cid(),
                        status);
                if (invalidate && !invalidating) {
                    invalidating = true;
                    log.debug(
                            "RDMA queue {} of {}: the host asks for remote invalidation; responses go by {}",
                            qid,
                            remote,
                            remoteInvalidate
                                    ? "SEND with Invalidate"
                                    : "plain SEND on this device (the host invalidates its own key)");
                }
                if (invalidate && remoteInvalidate) {
                    RdmaNative.postSendInvalidate(
                            verbs.qpHandle(),
                            KIND_SEND | index,
                            sendMemory.address + (long) index * NvmeCompletion.SIZE,
                            NvmeCompletion.SIZE,
                            sendMemory.lkey,
                            rkey);
                } else {
                    send.execute();
                }
            } catch (IOException e) {
                log.warn("RDMA queue {} of {}: posting the response failed: {}", qid, remote, e.getMessage());
                close("post failed");
            }
        }

        void onSent() {
            releaseChunks();
            retire();
        }

        private void releaseChunks() {
            if (chunkCount > 0) {
                int n = chunkCount;
                chunkCount = 0;
                buffers.release(chunks, n);
            }
        }

        private void retire() {
            if (!active) return;
            active = false;
            sending = false;
            if (pendingData != null) {
                pendingData.release();
                pendingData = null;
            }
            pendingFile = null;
            receiver = null;
            recycle(this);
        }

        /** The queue pair is gone: give back buffers; a completion that comes later finds nothing to send. */
        void abandon() {
            if (!active) return;
            if (waiting) {
                waiting = false;
                buffers.cancel(this);
            }
            reading = false;
            DataReceiver r = receiver;
            if (r != null && !completed) {
                // The data will never come: failing the transfer completes the command (budget back, slot retired).
                receiver = null;
                r.onComplete(Status.ABORTED_SQ_DELETION);
            }
            if (!active) return;
            releaseChunks();
            if (pendingData != null) {
                pendingData.release();
                pendingData = null;
            }
            pendingFile = null;
            if (completed) retire();
        }
    }
}
