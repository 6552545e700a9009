package io.jbof.initiator;

import io.netty.buffer.ByteBuf;
import java.util.zip.CRC32C;

/**
 * Self-describing block contents for --verify crc32c, in the spirit of fio's verify headers: a magic,
 * the CRC32C of everything after the first 8 bytes, the byte offset the block was written to (a
 * misplaced write fails), the namespace, and a seed from which the payload is generated. Used by
 * {@code jbof bench --verify} and, with a block's version as its seed, by {@code jbof durability}.
 * One instance per thread (it keeps a CRC32C).
 */
public final class VerifyBlock {
    static final int MAGIC = 0x4a425646; // "JBVF"
    private static final int HEADER = 32;
    private final CRC32C crc = new CRC32C();

    /** Fills {@code len} bytes of {@code b} from index 0 for a write at {@code offset} of namespace {@code nsid}. */
    public void fill(ByteBuf b, int len, int nsid, long offset, long seed) {
        b.setIntLE(0, MAGIC);
        b.setLongLE(8, offset);
        b.setLongLE(16, seed);
        b.setIntLE(24, nsid);
        b.setIntLE(28, len);
        long x = seed | 1;
        int i = HEADER;
        for (; i + 8 <= len; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.setLongLE(i, x);
        }
        for (; i < len; i++) b.setByte(i, (int) x);
        b.setIntLE(4, checksum(b, len));
    }

    /** The seed a block was filled with (for {@code jbof durability}: its version). */
    public static long seed(ByteBuf b) {
        return b.getLongLE(16);
    }

    /** Null when the block read at {@code offset} is the one written there; otherwise what is wrong. */
    public String check(ByteBuf b, int len, int nsid, long offset) {
        int magic = b.getIntLE(0);
        if (magic != MAGIC) return magic == 0 ? "never written (zeroes)" : String.format("bad magic 0x%08x", magic);
        long at = b.getLongLE(8);
        if (at != offset || b.getIntLE(24) != nsid) {
            return "holds block " + at / len + " of namespace " + b.getIntLE(24) + " (written to offset " + at + ")";
        }
        if (b.getIntLE(28) != len) return "block length " + b.getIntLE(28) + ", expected " + len;
        int want = b.getIntLE(4);
        int got = checksum(b, len);
        return want == got ? null : String.format("is torn: crc32c 0x%08x, header says 0x%08x", got, want);
    }

    private int checksum(ByteBuf b, int len) {
        crc.reset();
        if (b.hasMemoryAddress() || b.nioBufferCount() == 1) {
            crc.update(b.nioBuffer(8, len - 8));
        } else {
            for (int i = 8; i < len; i++) crc.update(b.getByte(i));
        }
        return (int) crc.getValue();
    }
}
