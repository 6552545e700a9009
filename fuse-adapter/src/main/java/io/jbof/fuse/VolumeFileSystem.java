package io.jbof.fuse;

import com.kenai.jffi.MemoryIO;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import jnr.constants.platform.Errno;
import jnr.ffi.Pointer;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The FUSE file system: a root directory with one regular file per namespace, named {@code ns<NSID>},
 * its size the namespace's capacity. read/write map to NVMe Read/Write (unaligned edges by read-modify-
 * write), fsync and close-with-writes to Flush, fallocate punch-hole to Deallocate and zero-range to
 * Write Zeroes. The file set and sizes are fixed: create, unlink and truncate to another size refuse.
 */
public final class VolumeFileSystem extends FuseStubFS {
    private static final Logger log = LoggerFactory.getLogger(VolumeFileSystem.class);
    // Linux open(2) and fallocate(2) flag values.
    private static final int O_ACCMODE = 3;
    private static final int O_RDONLY = 0;
    private static final int O_DSYNC = 010000;
    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    private static final int FALLOC_FL_ZERO_RANGE = 0x10;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;

    private final String name;
    private final Map<String, NamespaceFile> files = new LinkedHashMap<>();
    private final long mountedAt = System.currentTimeMillis() / 1000;
    private final long uid;
    private final long gid;
    private final CountDownLatch initialized = new CountDownLatch(1);
    /** Set while calls fail, so a dead target logs one line, not one per call; cleared by a success. */
    private final AtomicBoolean failing = new AtomicBoolean();

    public VolumeFileSystem(NvmeController controller) {
        this.name = controller.options().subsystemNqn;
        for (Namespace ns : controller.namespaces()) files.put("/ns" + ns.nsid(), new NamespaceFile(ns));
        com.sun.security.auth.module.UnixSystem me = new com.sun.security.auth.module.UnixSystem();
        this.uid = me.getUid();
        this.gid = me.getGid();
    }

    /** The files by name (without the leading slash), in NSID order. */
    public Map<String, NamespaceFile> files() {
        Map<String, NamespaceFile> out = new LinkedHashMap<>();
        files.forEach((k, v) -> out.put(k.substring(1), v));
        return out;
    }

    /** Counted down when the kernel's FUSE INIT arrived: the mount serves requests from then on. */
    CountDownLatch initialized() { return initialized; }

    @Override
    protected String getFSName() {
        return "jbof";
    }

    @Override
    public Pointer init(Pointer conn) {
        initialized.countDown();
        return null;
    }

    @Override
    public int getattr(String path, FileStat stat) {
        if (path.equals("/")) {
            stat.st_mode.set(S_IFDIR | 0755);
            stat.st_nlink.set(2);
            stat.st_size.set(0);
        } else {
            NamespaceFile f = files.get(path);
            if (f == null) return -Errno.ENOENT.intValue();
            stat.st_mode.set(S_IFREG | (f.readOnly() ? 0444 : 0644));
            stat.st_nlink.set(1);
            stat.st_size.set(f.size());
            stat.st_blksize.set(f.blockSize());
            stat.st_blocks.set((f.size() + 511) / 512);
        }
        stat.st_uid.set(uid);
        stat.st_gid.set(gid);
        for (Timespec t : new Timespec[]{stat.st_atim, stat.st_mtim, stat.st_ctim}) t.tv_sec.set(mountedAt);
        return 0;
    }

    @Override
    public int readdir(String path, Pointer buf, FuseFillDir filler, @off_t long offset, FuseFileInfo fi) {
        if (!path.equals("/")) return -Errno.ENOTDIR.intValue();
        filler.apply(buf, ".", null, 0);
        filler.apply(buf, "..", null, 0);
        for (String f : files.keySet()) filler.apply(buf, f.substring(1), null, 0);
        return 0;
    }

    @Override
    public int open(String path, FuseFileInfo fi) {
        NamespaceFile f = files.get(path);
        if (f == null) return -Errno.ENOENT.intValue();
        if (f.readOnly() && (fi.flags.get() & O_ACCMODE) != O_RDONLY) return -Errno.EROFS.intValue();
        return 0;
    }

    @Override
    public int create(String path, long mode, FuseFileInfo fi) {
        return files.containsKey(path) ? open(path, fi) : -Errno.EPERM.intValue();
    }

    @Override
    public int read(String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
        NamespaceFile f = files.get(path);
        if (f == null) return -Errno.ENOENT.intValue();
        int n = f.clamp(offset, size);
        if (n == 0) return 0;
        try {
            f.read(offset, n, wrap(buf, n));
            failing.set(false);
            return n;
        } catch (IOException | RuntimeException e) {
            return failed("read", path, offset, n, e);
        }
    }

    @Override
    public int write(String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
        NamespaceFile f = files.get(path);
        if (f == null) return -Errno.ENOENT.intValue();
        if (f.readOnly()) return -Errno.EROFS.intValue();
        int n = f.clamp(offset, size);
        if (n == 0) return -Errno.ENOSPC.intValue(); // a block device ends where it ends
        try {
            f.write(offset, n, wrap(buf, n), (fi.flags.get() & O_DSYNC) != 0);
            failing.set(false);
            return n;
        } catch (IOException | RuntimeException e) {
            return failed("write", path, offset, n, e);
        }
    }

    /** The kernel's buffer as a ByteBuf, no copy: the transfer finishes before this call returns. */
    private static ByteBuf wrap(Pointer p, int n) {
        return Unpooled.wrappedBuffer(MemoryIO.getInstance().newDirectByteBuffer(p.address(), n)).clear();
    }

    @Override
    public int flush(String path, FuseFileInfo fi) {
        return sync(path, "flush");
    }

    @Override
    public int fsync(String path, int isdatasync, FuseFileInfo fi) {
        return sync(path, "fsync");
    }

    private int sync(String path, String what) {
        NamespaceFile f = files.get(path);
        if (f == null) return path.equals("/") ? 0 : -Errno.ENOENT.intValue();
        try {
            f.flush();
            return 0;
        } catch (IOException | RuntimeException e) {
            return failed(what, path, 0, 0, e);
        }
    }

    @Override
    public int fallocate(String path, int mode, @off_t long offset, @off_t long length, FuseFileInfo fi) {
        NamespaceFile f = files.get(path);
        if (f == null) return -Errno.ENOENT.intValue();
        if (offset < 0 || length <= 0) return -Errno.EINVAL.intValue();
        if (offset + length > f.size() && (mode & FALLOC_FL_KEEP_SIZE) == 0) return -Errno.ENOSPC.intValue();
        long n = Math.min(length, f.size() - offset);
        if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) return 0; // every block of a namespace is there already
        if (f.readOnly()) return -Errno.EROFS.intValue();
        try {
            if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
                if (n > 0) f.punchHole(offset, n);
            } else if ((mode & ~FALLOC_FL_KEEP_SIZE) == FALLOC_FL_ZERO_RANGE) {
                if (n > 0) f.zero(offset, n);
            } else {
                return -Errno.EOPNOTSUPP.intValue();
            }
            return 0;
        } catch (IOException | RuntimeException e) {
            return failed("fallocate", path, offset, n, e);
        }
    }

    @Override
    public int truncate(String path, @off_t long size) {
        NamespaceFile f = files.get(path);
        if (f == null) return -Errno.ENOENT.intValue();
        if (size == f.size()) return 0;
        log.warn("{}: truncate to {} bytes refused: a namespace has a fixed size of {} bytes (with dd, use conv=notrunc)",
                path.substring(1), size, f.size());
        return -Errno.EPERM.intValue();
    }

    @Override
    public int ftruncate(String path, @off_t long size, FuseFileInfo fi) {
        return truncate(path, size);
    }

    @Override
    public int utimens(String path, Timespec[] timespec) {
        return files.containsKey(path) || path.equals("/") ? 0 : -Errno.ENOENT.intValue(); // times are not kept
    }

    @Override
    public int statfs(String path, Statvfs st) {
        long bytes = 0;
        int bs = 4096;
        for (NamespaceFile f : files.values()) {
            bytes += f.size();
            bs = f.blockSize();
        }
        st.f_bsize.set(bs);
        st.f_frsize.set(bs);
        st.f_blocks.set(bytes / bs);
        st.f_bfree.set(0);   // every byte belongs to a file already
        st.f_bavail.set(0);
        st.f_files.set(files.size());
        st.f_ffree.set(0);
        st.f_favail.set(0);
        st.f_namemax.set(255);
        return 0;
    }

    private int failed(String what, String path, long offset, long length, Throwable e) {
        int errno = ErrnoMapping.of(e);
        if (errno != -Errno.EIO.intValue()) {
            log.debug("{} {} at {} (+{}): {}", what, path, offset, length, e.getMessage());
        } else if (failing.compareAndSet(false, true)) {
            log.error("{}: {} at offset {} ({} bytes) failed, returning EIO: {}{}", name + path, what, offset, length, e.getMessage(),
                    " (further failures are not logged until a call succeeds)");
        }
        return errno;
    }
}
