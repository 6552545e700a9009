package io.jbof.bench;

import java.util.Locale;

/** fio's rw= values: direction (read, write or both) and order (sequential or random). */
enum RwMode {
    READ(true, false, false),
    WRITE(false, true, false),
    RW(true, true, false),
    RANDREAD(true, false, true),
    RANDWRITE(false, true, true),
    RANDRW(true, true, true);

    final boolean reads;
    final boolean writes;
    final boolean random;

    RwMode(boolean reads, boolean writes, boolean random) {
        this.reads = reads;
        this.writes = writes;
        this.random = random;
    }

    static RwMode parse(String s) {
        switch (s.toLowerCase(Locale.ROOT)) {
            case "read":
                return READ;
            case "write":
                return WRITE;
            case "rw":
            case "readwrite":
                return RW;
            case "randread":
                return RANDREAD;
            case "randwrite":
                return RANDWRITE;
            case "randrw":
                return RANDRW;
            default:
                throw new IllegalArgumentException(
                        "--rw '" + s + "': use read, write, rw, randread, randwrite or randrw");
        }
    }

    String fioName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
