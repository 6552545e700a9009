package io.jbof.target.transport.tcp;

import io.netty.channel.DefaultFileRegion;
import java.nio.channels.FileChannel;

/**
 * A region of a shared, long-lived file, sent with sendfile: a DefaultFileRegion (so the native epoll
 * transport takes its sendfile path and NIO its transferTo path) whose release never closes the file,
 * because the namespace owns the channel.
 */
final class FileSlice extends DefaultFileRegion {
    FileSlice(FileChannel file, long position, long count) {
        super(file, position, count);
    }

    @Override
    protected void deallocate() {
        // The namespace's FileChannel stays open; DefaultFileRegion would close it here.
    }
}
