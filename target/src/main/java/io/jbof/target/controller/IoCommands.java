package io.jbof.target.controller;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.metrics.IoStats;
import io.jbof.target.namespace.DirectIoRing;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.transport.TargetRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.Collection;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NVM command set on I/O queues. Reads go file-to-transport (sendfile on TCP); writes go from the
 * transport's buffers into the page cache on the event loop. A direct namespace's reads and writes
 * wait for the device, so they run on the direct-I/O pool instead (a write once its data is gathered
 * into one aligned buffer) and complete back on the queue's loop: a slow drive never stalls the loop's
 * other queues, and a queue's depth reaches the drive. Flush, FUA and zeroing run on the
 * namespace's executor and complete back on the queue's loop. Per-command state lives in an
 * {@link IoOp} attached once to each pooled request, so the path allocates nothing per I/O.
 */
final class IoCommands {
    private static final Logger log = LoggerFactory.getLogger(IoCommands.class);
    private static final int NSID_ALL = 0xFFFFFFFF;
    private static final int DSM_MAX_RANGES = 256;

    void handle(QueueSession session, TargetRequest req) {
        Controller c = session.controller();
        NvmeCommand cmd = req.command();
        if (!c.ready()) {
            req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            return;
        }
        int opcode = cmd.opcode();
        Subsystem s = c.subsystem();
        if (opcode == Opcodes.IO_FLUSH && cmd.nsid() == NSID_ALL) {
            op(req, session).flushAll(s.namespaces());
            return;
        }
        TargetNamespace ns = s.namespace(cmd.nsid());
        if (ns == null) {
            req.complete(Status.dnr(Status.INVALID_NAMESPACE), 0);
            return;
        }
        int counted = IoStats.op(opcode);
        IoOp state = op(req, session);
        if (counted != IoStats.NONE
                && state.traced == null) { // a command back from waiting for the in-flight budget keeps its start
            state.trace(
                    ns,
                    counted,
                    counted == IoStats.READ || counted == IoStats.WRITE ? (long) cmd.nlb() << ns.blockShift() : 0);
        }
        int path = c.pathStatus(ns);
        if (path != Status.SUCCESS) {
            req.complete(path, 0); // no DNR: the host retries on another path
            return;
        }
        switch (opcode) {
            case Opcodes.IO_READ:
                read(session, state, ns);
                break;
            case Opcodes.IO_WRITE:
                write(session, state, ns);
                break;
            case Opcodes.IO_FLUSH:
                op(req, session).blocking(ns, IoOp.FLUSH, 0, 0);
                break;
            case Opcodes.IO_WRITE_ZEROES:
                writeZeroes(session, req, ns);
                break;
            case Opcodes.IO_DATASET_MANAGEMENT:
                datasetManagement(session, req, ns);
                break;
            default:
                req.complete(Status.dnr(Status.INVALID_OPCODE), 0);
        }
    }

    private static IoOp op(TargetRequest req, QueueSession session) {
        IoOp op = (IoOp) req.attachment();
        if (op == null) {
            op = new IoOp(req);
            req.attach(op);
        }
        op.session = session;
        return op;
    }

    /** Checks LBA range and transfer length of a Read or Write; returns the byte length or completes with an error. */
    private static int checkTransfer(TargetRequest req, TargetNamespace ns, int maxTransfer) {
        NvmeCommand cmd = req.command();
        long slba = cmd.slba();
        int nlb = cmd.nlb();
        if (!ns.inRange(slba, nlb)) {
            req.complete(Status.dnr(Status.LBA_OUT_OF_RANGE), 0);
            return -1;
        }
        long bytes = (long) nlb << ns.blockShift();
        if (bytes > maxTransfer) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return -1;
        }
        if (req.sglStatus() != Status.SUCCESS) {
            req.complete(req.sglStatus(), 0);
            return -1;
        }
        if (req.transferLength() != bytes) {
            req.complete(Status.dnr(Status.DATA_SGL_LENGTH_INVALID), 0);
            return -1;
        }
        return (int) bytes;
    }

    private void read(QueueSession session, IoOp op, TargetNamespace ns) {
        TargetRequest req = op.req;
        int bytes = checkTransfer(req, ns, session.maxTransfer);
        if (bytes < 0 || !session.admit(op, bytes)) return;
        long position = req.command().slba() << ns.blockShift();
        if (ns.direct()) {
            session.readCommands++;
            session.bytesRead += bytes;
            op.gathered = ns.gatherBuffer(bytes);
            op.blocking(ns, IoOp.DIRECT_READ, position, bytes);
            return;
        }
        try {
            req.sendFile(ns.channel(), position, bytes);
        } catch (RuntimeException e) {
            log.error("read of {} bytes at {} from {} failed", bytes, position, ns.path(), e);
            op.done(Status.UNRECOVERED_READ_ERROR, 0);
            return;
        }
        session.readCommands++;
        session.bytesRead += bytes;
        op.done(Status.SUCCESS, 0);
    }

    private void write(QueueSession session, IoOp op, TargetNamespace ns) {
        TargetRequest req = op.req;
        if (ns.readOnly()) {
            req.complete(Status.dnr(Status.NAMESPACE_WRITE_PROTECTED), 0);
            return;
        }
        int bytes = checkTransfer(req, ns, session.maxTransfer);
        if (bytes < 0 || !session.admit(op, bytes)) return;
        session.writeCommands++;
        session.bytesWritten += bytes;
        op.write(ns, req.command().slba() << ns.blockShift(), req.command().fua());
    }

    private void writeZeroes(QueueSession session, TargetRequest req, TargetNamespace ns) {
        if (ns.readOnly()) {
            req.complete(Status.dnr(Status.NAMESPACE_WRITE_PROTECTED), 0);
            return;
        }
        NvmeCommand cmd = req.command();
        if (!ns.inRange(cmd.slba(), cmd.nlb())) {
            req.complete(Status.dnr(Status.LBA_OUT_OF_RANGE), 0);
            return;
        }
        IoOp op = op(req, session);
        op.fua = cmd.fua();
        op.deallocateZeroes = (cmd.cdw(12) & (1 << 25)) != 0; // DEAC: the host lets us deallocate the zeroed blocks
        op.blocking(ns, IoOp.ZERO, cmd.slba() << ns.blockShift(), (long) cmd.nlb() << ns.blockShift());
    }

    private void datasetManagement(QueueSession session, TargetRequest req, TargetNamespace ns) {
        NvmeCommand cmd = req.command();
        int ranges = (cmd.cdw(10) & 0xFF) + 1;
        boolean deallocate = (cmd.cdw(11) & (1 << 2)) != 0;
        if (req.sglStatus() != Status.SUCCESS) {
            req.complete(req.sglStatus(), 0);
            return;
        }
        if (req.transferLength() < ranges * 16) {
            req.complete(Status.dnr(Status.DATA_SGL_LENGTH_INVALID), 0);
            return;
        }
        if (deallocate && ns.readOnly()) {
            req.complete(Status.dnr(Status.NAMESPACE_WRITE_PROTECTED), 0);
            return;
        }
        op(req, session).dsm(ns, ranges, deallocate);
    }

    /** Per-request state of one I/O command, reused for every command the pooled request carries. */
    static final class IoOp implements TargetRequest.DataReceiver, Runnable, DirectIoRing.Completion {
        static final int FLUSH = 1;
        static final int ZERO = 2;
        static final int FUA = 3;
        static final int DSM = 4;
        static final int FLUSH_ALL = 5;
        static final int DIRECT_READ = 6;
        static final int DIRECT_WRITE = 7;

        final TargetRequest req;
        final Runnable finish = this::finish;
        QueueSession session;
        TargetNamespace ns;
        Collection<TargetNamespace> all;
        long position;
        long length;
        boolean fua;
        boolean deallocateZeroes;
        int kind;
        int status;
        int ranges;
        boolean collecting;
        ByteBuf dsmRanges;
        /** A direct namespace's read lands here, its write gathers here (aligned, pooled); given back in {@link #done} or to the transport. */
        ByteBuf gathered;
        /** The io_uring of the queue's loop for direct reads and writes (looked up once per pooled request), or null. */
        DirectIoRing ring;

        boolean ringLooked;
        /** The budget this command holds {@link #inflightBytes} of, from {@link #hold} until {@link #done}: its one owner. */
        InflightBudget inflight;

        int inflightBytes;
        /** The command being counted (namespace, op, bytes, arrival), until its completion records it. */
        TargetNamespace traced;

        int tracedOp;
        long tracedBytes;
        long startNanos;

        IoOp(TargetRequest req) {
            this.req = req;
        }

        /** Takes {@code bytes} of the in-flight budget for this command, if they are free; {@link #done} gives them back. */
        boolean hold(InflightBudget budget, int bytes) {
            if (!budget.tryAcquire(bytes)) return false;
            inflight = budget;
            inflightBytes = bytes;
            return true;
        }

        /** Starts counting this command; its completion ({@link QueueSession#onCompleted}) records it. */
        void trace(TargetNamespace ns, int op, long bytes) {
            traced = ns;
            tracedOp = op;
            tracedBytes = bytes;
            startNanos = System.nanoTime();
        }

        void write(TargetNamespace ns, long position, boolean fua) {
            this.ns = ns;
            this.position = position;
            this.fua = fua;
            this.collecting = false;
            this.gathered = ns.gatherBuffer(inflightBytes);
            req.receiveData(this);
        }

        void dsm(TargetNamespace ns, int ranges, boolean deallocate) {
            this.ns = ns;
            this.ranges = ranges;
            this.collecting = true;
            this.fua = false;
            if (dsmRanges == null) dsmRanges = Unpooled.buffer(DSM_MAX_RANGES * 16, DSM_MAX_RANGES * 16);
            dsmRanges.clear();
            this.kind = deallocate ? DSM : 0;
            req.receiveData(this);
        }

        @Override
        public int onData(ByteBuf chunk, int offset) {
            if (collecting) {
                int want = ranges * 16;
                int n = Math.min(chunk.readableBytes(), want - offset);
                if (n > 0) dsmRanges.setBytes(offset, chunk, chunk.readerIndex(), n);
                return Status.SUCCESS;
            }
            if (gathered != null) {
                gathered.setBytes(offset, chunk, chunk.readerIndex(), chunk.readableBytes());
                return Status.SUCCESS;
            }
            try {
                ns.write(chunk, position + offset);
                return Status.SUCCESS;
            } catch (IOException e) {
                log.error("write at {} to {} failed", position + offset, ns.path(), e);
                return Status.WRITE_FAULT;
            }
        }

        @Override
        public void onComplete(int st) {
            if (st != Status.SUCCESS) {
                done(st, 0);
            } else if (collecting) {
                dsmReceived();
            } else if (gathered != null) {
                blocking(ns, DIRECT_WRITE, position, inflightBytes); // FUA included
            } else if (fua) {
                blocking(ns, FUA, 0, 0);
            } else {
                done(Status.SUCCESS, 0);
            }
        }

        private void dsmReceived() {
            for (int i = 0; i < ranges; i++) {
                long nlb = dsmRanges.getUnsignedIntLE(i * 16 + 4);
                long slba = dsmRanges.getLongLE(i * 16 + 8);
                if (!ns.inRange(slba, nlb)) {
                    done(Status.dnr(Status.LBA_OUT_OF_RANGE), 0);
                    return;
                }
            }
            if (kind != DSM) {
                done(Status.SUCCESS, 0); // attributes only: advisory
                return;
            }
            blocking(ns, DSM, 0, 0);
        }

        void flushAll(Collection<TargetNamespace> namespaces) {
            this.all = namespaces;
            if (namespaces.isEmpty()) {
                done(Status.SUCCESS, 0);
                return;
            }
            blocking(namespaces.iterator().next(), FLUSH_ALL, 0, 0);
        }

        void blocking(TargetNamespace ns, int kind, long position, long length) {
            this.ns = ns;
            this.kind = kind;
            this.position = position;
            this.length = length;
            if ((kind == DIRECT_READ || kind == DIRECT_WRITE) && startOnRing()) return;
            try {
                (kind == DIRECT_READ || kind == DIRECT_WRITE ? ns.directExecutor() : ns.blockingExecutor())
                        .execute(this);
            } catch (RejectedExecutionException e) {
                done(Status.NAMESPACE_NOT_READY, 0); // shutting down
            }
        }

        /** Starts a direct read or write on the loop's io_uring; false when there is none or it is full. */
        private boolean startOnRing() {
            if (!ringLooked) {
                ring = DirectIoRing.of(req.queue().executor());
                ringLooked = true;
            }
            return ring != null
                    && ns.startDirect(ring, kind == DIRECT_WRITE, gathered, (int) length, position, fua, this);
        }

        /** A direct read or write done by the ring, on the queue's loop: all of it, an error, or a short transfer. */
        @Override
        public void directDone(int result) {
            if (result == length) {
                if (kind == DIRECT_READ) gathered.writerIndex(result); // the kernel wrote it; the buffer does not know
                status = Status.SUCCESS;
                finish();
            } else if (result < 0) {
                log.error(
                        "{} on {} failed",
                        kind == DIRECT_READ ? "direct read" : "direct write",
                        ns.path(),
                        ns.directFailure(kind == DIRECT_WRITE, (int) length, position, -result));
                status = kind == DIRECT_READ ? Status.UNRECOVERED_READ_ERROR : Status.WRITE_FAULT;
                finish();
            } else {
                // Short (a file shrunk behind our back, or a device that splits): the pool's loop of pread/pwrite
                // does it again whole and zero-fills past the end.
                try {
                    ns.directExecutor().execute(this);
                } catch (RejectedExecutionException e) {
                    done(Status.NAMESPACE_NOT_READY, 0);
                }
            }
        }

        /** Runs on the namespace's executor (or the direct-I/O pool); the completion hops back to the queue's loop. */
        @Override
        public void run() {
            int st = Status.SUCCESS;
            try {
                switch (kind) {
                    case DIRECT_READ:
                        ns.readDirect(gathered, (int) length, position);
                        break;
                    case DIRECT_WRITE:
                        ns.writeGathered(gathered, (int) length, position);
                        if (fua) ns.force();
                        break;
                    case FLUSH:
                    case FUA:
                        ns.force();
                        break;
                    case FLUSH_ALL:
                        for (TargetNamespace n : all) n.force();
                        break;
                    case ZERO:
                        if (deallocateZeroes) ns.deallocate(position, length);
                        else ns.zero(position, length);
                        if (fua) ns.force();
                        break;
                    case DSM:
                        // Files: holes punched, the space goes back and the blocks read as zeroes (DLFEAT 001b).
                        // Devices: BLKDISCARD.
                        for (int i = 0; i < ranges; i++) {
                            long nlb = dsmRanges.getUnsignedIntLE(i * 16 + 4);
                            long slba = dsmRanges.getLongLE(i * 16 + 8);
                            if (nlb > 0) ns.deallocate(slba << ns.blockShift(), nlb << ns.blockShift());
                        }
                        break;
                    default:
                        throw new IllegalStateException("kind " + kind);
                }
            } catch (IOException | RuntimeException e) { // whatever fails, the command completes
                log.error(
                        "{} on {} failed",
                        kind == DIRECT_READ
                                ? "direct read"
                                : kind == DIRECT_WRITE
                                        ? "direct write"
                                        : kind == ZERO || kind == DSM ? "zeroing" : "flush",
                        ns.path(),
                        e);
                st = kind == DIRECT_READ ? Status.UNRECOVERED_READ_ERROR : Status.WRITE_FAULT;
            }
            status = st;
            req.queue().executor().execute(finish);
        }

        private void finish() {
            if (kind == DIRECT_READ && status == Status.SUCCESS) {
                ByteBuf data = gathered;
                gathered = null;
                req.sendData(data); // the transport owns it now
            }
            done(status, 0);
        }

        /**
         * Gives back the command's share of the in-flight budget and any aligned buffer it holds, then
         * completes it: the budget is free before the host can see the completion and send more.
         */
        private void done(int st, long result) {
            if (gathered != null) {
                gathered.release();
                gathered = null;
            }
            int n = inflightBytes;
            inflightBytes = 0;
            if (n > 0) inflight.release(n);
            req.complete(st, result);
        }
    }
}
