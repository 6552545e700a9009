package io.jbof.fuse;

import io.jbof.initiator.Namespace;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One namespace seen as a file of bytes: reads and writes at any offset and length, zeroing and
 * deallocation of byte ranges, and flush. Whole blocks move straight between the caller's buffer and
 * the wire; only partial edge blocks go through a per-thread scratch buffer (read, patch, write back
 * under {@link StripedBlockLocks}). The plain calls block the calling thread until the target answered;
 * the {@code *Async} ones complete on the initiator's thread, which is what the FUSE server uses.
 */
public final class NamespaceFile {
    private static final int MAX_WRITE_ZEROES_BLOCKS = 65536; // NLB is 16 bits, 0's based
    private static final long MAX_DEALLOCATE_BLOCKS = 0xFFFFFFFFL;

    private final Namespace ns;
    private final int blockSize;
    private final long size;
    private final StripedBlockLocks locks = new StripedBlockLocks();
    /** Edge-block buffers, borrowed per call: callers come from pools that change size, so per-thread buffers would leak. */
    private final ConcurrentLinkedQueue<Scratch> scratchPool = new ConcurrentLinkedQueue<>();

    private volatile boolean closed;
    /** Writes completed since the last Flush was sent: a Flush with nothing to make durable is skipped. */
    private final AtomicLong unflushedWrites = new AtomicLong();

    public NamespaceFile(Namespace ns) {
        this.ns = ns;
        this.blockSize = ns.blockSize();
        this.size = ns.sizeBytes();
    }

    public Namespace namespace() {
        return ns;
    }

    public long size() {
        return size;
    }

    public int blockSize() {
        return blockSize;
    }

    public boolean readOnly() {
        return ns.readOnly();
    }

    /** Two edge blocks and a range descriptor; as many exist as calls ever ran at once. */
    private static final class Scratch {
        final ByteBuf head;
        final ByteBuf tail;
        final ByteRange range = new ByteRange();
        final StripedBlockLocks.Held held = new StripedBlockLocks.Held();

        Scratch(int blockSize) {
            head = PooledByteBufAllocator.DEFAULT.directBuffer(blockSize, blockSize);
            tail = PooledByteBufAllocator.DEFAULT.directBuffer(blockSize, blockSize);
        }

        void release() {
            head.release();
            tail.release();
        }
    }

    private Scratch borrow() {
        Scratch s = scratchPool.poll();
        return s != null ? s : new Scratch(blockSize);
    }

    private void giveBack(Scratch s) {
        scratchPool.offer(s);
        if (closed) releaseScratch();
    }

    private void releaseScratch() {
        Scratch s;
        while ((s = scratchPool.poll()) != null) s.release();
    }

    /** Releases the scratch buffers; calls still running release theirs when they end. */
    public void close() {
        closed = true;
        releaseScratch();
    }

    /** Bytes of a transfer of {@code length} at {@code offset} that lie inside the namespace. */
    public int clamp(long offset, long length) {
        if (offset >= size) return 0;
        return (int) Math.min(length, size - offset);
    }

    /** Reads {@code length} bytes at {@code offset} into {@code dst} (indexes 0..length-1). */
    public void read(long offset, int length, ByteBuf dst) throws IOException {
        if (length == 0) return;
        Scratch s = borrow();
        try {
            ByteRange r = s.range.set(offset, length, blockSize);
            CompletableFuture<Void> head = r.headBytes != 0 ? readBlock(r.headLba, s.head) : null;
            CompletableFuture<Void> tail = r.tailBytes != 0 ? readBlock(r.tailLba, s.tail) : null;
            CompletableFuture<Void> mid = r.midBlocks > 0
                    ? ns.read(
                            r.midLba,
                            (int) r.midBlocks,
                            dst.slice(r.midBufferOffset, (int) (r.midBlocks * blockSize))
                                    .clear())
                    : null;
            await(head, tail, mid);
            if (r.headBytes != 0) dst.setBytes(0, s.head, r.headOffset, r.headBytes);
            if (r.tailBytes != 0) dst.setBytes(r.tailBufferOffset, s.tail, 0, r.tailBytes);
        } finally {
            giveBack(s);
        }
    }

    /** What one asynchronous write holds while it is in flight; one per caller slot, reused. */
    public static final class WriteState {
        final ByteRange range = new ByteRange();
        final StripedBlockLocks.Held held = new StripedBlockLocks.Held();
    }

    private boolean aligned(long offset, int length) {
        return offset % blockSize == 0 && length % blockSize == 0;
    }

    /**
     * Reads {@code length} bytes at {@code offset} into {@code dst} from its writer index. Whole blocks go
     * out at once and complete on the initiator's thread; a range with partial blocks runs the blocking
     * {@link #read} on {@code edges}.
     */
    public CompletableFuture<Void> readAsync(long offset, int length, ByteBuf dst, Executor edges) {
        if (aligned(offset, length)) return ns.read(offset / blockSize, length / blockSize, dst);
        ByteBuf region = dst.slice(dst.writerIndex(), length);
        return CompletableFuture.runAsync(
                () -> {
                    try {
                        read(offset, length, region);
                    } catch (IOException e) {
                        throw new CompletionException(e);
                    }
                },
                edges);
    }

    /**
     * Writes the {@code length} readable bytes of {@code src} at {@code offset}. Whole blocks hold their
     * lock stripes shared from here until the write completes (on whichever thread completes it; where a
     * patch holds one, the wait for it runs on {@code edges}); a range with partial blocks runs the blocking
     * read-modify-write on {@code edges}. Never blocks the calling thread.
     */
    public CompletableFuture<Void> writeAsync(
            long offset, int length, ByteBuf src, boolean fua, WriteState st, Executor edges) {
        if (!aligned(offset, length)) {
            ByteBuf data = src.slice(src.readerIndex(), length);
            return CompletableFuture.runAsync(
                    () -> {
                        try {
                            write(offset, length, data, fua);
                        } catch (IOException e) {
                            throw new CompletionException(e);
                        }
                    },
                    edges);
        }
        if (!locks.tryLock(st.range.set(offset, length, blockSize), st.held)) {
            // A patch holds a block of it: wait for the stripes on the edge pool, never on the caller's
            // thread (an event loop reading FUSE requests would stall the very I/O the patch waits for).
            return CompletableFuture.supplyAsync(
                            () -> {
                                locks.lock(st.range, st.held);
                                return sendWrite(offset, length, src, fua, st);
                            },
                            edges)
                    .thenCompose(f -> f);
        }
        return sendWrite(offset, length, src, fua, st);
    }

    /** Sends a whole-block write whose stripes {@code st} holds; they are released when it completes. */
    private CompletableFuture<Void> sendWrite(long offset, int length, ByteBuf src, boolean fua, WriteState st) {
        CompletableFuture<Void> f;
        try {
            f = ns.write(offset / blockSize, length / blockSize, src, fua);
        } catch (RuntimeException e) {
            locks.unlock(st.held);
            throw e;
        }
        return f.whenComplete((v, e) -> {
            locks.unlock(st.held);
            if (e == null) unflushedWrites.incrementAndGet();
        });
    }

    /** NVMe Flush, unless nothing was written since the last one; completes when the target answered. */
    public CompletableFuture<Void> flushAsync() {
        if (unflushedWrites.getAndSet(0) == 0) return CompletableFuture.completedFuture(null);
        return ns.flush().whenComplete((v, e) -> {
            if (e != null) unflushedWrites.incrementAndGet(); // still not durable: the next flush must go out
        });
    }

    /** Writes {@code length} bytes of {@code src} (indexes 0..length-1) at {@code offset}; FUA when {@code fua}. */
    public void write(long offset, int length, ByteBuf src, boolean fua) throws IOException {
        patch(offset, length, src, fua, false);
    }

    /** Zeroes a byte range: Write Zeroes for whole blocks, patched edges for the rest. */
    public void zero(long offset, long length) throws IOException {
        forEachChunk(offset, length, false);
    }

    /** Deallocates a byte range (reads return zeroes after): Dataset Management for whole blocks, zeroed edges. */
    public void punchHole(long offset, long length) throws IOException {
        forEachChunk(offset, length, true);
    }

    private void forEachChunk(long offset, long length, boolean deallocate) throws IOException {
        // Edges are at most a block each; the middle can be any size, so cut at 1 GiB to keep ints.
        long end = offset + length;
        for (long at = offset; at < end; ) {
            int n = (int) Math.min(end - at, 1L << 30);
            patch(at, n, null, false, deallocate);
            at += n;
        }
    }

    /**
     * The write path: {@code src} null means zeroes. Edge blocks are read, patched and written back
     * while their stripes are held exclusively; whole blocks go out directly (or as Write Zeroes /
     * Deallocate when zeroing).
     */
    private void patch(long offset, int length, ByteBuf src, boolean fua, boolean deallocate) throws IOException {
        if (length == 0) return;
        Scratch s = borrow();
        ByteRange r = s.range.set(offset, length, blockSize);
        locks.lock(r, s.held);
        try {
            await(
                    r.headBytes != 0 ? readBlock(r.headLba, s.head) : null,
                    r.tailBytes != 0 ? readBlock(r.tailLba, s.tail) : null,
                    null);
            CompletableFuture<Void> head = null, tail = null, mid = null;
            if (r.headBytes != 0) {
                copyOrZero(s.head, r.headOffset, src, 0, r.headBytes);
                head = ns.write(r.headLba, 1, s.head.setIndex(0, blockSize), fua);
            }
            if (r.tailBytes != 0) {
                copyOrZero(s.tail, 0, src, r.tailBufferOffset, r.tailBytes);
                tail = ns.write(r.tailLba, 1, s.tail.setIndex(0, blockSize), fua);
            }
            if (r.midBlocks > 0) {
                if (src != null) {
                    mid = ns.write(
                            r.midLba,
                            (int) r.midBlocks,
                            src.slice(r.midBufferOffset, (int) (r.midBlocks * blockSize)),
                            fua);
                } else {
                    mid = zeroBlocks(r.midLba, r.midBlocks, deallocate);
                }
            }
            await(head, tail, mid);
            unflushedWrites.incrementAndGet();
        } finally {
            locks.unlock(s.held);
            giveBack(s);
        }
    }

    private static void copyOrZero(ByteBuf block, int at, ByteBuf src, int srcAt, int n) {
        if (src != null) block.setBytes(at, src, srcAt, n);
        else block.setZero(at, n);
    }

    private CompletableFuture<Void> zeroBlocks(long lba, long blocks, boolean deallocate) {
        long max = deallocate ? MAX_DEALLOCATE_BLOCKS : MAX_WRITE_ZEROES_BLOCKS;
        CompletableFuture<Void> all = CompletableFuture.completedFuture(null);
        for (long done = 0; done < blocks; ) {
            long n = Math.min(max, blocks - done);
            CompletableFuture<Void> one =
                    deallocate ? ns.deallocate(lba + done, n) : ns.writeZeroes(lba + done, (int) n);
            all = all.thenCombine(one, (a, b) -> null);
            done += n;
        }
        return all;
    }

    /** NVMe Flush, unless nothing was written since the last one. */
    public void flush() throws IOException {
        if (unflushedWrites.getAndSet(0) == 0) return;
        try {
            join(ns.flush());
        } catch (IOException e) {
            unflushedWrites.incrementAndGet(); // still not durable: the next flush must go out
            throw e;
        }
    }

    private CompletableFuture<Void> readBlock(long lba, ByteBuf block) {
        return ns.read(lba, 1, block.clear());
    }

    private static void await(CompletableFuture<Void> a, CompletableFuture<Void> b, CompletableFuture<Void> c)
            throws IOException {
        // Wait for all before reporting: a buffer must not be handed back while a transfer still uses it.
        IOException first = null;
        for (CompletableFuture<Void> f : new CompletableFuture[] {a, b, c}) {
            if (f == null) continue;
            try {
                join(f);
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }

    private static void join(CompletableFuture<?> f) throws IOException {
        try {
            f.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException) throw (IOException) c;
            throw new IOException(c.getMessage(), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
