package io.jbof.target.metrics;

import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;

/**
 * What one namespace served, per operation: commands, bytes, latency (sum and histogram buckets) and
 * failures by status. Each event loop writes its own row ({@link Stripes}) with plain stores; a scrape
 * sums the rows. A row is made the first time a loop serves the namespace, never per I/O.
 */
public final class IoStats {
    /** The operations counted, by their label. */
    public static final String[] OPS = {"read", "write", "flush", "write_zeroes", "dataset_management"};

    public static final int READ = 0;
    public static final int WRITE = 1;
    public static final int NONE = -1;

    /** Latency bucket upper bounds, seconds (the last bucket, +Inf, is implied). */
    public static final double[] BOUNDS = {
        10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1.0
    };

    private static final long[] BOUNDS_NANOS = new long[BOUNDS.length];

    static {
        for (int i = 0; i < BOUNDS.length; i++) BOUNDS_NANOS[i] = Math.round(BOUNDS[i] * 1e9);
    }

    public static final int BUCKETS = BOUNDS.length + 1;
    /** Per op: commands, bytes, latency sum (ns), failed commands, then the buckets. */
    private static final int COMMANDS = 0;

    private static final int BYTES = 1;
    private static final int LATENCY_SUM = 2;
    private static final int FAILED = 3;
    private static final int FIRST_BUCKET = 4;
    private static final int PER_OP = FIRST_BUCKET + BUCKETS;
    private static final int STATUS_BASE = OPS.length * PER_OP;
    private static final int WIDTH = STATUS_BASE + StatusSlots.COUNT;

    private final long[][] rows = new long[Stripes.MAX][];

    /** The op index of an NVM opcode, or {@link #NONE}. */
    public static int op(int opcode) {
        switch (opcode) {
            case Opcodes.IO_READ:
                return READ;
            case Opcodes.IO_WRITE:
                return WRITE;
            case Opcodes.IO_FLUSH:
                return 2;
            case Opcodes.IO_WRITE_ZEROES:
                return 3;
            case Opcodes.IO_DATASET_MANAGEMENT:
                return 4;
            default:
                return NONE;
        }
    }

    /** One completed command, from the loop that owns {@code stripe}. */
    public void record(int stripe, int op, long bytes, long nanos, int status) {
        long[] row = rows[stripe];
        if (row == null) rows[stripe] = row = new long[WIDTH];
        int at = op * PER_OP;
        row[at + COMMANDS]++;
        row[at + LATENCY_SUM] += nanos;
        int b = 0;
        while (b < BOUNDS_NANOS.length && nanos > BOUNDS_NANOS[b]) b++;
        row[at + FIRST_BUCKET + b]++;
        if (Status.isSuccess(status)) {
            row[at + BYTES] += bytes;
        } else {
            row[at + FAILED]++;
            row[STATUS_BASE + StatusSlots.slot(status)]++;
        }
    }

    /** Sums of every row: a copy a scrape reads at leisure. */
    public Snapshot snapshot() {
        long[] sum = new long[WIDTH];
        for (long[] row : rows) {
            if (row == null) continue;
            for (int i = 0; i < WIDTH; i++) sum[i] += row[i];
        }
        return new Snapshot(sum);
    }

    /** A namespace's totals at one moment. */
    public static final class Snapshot {
        private final long[] v;

        Snapshot(long[] v) {
            this.v = v;
        }

        public long commands(int op) {
            return v[op * PER_OP + COMMANDS];
        }

        public long bytes(int op) {
            return v[op * PER_OP + BYTES];
        }

        public long failed(int op) {
            return v[op * PER_OP + FAILED];
        }

        public double latencySeconds(int op) {
            return v[op * PER_OP + LATENCY_SUM] / 1e9;
        }

        /** Commands per bucket (not cumulative), the last one +Inf. */
        public long[] buckets(int op) {
            long[] b = new long[BUCKETS];
            System.arraycopy(v, op * PER_OP + FIRST_BUCKET, b, 0, BUCKETS);
            return b;
        }

        /** Failed commands with the status of slot {@code slot} ({@link StatusSlots}). */
        public long withStatus(int slot) {
            return v[STATUS_BASE + slot];
        }
    }
}
