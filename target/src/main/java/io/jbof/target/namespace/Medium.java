package io.jbof.target.namespace;

import java.io.IOException;

/**
 * What a namespace's blocks live on, for what is not a plain read or write: zeroing a range and giving
 * a range back. A regular file does both by fallocate ({@link FileSpace}), a block device by ioctl
 * ({@link BlockDevice}), as Linux's nvmet file and bdev backends do.
 */
interface Medium extends AutoCloseable {
    /** Zeroes [position, position+length) in place; false when this medium cannot (the caller writes zeroes). */
    boolean zeroRange(long position, long length) throws IOException;

    /** Gives [position, position+length) back to the medium; false when it cannot (the caller writes zeroes). */
    boolean deallocate(long position, long length) throws IOException;

    /** Whether deallocated blocks read back as zeroes (Identify Namespace DLFEAT). */
    boolean deallocatedReadZeroes();

    @Override
    void close();
}
