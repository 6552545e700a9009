package io.jbof.fuse.kernel;

import static io.jbof.fuse.kernel.FuseAbi.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request slot: the buffer the kernel's request is read into, the reply header and small reply
 * bodies, and the iovec that sends a reply with read data in one writev straight from the buffer the
 * NVMe read filled. A slot is owned by its request from read(2) until its reply is written; then it
 * goes back to the session's pool. Native memory, allocated once per slot (no per-request allocation).
 */
public final class FuseRequest {
    private static final Logger log = LoggerFactory.getLogger(FuseRequest.class);
    /** Reply bodies other than read data: the largest is a directory listing of one page, capped here. */
    static final int SMALL_REPLY = 8192;

    private final FuseSession session;
    private final ByteBuf in;
    private final long inAddr;
    private final ByteBuf out;
    private final long outAddr;
    private final ByteBuf iov;
    private final long iovAddr;
    private int fd;
    private int opcode;
    private long unique;
    private int length;
    private boolean replied;
    /** Per-slot state an operations table may keep across the requests it serves (allocated once). */
    public Object attachment;

    FuseRequest(FuseSession session, int maxIo) {
        this.session = session;
        UnpooledByteBufAllocator a = UnpooledByteBufAllocator.DEFAULT;
        in = a.directBuffer(maxIo + 4096, maxIo + 4096);
        out = a.directBuffer(OUT_HEADER + SMALL_REPLY, OUT_HEADER + SMALL_REPLY);
        iov = a.directBuffer(32, 32);
        if (!in.hasMemoryAddress())
            throw new IllegalStateException("direct buffers without an address: Netty cannot use sun.misc.Unsafe here");
        inAddr = in.memoryAddress();
        outAddr = out.memoryAddress();
        iovAddr = iov.memoryAddress();
    }

    int capacity() {
        return in.capacity();
    }

    long inAddress() {
        return inAddr;
    }

    /** Takes the header of a request of {@code n} bytes just read from {@code fd}. */
    void received(int fd, int n) {
        this.fd = fd;
        this.length = n;
        this.opcode = in.getIntLE(IN_OPCODE);
        this.unique = in.getLongLE(IN_UNIQUE);
        this.replied = false;
    }

    public int opcode() {
        return opcode;
    }

    public long unique() {
        return unique;
    }

    public long nodeId() {
        return in.getLongLE(IN_NODEID);
    }

    public int uid() {
        return in.getIntLE(IN_UID);
    }

    public int gid() {
        return in.getIntLE(IN_GID);
    }

    public int pid() {
        return in.getIntLE(IN_PID);
    }

    int length() {
        return length;
    }

    /** A field of the request body (after fuse_in_header). */
    int bodyInt(int at) {
        return in.getIntLE(IN_HEADER + at);
    }

    long bodyLong(int at) {
        return in.getLongLE(IN_HEADER + at);
    }

    /** The NUL-terminated name that is the body of LOOKUP and friends. */
    String bodyName() {
        int start = IN_HEADER;
        int end = start;
        while (end < length && in.getByte(end) != 0) end++;
        return in.toString(start, end - start, StandardCharsets.UTF_8);
    }

    /** WRITE's data as readable bytes of this slot's buffer (valid until the reply). */
    public ByteBuf writeData(int size) {
        int at = IN_HEADER + WRITE_IN;
        return in.setIndex(at, at + size);
    }

    /** Where READ's data goes: an empty buffer with room for {@code size} bytes, filled from its writer index. */
    public ByteBuf readBuffer() {
        return in.setIndex(0, 0);
    }

    /** Replies with the first {@code n} bytes of {@link #readBuffer()}: one writev, header and data. */
    public void replyRead(int n) {
        header(OUT_HEADER + n, 0);
        iov.setLongLE(0, outAddr);
        iov.setLongLE(8, OUT_HEADER);
        iov.setLongLE(16, inAddr);
        iov.setLongLE(24, n);
        send(LibC.Holder.LIBC.writev(fd, iovAddr, n == 0 ? 1 : 2), OUT_HEADER + n);
    }

    public void replyError(int errno) {
        header(OUT_HEADER, -errno);
        sendSmall(0);
    }

    public void replyOk() {
        header(OUT_HEADER, 0);
        sendSmall(0);
    }

    public void replyWrite(int written) {
        out.setIntLE(OUT_HEADER, written);
        out.setIntLE(OUT_HEADER + 4, 0);
        replyBody(WRITE_OUT);
    }

    public void replyOpen(long fh, int openFlags) {
        out.setLongLE(OUT_HEADER, fh);
        out.setIntLE(OUT_HEADER + 8, openFlags);
        out.setIntLE(OUT_HEADER + 12, 0);
        replyBody(OPEN_OUT);
    }

    public void replyEntry(FuseAttr a, long validSeconds) {
        putEntry(OUT_HEADER, a, validSeconds);
        replyBody(ENTRY_OUT);
    }

    public void replyAttr(FuseAttr a, long validSeconds) {
        out.setLongLE(OUT_HEADER, validSeconds);
        out.setIntLE(OUT_HEADER + 8, 0);
        out.setIntLE(OUT_HEADER + 12, 0);
        putAttr(OUT_HEADER + 16, a);
        replyBody(ATTR_OUT);
    }

    /** fuse_kstatfs. */
    public void replyStatfs(
            long blocks, long bfree, long bavail, long files, long ffree, int bsize, int namelen, int frsize) {
        out.setZero(OUT_HEADER, STATFS_OUT);
        out.setLongLE(OUT_HEADER, blocks);
        out.setLongLE(OUT_HEADER + 8, bfree);
        out.setLongLE(OUT_HEADER + 16, bavail);
        out.setLongLE(OUT_HEADER + 24, files);
        out.setLongLE(OUT_HEADER + 32, ffree);
        out.setIntLE(OUT_HEADER + 40, bsize);
        out.setIntLE(OUT_HEADER + 44, namelen);
        out.setIntLE(OUT_HEADER + 48, frsize);
        replyBody(STATFS_OUT);
    }

    /** A directory listing built into the reply buffer; {@link Directory#reply()} sends it. */
    public Directory directory(int size, boolean plus) {
        return new Directory(Math.min(size, SMALL_REPLY), plus);
    }

    /** fuse_dirent (or fuse_direntplus) records, each padded to 8 bytes, as many as fit. */
    public final class Directory {
        private final int limit;
        private final boolean plus;
        private int used;

        private Directory(int limit, boolean plus) {
            this.limit = limit;
            this.plus = plus;
        }

        /**
         * Adds an entry whose successor is at index {@code next}; false when it did not fit (stop there).
         * With READDIRPLUS, {@code attr} null means "no entry" (".", ".."): the kernel looks those up itself.
         */
        public boolean add(String name, int type, long ino, long next, FuseAttr attr, long validSeconds) {
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            int rec = (DIRENT + n.length + 7) & ~7;
            int size = rec + (plus ? ENTRY_OUT : 0);
            if (used + size > limit) return false;
            int at = OUT_HEADER + used;
            if (plus) {
                if (attr != null) {
                    putEntry(at, attr, validSeconds);
                } else {
                    out.setZero(at, ENTRY_OUT);
                }
                at += ENTRY_OUT;
            }
            out.setZero(at, rec);
            out.setLongLE(at, ino);
            out.setLongLE(at + 8, next);
            out.setIntLE(at + 16, n.length);
            out.setIntLE(at + 20, type);
            out.setBytes(at + DIRENT, n);
            used += size;
            return true;
        }

        public void reply() {
            replyBody(used);
        }
    }

    private void putEntry(int at, FuseAttr a, long validSeconds) {
        out.setLongLE(at, a.ino()); // nodeid: the inode number is the node id here
        out.setLongLE(at + 8, 0); // generation
        out.setLongLE(at + 16, validSeconds); // entry_valid
        out.setLongLE(at + 24, validSeconds); // attr_valid
        out.setIntLE(at + 32, 0);
        out.setIntLE(at + 36, 0);
        putAttr(at + 40, a);
    }

    private void putAttr(int at, FuseAttr a) {
        out.setZero(at, ATTR);
        out.setLongLE(at, a.ino());
        out.setLongLE(at + 8, a.size());
        out.setLongLE(at + 16, (a.size() + 511) / 512);
        out.setLongLE(at + 24, a.timeSeconds());
        out.setLongLE(at + 32, a.timeSeconds());
        out.setLongLE(at + 40, a.timeSeconds());
        out.setIntLE(at + 60, a.mode());
        out.setIntLE(at + 64, a.nlink());
        out.setIntLE(at + 68, a.uid());
        out.setIntLE(at + 72, a.gid());
        out.setIntLE(at + 80, a.blockSize());
    }

    /** Sends the fuse_init_out built by the session. */
    void replyInit(
            int major,
            int minor,
            int maxReadahead,
            int flags,
            int maxBackground,
            int congestion,
            int maxWrite,
            int maxPages) {
        out.setZero(OUT_HEADER, INIT_OUT);
        out.setIntLE(OUT_HEADER, major);
        out.setIntLE(OUT_HEADER + 4, minor);
        out.setIntLE(OUT_HEADER + 8, maxReadahead);
        out.setIntLE(OUT_HEADER + 12, flags);
        out.setShortLE(OUT_HEADER + 16, maxBackground);
        out.setShortLE(OUT_HEADER + 18, congestion);
        out.setIntLE(OUT_HEADER + 20, maxWrite);
        out.setIntLE(OUT_HEADER + 24, 1); // time_gran: 1 ns
        out.setShortLE(OUT_HEADER + 28, maxPages);
        replyBody(INIT_OUT);
    }

    private void replyBody(int bodyBytes) {
        header(OUT_HEADER + bodyBytes, 0);
        sendSmall(bodyBytes);
    }

    private void header(int len, int error) {
        if (replied) throw new IllegalStateException("request " + unique + " (opcode " + opcode + ") answered twice");
        replied = true;
        out.setIntLE(0, len);
        out.setIntLE(4, error);
        out.setLongLE(8, unique);
    }

    private void sendSmall(int bodyBytes) {
        send(LibC.Holder.LIBC.write(fd, outAddr, OUT_HEADER + bodyBytes), OUT_HEADER + bodyBytes);
    }

    private void send(long written, int expected) {
        if (written != expected) {
            int e = written < 0 ? LibC.Holder.errno() : 0;
            // ENOENT: the request was interrupted or the connection aborted meanwhile; nothing waits for it.
            if (e != ENOENT && e != ENODEV) {
                log.warn(
                        "reply to FUSE request {} (opcode {}) not taken: wrote {} of {} bytes, errno {}",
                        unique,
                        opcode,
                        written,
                        expected,
                        e);
            }
        }
        session.finished(this);
    }

    void free() {
        in.release();
        out.release();
        iov.release();
    }
}
