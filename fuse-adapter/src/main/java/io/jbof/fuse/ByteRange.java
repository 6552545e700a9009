package io.jbof.fuse;

/**
 * A byte range of a namespace cut at block boundaries: an optional partial head block, whole blocks in
 * the middle, an optional partial tail block. A range inside one block is a head only. Mutable so one
 * instance per thread serves every request.
 */
final class ByteRange {
    int blockSize;
    /** Head: block, offset of the range inside it, bytes (0 when the range starts on a boundary). */
    long headLba;

    int headOffset;
    int headBytes;
    /** Middle: first whole block, how many, and where it starts in the caller's buffer. */
    long midLba;

    long midBlocks;
    int midBufferOffset;
    /** Tail: block and bytes from its start (0 when the range ends on a boundary). */
    long tailLba;

    int tailBytes;
    int tailBufferOffset;

    ByteRange set(long offset, int length, int blockSize) {
        this.blockSize = blockSize;
        long end = offset + length;
        long first = offset / blockSize;
        long last = (end - 1) / blockSize;
        headOffset = (int) (offset % blockSize);
        headLba = first;
        if (first == last && (headOffset != 0 || length != blockSize)) {
            // Entirely inside one block, not a whole block: a head only.
            headBytes = length;
            midBlocks = 0;
            tailBytes = 0;
            return this;
        }
        headBytes = headOffset == 0 ? 0 : blockSize - headOffset;
        midLba = headBytes == 0 ? first : first + 1;
        midBufferOffset = headBytes;
        int endInBlock = (int) (end % blockSize);
        tailBytes = endInBlock;
        tailLba = last;
        tailBufferOffset = length - tailBytes;
        long midEnd = tailBytes == 0 ? last + 1 : last;
        midBlocks = midEnd - midLba;
        return this;
    }

    boolean aligned() {
        return headBytes == 0 && tailBytes == 0;
    }

    long firstBlock() {
        return headBytes != 0 ? headLba : midLba;
    }

    long lastBlock() {
        if (tailBytes != 0) return tailLba;
        return midBlocks > 0 ? midLba + midBlocks - 1 : headLba;
    }
}
