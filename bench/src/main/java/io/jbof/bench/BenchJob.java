package io.jbof.bench;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.VerifyBlock;
import io.jbof.initiator.queue.QueuePair;
import io.jbof.initiator.queue.Request;
import io.jbof.nvme.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One fio-style job: {@code iodepth} I/Os kept in flight on one I/O queue. Everything after start runs
 * on that queue's event loop: a completion records its latency and submits the next I/O from the same
 * thread (run to completion; no hand-off, no lock). Requests and buffers are allocated once per slot,
 * so the steady state allocates nothing per I/O.
 */
final class BenchJob implements Request.Callback {
    private enum Phase {
        RUN,
        VERIFY,
        DONE
    }

    private final Workload w;
    private final QueuePair queue;
    private final Namespace[] namespaces;
    private final Slot[] slots;
    final JobResult result;
    private final SplittableRandom rnd;
    private final VerifyBlock verifier = new VerifyBlock();
    private final CompletableFuture<JobResult> finished = new CompletableFuture<>();

    /** Per namespace: first byte of this job's region, and its size in units of the block size. */
    private final long[] regionStart;

    private final long[] regionUnits;
    private final long[] seqCursor;
    private final long totalUnits;
    private long issued;

    private Phase phase = Phase.RUN;
    private long measureFrom;
    private long endAt;
    private long lastCompletion;
    private int inFlight;
    private boolean stopping;

    // --verify with writes: each unit of the job's region written at most once, then all read back.
    private final BitSet written;
    private final UnitOrder order;
    private int verifyCursor;

    // --rate_iops: a ticker issues I/Os at their intended times; free slots wait on a stack.
    private final long intervalNanos;
    private long nextIntended;
    private final int[] freeSlots;
    private int freeCount;
    private ScheduledFuture<?> ticker;

    /** A reusable command with its own buffer. */
    private static final class Slot extends Request {
        final ByteBuf buf;
        long start;
        boolean write;
        int ns;
        long offset;
        long unit;
        final int index;

        Slot(int index, ByteBuf buf) {
            this.index = index;
            this.buf = buf;
        }
    }

    /** The controller's data buffer (registered on RDMA: no copy per I/O), a pooled direct one otherwise. */
    private static ByteBuf dataBuffer(Namespace ns, int size) {
        try {
            return ns.controller().dataBuffer(size);
        } catch (IOException e) {
            return PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        }
    }

    BenchJob(int id, Workload w, QueuePair queue, List<Namespace> namespaces) {
        this.w = w;
        this.queue = queue;
        this.namespaces = namespaces.toArray(new Namespace[0]);
        this.result = new JobResult(w.name() + (w.numjobs() > 1 ? "." + id : ""), 1);
        this.rnd = new SplittableRandom(w.seed() + 7919L * id);
        int n = this.namespaces.length;
        regionStart = new long[n];
        regionUnits = new long[n];
        seqCursor = new long[n];
        long total = 0;
        for (int i = 0; i < n; i++) {
            Namespace ns = this.namespaces[i];
            if (w.blockSize() % ns.blockSize() != 0) {
                throw new IllegalArgumentException("--bs " + w.blockSize() + " is not a multiple of namespace "
                        + ns.nsid() + "'s " + ns.blockSize() + "-byte blocks");
            }
            if (w.blockSize() / ns.blockSize() > ns.maxBlocksPerCommand()) {
                throw new IllegalArgumentException(
                        "--bs " + w.blockSize() + " exceeds the controller's largest transfer ("
                                + (long) ns.maxBlocksPerCommand() * ns.blockSize() + " bytes)");
            }
            long size = w.size() > 0 ? w.size() : ns.sizeBytes() - w.offset();
            if (w.offset() % w.blockSize() != 0)
                throw new IllegalArgumentException("--offset must be a multiple of --bs");
            if (size <= 0 || w.offset() + size > ns.sizeBytes()) {
                throw new IllegalArgumentException("--offset " + w.offset() + " --size " + size
                        + " lies outside namespace " + ns.nsid() + " (" + ns.sizeBytes() + " bytes)");
            }
            long units = size / w.blockSize();
            long start = w.offset();
            if (w.verify() && w.numjobs() > 1) {
                // Verifying jobs work on disjoint parts, like fio's offset_increment, so no block is written twice.
                long part = units / w.numjobs();
                start += part * id * w.blockSize();
                units = part;
            }
            if (units <= 0) throw new IllegalArgumentException("the region holds less than one --bs per job");
            regionStart[i] = start;
            regionUnits[i] = units;
            total += units;
        }
        totalUnits = total;
        boolean verifyWrites = w.verify() && w.rw().writes;
        if (verifyWrites && total > Integer.MAX_VALUE)
            throw new IllegalArgumentException("--verify covers at most 2^31 blocks per job; use --size");
        written = verifyWrites ? new BitSet((int) total) : null;
        order = verifyWrites
                ? (w.rw().random ? UnitOrder.shuffled(total, rnd.nextLong()) : UnitOrder.sequential(total))
                : null;
        slots = new Slot[w.iodepth()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(i, dataBuffer(this.namespaces[0], w.blockSize()));
            slots[i].callback = this;
            if (!w.verify()) {
                // Incompressible payload, written once: fio's default (refill_buffers off).
                byte[] junk = new byte[w.blockSize()];
                rnd.nextBytes(junk);
                slots[i].buf.setBytes(0, junk);
            }
        }
        intervalNanos = w.rateIops() > 0 ? TimeUnit.SECONDS.toNanos(1) / w.rateIops() : 0;
        freeSlots = new int[slots.length];
    }

    /** Starts at {@code startAt} (System.nanoTime); measures from {@code startAt + ramp}. */
    CompletableFuture<JobResult> start(long startAt) {
        measureFrom = startAt + w.rampNanos();
        endAt = measureFrom + w.runtimeNanos();
        queue.executor().execute(() -> {
            if (intervalNanos > 0) {
                for (int i = slots.length - 1; i >= 0; i--) freeSlots[freeCount++] = i;
                nextIntended = System.nanoTime();
                long tick = Math.max(50_000, Math.min(intervalNanos, 1_000_000));
                ticker = queue.executor().scheduleAtFixedRate(this::issueDue, 0, tick, TimeUnit.NANOSECONDS);
            } else {
                long now = System.nanoTime();
                for (Slot s : slots) {
                    if (!issue(s, now)) break;
                }
                if (inFlight == 0) endPhase();
            }
        });
        return finished;
    }

    /** Fixed rate: every I/O whose intended start has come, as far as free slots allow. */
    private void issueDue() {
        long now = System.nanoTime();
        if (phase != Phase.RUN || stopping || now >= endAt) {
            if (ticker != null) ticker.cancel(false);
            if (inFlight == 0) endPhase();
            return;
        }
        while (freeCount > 0 && nextIntended <= now) {
            Slot s = slots[freeSlots[--freeCount]];
            if (!issue(s, nextIntended)) {
                freeSlots[freeCount++] = s.index;
                break;
            }
            nextIntended += intervalNanos;
        }
    }

    /** Fills and submits {@code s}; false when this phase has nothing more to issue. */
    private boolean issue(Slot s, long startTime) {
        boolean write;
        long unit;
        if (phase == Phase.VERIFY) {
            int u = written.nextSetBit(verifyCursor);
            if (u < 0) return false;
            verifyCursor = u + 1;
            unit = u;
            write = false;
        } else {
            RwMode m = w.rw();
            write = m.reads && m.writes ? rnd.nextInt(100) >= w.rwmixread() : m.writes;
            unit = -1;
            if (written != null && !write) {
                // Verify while running: a read checks a block already written (each is written once,
                // so it is never in flight); before the first write completes, write instead.
                unit = anyWritten();
                if (unit < 0) write = true;
            }
            if (unit >= 0) {
                // chosen above
            } else if (order != null && write) {
                unit = order.next();
                if (unit < 0) return false; // every unit written once: the verify pass follows
            } else if (m.random) {
                unit = rnd.nextLong(totalUnits);
            }
        }
        int nsIndex;
        long unitInNs;
        if (unit >= 0) {
            nsIndex = (int) (unit % namespaces.length);
            unitInNs = unit / namespaces.length % regionUnits[nsIndex];
        } else {
            nsIndex = (int) (issued % namespaces.length);
            unitInNs = seqCursor[nsIndex]++ % regionUnits[nsIndex];
            unit = unitInNs * namespaces.length + nsIndex;
        }
        issued++;
        Namespace ns = namespaces[nsIndex];
        long offset = regionStart[nsIndex] + unitInNs * w.blockSize();
        int bs = w.blockSize();
        if (write) {
            if (w.verify()) verifier.fill(s.buf, bs, ns.nsid(), offset, rnd.nextLong());
            s.buf.setIndex(0, bs);
        } else {
            s.buf.clear();
        }
        ns.prepare(s, write, offset / ns.blockSize(), bs / ns.blockSize(), s.buf, false);
        s.callback = this;
        s.write = write;
        s.ns = nsIndex;
        s.offset = offset;
        s.unit = unit;
        s.start = startTime;
        inFlight++;
        queue.submit(s);
        return true;
    }

    /** A random unit whose write completed, or -1 when none has yet. */
    private long anyWritten() {
        int u = written.nextSetBit((int) rnd.nextLong(totalUnits));
        return u >= 0 ? u : written.nextSetBit(0);
    }

    @Override
    public void onComplete(Request r, int status, long res, Throwable error) {
        Slot s = (Slot) r;
        long now = System.nanoTime();
        inFlight--;
        if (error != null || !Status.isSuccess(status)) {
            if (result.error == 0) {
                result.error = 5; // EIO, as fio prints for a failed I/O
                result.errorText = error != null
                        ? error.toString()
                        : (s.write ? "Write" : "Read") + " at offset " + s.offset + ": " + Status.describe(status);
            }
            stopping = true;
        } else if (phase == Phase.VERIFY || (w.verify() && !s.write)) {
            String bad = verifier.check(s.buf, w.blockSize(), namespaces[s.ns].nsid(), s.offset);
            result.verifiedBlocks++;
            if (bad != null) {
                result.verifyErrors++;
                if (result.firstVerifyError == null) {
                    result.firstVerifyError =
                            "namespace " + namespaces[s.ns].nsid() + " offset " + s.offset + ": " + bad;
                }
            }
        }
        if (phase == Phase.RUN && error == null && Status.isSuccess(status)) {
            if (now - measureFrom >= 0) {
                (s.write ? result.write : result.read).record(now - s.start, w.blockSize());
                lastCompletion = now;
            }
            if (s.write && written != null) written.set((int) s.unit);
        }
        boolean more = !stopping && (phase == Phase.VERIFY || now - endAt < 0);
        if (more && intervalNanos > 0 && phase == Phase.RUN) {
            freeSlots[freeCount++] = s.index;
            issueDue();
            return;
        }
        if (more && issue(s, now)) return;
        if (inFlight == 0) endPhase();
    }

    private void endPhase() {
        if (phase == Phase.DONE) return;
        if (phase == Phase.RUN) {
            if (ticker != null) ticker.cancel(false);
            result.runtimeNanos = Math.max(1, (lastCompletion != 0 ? lastCompletion : System.nanoTime()) - measureFrom);
            if (written != null && !stopping) {
                phase = Phase.VERIFY;
                for (Slot s : slots) {
                    if (!issue(s, System.nanoTime())) break;
                }
                if (inFlight > 0) return;
            }
        }
        phase = Phase.DONE;
        for (Slot s : slots) s.buf.release();
        finished.complete(result);
    }

    DirectionStats readStats() {
        return result.read;
    }

    DirectionStats writeStats() {
        return result.write;
    }
}
