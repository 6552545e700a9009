package io.jbof.target.transport.loop;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.transport.TargetQueue;
import io.jbof.transport.TargetRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * One reusable command slot of a {@link LoopQueue}: the host's side of the exchange in memory. Data
 * from the host is {@link #payload(ByteBuf)}; data to the host lands in the host buffer given at
 * construction, or is dropped when there is none (benchmarks: nothing is allocated per command).
 */
public final class LoopRequest implements TargetRequest, AutoCloseable {
    private final ByteBuf sqe = Unpooled.directBuffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
    private final NvmeCommand command = new NvmeCommand().wrap(sqe, 0);
    private final LoopQueue queue;
    private final ByteBuf hostBuffer;
    private int length;
    private ByteBuf payload;
    private Object attachment;
    private int status = -1;
    private long result;
    /** Written last by complete(): publishes status and result (no lock, so JMH measures the target, not this). */
    private volatile boolean done;

    private volatile Thread waiter;

    /** {@code hostBuffer}: where data to the host goes (written from index 0), or null to drop it. */
    public LoopRequest(LoopQueue queue, ByteBuf hostBuffer) {
        this.queue = queue;
        this.hostBuffer = hostBuffer;
    }

    /** Starts a new command: opcode, CID 1, an in-capsule SGL of {@code length} bytes; the rest is zero. */
    public NvmeCommand reset(int opcode, int length) {
        command.clear().opcode(opcode).flags(NvmeCommand.FLAGS_SGL).cid(1);
        Sgl.write(sqe, 0, 0, length, Sgl.ID_IN_CAPSULE);
        this.length = length;
        this.payload = null;
        this.status = -1;
        this.done = false;
        if (hostBuffer != null) hostBuffer.clear();
        return command;
    }

    /** The data the host sends with this command (its first {@code length} bytes are used). */
    public LoopRequest payload(ByteBuf data) {
        this.payload = data;
        return this;
    }

    /** The status once completed; the caller's thread completes most commands before onCommand returns. */
    public int status() {
        return done ? status : -1;
    }

    public long result() {
        return done ? result : 0;
    }

    /** Waits for the completion of a command the target finishes on another thread (a flush, a file write). */
    public int await(long timeout, TimeUnit unit) throws InterruptedException, TimeoutException {
        long end = System.nanoTime() + unit.toNanos(timeout);
        waiter = Thread.currentThread();
        try {
            while (!done) { // complete() unparks this thread; park may also return spuriously
                long left = end - System.nanoTime();
                if (left <= 0)
                    throw new TimeoutException(
                            "no completion for opcode " + command.opcode() + " within " + timeout + " " + unit);
                if (Thread.interrupted()) throw new InterruptedException();
                LockSupport.parkNanos(this, left);
            }
        } finally {
            waiter = null;
        }
        return status;
    }

    @Override
    public NvmeCommand command() {
        return command;
    }

    @Override
    public TargetQueue queue() {
        return queue;
    }

    @Override
    public int transferLength() {
        return length;
    }

    @Override
    public int sglStatus() {
        return Status.SUCCESS;
    }

    @Override
    public void sendData(ByteBuf data) {
        try {
            if (hostBuffer != null) hostBuffer.writeBytes(data, data.readerIndex(), data.readableBytes());
        } finally {
            data.release();
        }
    }

    @Override
    public void sendFile(FileChannel file, long position, int n) {
        if (hostBuffer == null) return;
        try {
            int got = hostBuffer.writeBytes(file, position, n);
            if (got != n) throw new IOException("short read of " + got + " of " + n + " bytes at " + position);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void receiveData(DataReceiver r) {
        int st = payload == null || length == 0
                ? Status.SUCCESS
                : r.onData(payload.slice(payload.readerIndex(), length), 0);
        r.onComplete(st);
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object a) {
        attachment = a;
    }

    @Override
    public void complete(int status, long result) {
        this.status = status;
        this.result = result;
        this.done = true;
        Thread w = waiter;
        if (w != null) LockSupport.unpark(w);
    }

    /** Gives back the slot's command buffer (direct memory); the slot is not used after. */
    @Override
    public void close() {
        if (sqe.refCnt() > 0) sqe.release();
    }
}
