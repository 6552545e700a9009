package io.jbof.transport.tcp;

import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

/**
 * A region of a shared, long-lived file sent with FileChannel.transferTo (sendfile). Unlike Netty's
 * DefaultFileRegion, releasing it never closes the file: the namespace owns the channel.
 */
final class FileSlice extends AbstractReferenceCounted implements FileRegion {
    private final FileChannel file;
    private final long position;
    private final long count;
    private long transferred;

    FileSlice(FileChannel file, long position, long count) {
        this.file = file;
        this.position = position;
        this.count = count;
    }

    @Override public long position() { return position; }
    @Override @Deprecated public long transfered() { return transferred; }
    @Override public long transferred() { return transferred; }
    @Override public long count() { return count; }

    @Override
    public long transferTo(WritableByteChannel target, long alreadyTransferred) throws IOException {
        long remaining = count - alreadyTransferred;
        if (remaining <= 0) return 0;
        long n = file.transferTo(position + alreadyTransferred, remaining, target);
        if (n == 0 && position + alreadyTransferred >= file.size()) {
            throw new IOException("file ended at " + file.size() + " before region end " + (position + count));
        }
        transferred += n;
        return n;
    }

    @Override protected void deallocate() { }
    @Override public FileSlice retain() { super.retain(); return this; }
    @Override public FileSlice retain(int increment) { super.retain(increment); return this; }
    @Override public FileSlice touch() { return this; }
    @Override public FileSlice touch(Object hint) { return this; }
}
