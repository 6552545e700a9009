package io.jbof.initiator;

import io.jbof.initiator.queue.QueuePair;
import io.jbof.initiator.queue.Request;
import io.jbof.nvme.Opcodes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A namespace of a connected controller: asynchronous block I/O returning futures, blocking
 * conveniences, and {@link #prepare} / {@link QueuePair#submit} for callers that reuse their Request
 * objects and want no allocation per I/O. Transfers larger than the controller's MDTS are split.
 */
public final class Namespace {
    private final NvmeController controller;
    private final NamespaceInfo info;
    private final int blockShift;
    private final int maxBlocksPerCommand;

    Namespace(NvmeController controller, NamespaceInfo info) {
        this.controller = controller;
        this.info = info;
        this.blockShift = Integer.numberOfTrailingZeros(info.blockSize());
        long max = controller.maxTransferBytes();
        this.maxBlocksPerCommand = (int) Math.min(65536, max >> blockShift);
    }

    public int nsid() {
        return info.nsid();
    }

    public NamespaceInfo info() {
        return info;
    }

    public int blockSize() {
        return info.blockSize();
    }

    public long blocks() {
        return info.sizeBlocks();
    }

    public long sizeBytes() {
        return info.sizeBytes();
    }

    public boolean readOnly() {
        return info.writeProtected();
    }

    public int maxBlocksPerCommand() {
        return maxBlocksPerCommand;
    }

    public NvmeController controller() {
        return controller;
    }

    /**
     * Fills a reusable Request for one Read or Write of {@code blocks} blocks (at most
     * {@link #maxBlocksPerCommand()}); the caller sets {@code callback} and submits it to a queue.
     */
    public Request prepare(Request r, boolean write, long lba, int blocks, ByteBuf data, boolean fua) {
        r.reset();
        r.opcode = write ? Opcodes.IO_WRITE : Opcodes.IO_READ;
        r.nsid = info.nsid();
        r.cdw[10] = (int) lba;
        r.cdw[11] = (int) (lba >>> 32);
        r.cdw[12] = ((blocks - 1) & 0xFFFF) | (fua ? 1 << 30 : 0);
        r.data = data;
        r.dataLength = blocks << blockShift;
        r.toController = write;
        return r;
    }

    private void checkRange(long lba, long blocks, int bufferBytes) {
        if (lba < 0 || blocks <= 0 || lba + blocks > info.sizeBlocks()) {
            throw new IllegalArgumentException("blocks [" + lba + ", " + (lba + blocks) + ") are outside namespace "
                    + nsid() + " of " + info.sizeBlocks() + " blocks");
        }
        if (bufferBytes >= 0 && bufferBytes < (blocks << blockShift)) {
            throw new IllegalArgumentException(
                    "buffer holds " + bufferBytes + " bytes; " + blocks + " blocks need " + (blocks << blockShift));
        }
    }

    /** Reads {@code blocks} blocks at {@code lba} into {@code dst} starting at its writer index (advanced on success). */
    public CompletableFuture<Void> read(long lba, int blocks, ByteBuf dst) {
        return read(null, lba, blocks, dst);
    }

    /** As {@link #read(long, int, ByteBuf)} on a chosen I/O queue ({@code null}: the calling thread's). */
    public CompletableFuture<Void> read(QueuePair queue, long lba, int blocks, ByteBuf dst) {
        checkRange(lba, blocks, dst.writableBytes());
        int base = dst.writerIndex();
        return transfer(queue, false, lba, blocks, dst, base, false)
                .thenRun(() -> dst.writerIndex(base + (blocks << blockShift)));
    }

    /** Writes {@code blocks} blocks from the readable bytes of {@code src} (not consumed). */
    public CompletableFuture<Void> write(long lba, int blocks, ByteBuf src, boolean fua) {
        return write(null, lba, blocks, src, fua);
    }

    /** As {@link #write(long, int, ByteBuf, boolean)} on a chosen I/O queue ({@code null}: the calling thread's). */
    public CompletableFuture<Void> write(QueuePair queue, long lba, int blocks, ByteBuf src, boolean fua) {
        checkRange(lba, blocks, src.readableBytes());
        return transfer(queue, true, lba, blocks, src, src.readerIndex(), fua);
    }

    private CompletableFuture<Void> transfer(
            QueuePair q, boolean write, long lba, int blocks, ByteBuf buf, int base, boolean fua) {
        QueuePair queue = q != null ? q : controller.queueForThisThread();
        if (blocks <= maxBlocksPerCommand)
            return one(queue, write, lba, blocks, buf.slice(base, blocks << blockShift), fua);
        CompletableFuture<?>[] parts =
                new CompletableFuture<?>[(blocks + maxBlocksPerCommand - 1) / maxBlocksPerCommand];
        int done = 0;
        for (int i = 0; i < parts.length; i++) {
            int n = Math.min(maxBlocksPerCommand, blocks - done);
            parts[i] = one(queue, write, lba + done, n, buf.slice(base + (done << blockShift), n << blockShift), fua);
            done += n;
        }
        return CompletableFuture.allOf(parts);
    }

    private CompletableFuture<Void> one(
            QueuePair queue, boolean write, long lba, int blocks, ByteBuf slice, boolean fua) {
        FutureRequest r = new FutureRequest(write ? "Write" : "Read");
        prepare(r, write, lba, blocks, write ? slice : slice.readerIndex(0), fua);
        r.callback = r;
        queue.submit(r);
        return r.future.thenApply(v -> null);
    }

    public CompletableFuture<Void> flush() {
        FutureRequest r = FutureRequest.io("Flush", Opcodes.IO_FLUSH, info.nsid());
        controller.queueForThisThread().submit(r);
        return r.future.thenApply(v -> null);
    }

    public CompletableFuture<Void> writeZeroes(long lba, int blocks) {
        checkRange(lba, blocks, -1);
        FutureRequest r = FutureRequest.io("Write Zeroes", Opcodes.IO_WRITE_ZEROES, info.nsid());
        r.cdw[10] = (int) lba;
        r.cdw[11] = (int) (lba >>> 32);
        r.cdw[12] = (blocks - 1) & 0xFFFF;
        controller.queueForThisThread().submit(r);
        return r.future.thenApply(v -> null);
    }

    /** Dataset Management with the Deallocate attribute over one range (blocks read as zeroes afterwards). */
    public CompletableFuture<Void> deallocate(long lba, long blocks) {
        checkRange(lba, blocks, -1);
        if (blocks > 0xFFFFFFFFL) throw new IllegalArgumentException("one range holds at most 2^32-1 blocks");
        ByteBuf range = Unpooled.buffer(16, 16);
        range.writeIntLE(0);
        range.writeIntLE((int) blocks);
        range.writeLongLE(lba);
        FutureRequest r = FutureRequest.io("Dataset Management", Opcodes.IO_DATASET_MANAGEMENT, info.nsid());
        r.cdw[10] = 0; // one range
        r.cdw[11] = 1 << 2; // AD: deallocate
        r.data = range;
        r.dataLength = 16;
        r.toController = true;
        controller.queueForThisThread().submit(r);
        return r.future.thenApply(v -> null);
    }

    // ---- blocking conveniences ----

    public void readBlocking(long lba, int blocks, ByteBuf dst) throws IOException {
        NvmeController.await(read(lba, blocks, dst), "Read");
    }

    public void writeBlocking(long lba, int blocks, ByteBuf src, boolean fua) throws IOException {
        NvmeController.await(write(lba, blocks, src, fua), "Write");
    }

    public void flushBlocking() throws IOException {
        NvmeController.await(flush(), "Flush");
    }
}
