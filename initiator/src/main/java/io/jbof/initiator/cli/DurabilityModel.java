package io.jbof.initiator.cli;

import io.jbof.initiator.VerifyBlock;
import io.netty.buffer.ByteBuf;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What a crash may leave in each block of a region, for kill -9 and power-cut checks. Every block written
 * is a {@link VerifyBlock} seeded with its version, so a torn or misplaced block is caught. Per block the model
 * keeps the durable version (acknowledged before a completed Flush, or by a FUA write) and the versions
 * written since: after a crash the block must hold the durable one or one of those, whole.
 */
public final class DurabilityModel {
    private static final int MAGIC = 0x6A626F64; // "jbod"

    private final int nsid;
    private final long base;
    private final int blocks;
    private final int bs;
    private final long[] durable;
    private final long[] lastAcked;
    private final List<List<Long>> since = new ArrayList<>();
    private final boolean[] inFlight;
    private final VerifyBlock format = new VerifyBlock();
    private long version;
    private long acknowledged;
    private long flushes;
    private long fuaWrites;

    public DurabilityModel(int nsid, long base, int blocks, int bs) {
        if (bs < 512 || bs % 8 != 0) throw new IllegalArgumentException("block size " + bs);
        this.nsid = nsid;
        this.base = base;
        this.blocks = blocks;
        this.bs = bs;
        this.durable = new long[blocks];
        this.lastAcked = new long[blocks];
        this.inFlight = new boolean[blocks];
        for (int b = 0; b < blocks; b++) since.add(new ArrayList<>());
    }

    public int nsid() {
        return nsid;
    }

    public long base() {
        return base;
    }

    public int blocks() {
        return blocks;
    }

    public int blockSize() {
        return bs;
    }

    public synchronized long acknowledged() {
        return acknowledged;
    }

    public synchronized long flushes() {
        return flushes;
    }

    public synchronized long fuaWrites() {
        return fuaWrites;
    }

    /** Claims n blocks that no write in flight touches and a new version for them: {first block, version}, or null. */
    public synchronized long[] startWrite(SplittableRandom rnd, int n) {
        for (int attempt = 0; attempt < 20; attempt++) {
            int first = rnd.nextInt(blocks - n + 1);
            boolean free = true;
            for (int b = first; b < first + n && free; b++) free = !inFlight[b];
            if (!free) continue;
            long v = ++version;
            for (int b = first; b < first + n; b++) {
                inFlight[b] = true;
                since.get(b).add(v);
            }
            return new long[] {first, v};
        }
        return null;
    }

    /** A write ended; an acknowledged FUA write is durable at once. */
    public synchronized void endWrite(int first, int n, long v, boolean fua, boolean acked) {
        for (int b = first; b < first + n; b++) {
            inFlight[b] = false;
            if (acked) {
                lastAcked[b] = v;
                if (fua) makeDurable(b, v);
            }
        }
        if (acked) {
            acknowledged++;
            if (fua) fuaWrites++;
        }
    }

    /** Taken when a Flush is sent: what it will make durable once it completes. */
    public synchronized long[] flushSnapshot() {
        return lastAcked.clone();
    }

    public synchronized void flushDone(long[] snapshot) {
        flushes++;
        for (int b = 0; b < blocks; b++) makeDurable(b, snapshot[b]);
    }

    private void makeDurable(int b, long v) {
        if (v <= durable[b]) return;
        durable[b] = v;
        since.get(b).removeIf(x -> x < v);
    }

    /** Fills one block (its LBA {@code block}) of version v at {@code at} of {@code buf}. */
    public synchronized void fill(ByteBuf buf, int at, long block, long v) {
        format.fill(buf.slice(at, bs), bs, nsid, block * bs, v);
    }

    /**
     * Checks every block of the region (read into {@code all}) against the model and takes what is there
     * as the new durable state; a violation throws with the block, what it holds and what was allowed.
     */
    public synchronized void verifyAndRebase(ByteBuf all, String when) {
        for (int b = 0; b < blocks; b++) {
            long v = versionIn(all, b * bs, base + b, when);
            if (v != durable[b] && !since.get(b).contains(v)) {
                throw new IllegalStateException(when + ": block " + (base + b) + " holds version " + v
                        + "; durable was " + durable[b] + ", written since " + since.get(b));
            }
            durable[b] = v;
            lastAcked[b] = v;
            version = Math.max(version, v);
            since.get(b).clear();
        }
    }

    /** The version a block holds (0: never written), or an exception for a torn or misplaced block. */
    private long versionIn(ByteBuf buf, int at, long block, String when) {
        ByteBuf b = buf.slice(at, bs);
        String bad = format.check(b, bs, nsid, block * bs);
        if (bad == null) return VerifyBlock.seed(b);
        if (b.getIntLE(0) == 0) { // no header: never written, unless something else is there
            for (int i = 0; i < bs; i += 8) {
                if (b.getLongLE(i) != 0) throw new IllegalStateException(when + ": block " + block + " is partly zero");
            }
            return 0;
        }
        throw new IllegalStateException(when + ": block " + block + " " + bad);
    }

    /** Saves the model durably (temp file, fsync, rename): it must outlive the crash it describes. */
    public synchronized void save(Path file) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (OutputStream os = Files.newOutputStream(tmp);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(os))) {
            out.writeInt(MAGIC);
            out.writeInt(nsid);
            out.writeLong(base);
            out.writeInt(blocks);
            out.writeInt(bs);
            out.writeLong(version);
            for (int b = 0; b < blocks; b++) {
                out.writeLong(durable[b]);
                out.writeInt(since.get(b).size());
                for (long v : since.get(b)) out.writeLong(v);
            }
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    public static DurabilityModel load(Path file) throws IOException {
        try (InputStream is = Files.newInputStream(file);
                DataInputStream in = new DataInputStream(new BufferedInputStream(is))) {
            if (in.readInt() != MAGIC) throw new IOException(file + " is not a jbof durability model");
            DurabilityModel m = new DurabilityModel(in.readInt(), in.readLong(), in.readInt(), in.readInt());
            m.version = in.readLong();
            for (int b = 0; b < m.blocks; b++) {
                m.durable[b] = in.readLong();
                m.lastAcked[b] = m.durable[b];
                int n = in.readInt();
                for (int i = 0; i < n; i++) m.since.get(b).add(in.readLong());
            }
            return m;
        }
    }
}
