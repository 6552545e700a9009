package io.jbof.fuse;

import static io.jbof.fuse.kernel.FuseAbi.*;

import com.sun.security.auth.module.UnixSystem;
import io.jbof.fuse.kernel.FuseAttr;
import io.jbof.fuse.kernel.FuseOperations;
import io.jbof.fuse.kernel.FuseRequest;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file system: a root directory with one regular file per namespace, named {@code ns<NSID>}, its
 * size the namespace's capacity. read/write map to NVMe Read/Write (whole blocks asynchronously, the
 * reply sent from the initiator's completion; unaligned edges by read-modify-write on a small pool),
 * fsync and close-with-writes to Flush, fallocate punch-hole to Deallocate and zero-range to Write
 * Zeroes. The file set and sizes are fixed: create, unlink and truncate to another size refuse.
 * Node ids: 1 the root, 2.. the files in NSID order.
 */
public final class VolumeFileSystem implements FuseOperations {
    private static final Logger log = LoggerFactory.getLogger(VolumeFileSystem.class);
    /** How long the kernel may cache names and attributes: the file set and sizes never change. */
    private static final long VALID_SECONDS = 3600;

    private final String name;
    private final Map<String, NamespaceFile> files = new LinkedHashMap<>();
    private final List<NamespaceFile> byNode = new ArrayList<>();
    private final List<String> names = new ArrayList<>();
    private final long mountedAt = System.currentTimeMillis() / 1000;
    private final int uid;
    private final int gid;
    private final boolean directIo;
    /** Unaligned reads and writes (read-modify-write waits for the edge blocks) and fallocate run here. */
    private final ExecutorService edges;
    /** Set while calls fail, so a dead target logs one line, not one per call; cleared by a success. */
    private final AtomicBoolean failing = new AtomicBoolean();

    public VolumeFileSystem(NvmeController controller, boolean directIo) {
        this.name = controller.options().subsystemNqn;
        this.directIo = directIo;
        for (Namespace ns : controller.namespaces()) {
            NamespaceFile f = new NamespaceFile(ns);
            files.put("ns" + ns.nsid(), f);
            byNode.add(f);
            names.add("ns" + ns.nsid());
        }
        UnixSystem me = new UnixSystem();
        this.uid = (int) me.getUid();
        this.gid = (int) me.getGid();
        AtomicInteger n = new AtomicInteger();
        this.edges = new ThreadPoolExecutor(4, 4, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "fuse-edges-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        ((ThreadPoolExecutor) edges).allowCoreThreadTimeOut(true);
    }

    /** The files by name, in NSID order. */
    public Map<String, NamespaceFile> files() {
        return files;
    }

    /** Stops the edge pool; requests still queued there fail. */
    public void shutdown() {
        edges.shutdownNow();
    }

    private NamespaceFile file(long node) {
        long i = node - 2;
        return i >= 0 && i < byNode.size() ? byNode.get((int) i) : null;
    }

    private FuseAttr rootAttr() {
        return new FuseAttr(ROOT_ID, 0, S_IFDIR | 0755, 2, uid, gid, 4096, mountedAt);
    }

    private FuseAttr attr(long node, NamespaceFile f) {
        return new FuseAttr(
                node, f.size(), S_IFREG | (f.readOnly() ? 0444 : 0644), 1, uid, gid, f.blockSize(), mountedAt);
    }

    @Override
    public void lookup(FuseRequest r, long parent, String n) {
        if (parent != ROOT_ID) {
            r.replyError(ENOTDIR);
            return;
        }
        int i = names.indexOf(n);
        if (i < 0) r.replyError(ENOENT);
        else r.replyEntry(attr(i + 2, byNode.get(i)), VALID_SECONDS);
    }

    @Override
    public void getattr(FuseRequest r, long node) {
        if (node == ROOT_ID) {
            r.replyAttr(rootAttr(), VALID_SECONDS);
            return;
        }
        NamespaceFile f = file(node);
        if (f == null) r.replyError(ENOENT);
        else r.replyAttr(attr(node, f), VALID_SECONDS);
    }

    @Override
    public void setattr(FuseRequest r, long node, int valid, long size) {
        NamespaceFile f = file(node);
        if (f == null) {
            r.replyError(node == ROOT_ID ? EPERM : ENOENT);
            return;
        }
        if ((valid & (FATTR_MODE | FATTR_UID | FATTR_GID)) != 0) {
            r.replyError(EPERM); // a namespace's owner and mode are the mount's
            return;
        }
        if ((valid & FATTR_SIZE) != 0 && size != f.size()) {
            log.warn(
                    "{}: truncate to {} bytes refused: a namespace has a fixed size of {} bytes (with dd, use conv=notrunc)",
                    names.get((int) node - 2),
                    size,
                    f.size());
            r.replyError(EPERM);
            return;
        }
        r.replyAttr(attr(node, f), VALID_SECONDS); // times are not kept
    }

    @Override
    public void open(FuseRequest r, long node, int flags) {
        NamespaceFile f = file(node);
        if (f == null) {
            r.replyError(node == ROOT_ID ? EISDIR : ENOENT);
            return;
        }
        if (f.readOnly() && (flags & O_ACCMODE) != O_RDONLY) {
            r.replyError(EROFS);
            return;
        }
        // Parallel direct writes: the edge-block locks make concurrent writers to one file safe.
        r.replyOpen(0, directIo ? FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES : 0);
    }

    @Override
    public void read(FuseRequest r, long node, long offset, int size) {
        NamespaceFile f = file(node);
        if (f == null) {
            r.replyError(ENOENT);
            return;
        }
        int n = f.clamp(offset, size);
        if (n == 0) {
            r.replyRead(0);
            return;
        }
        f.readAsync(offset, n, r.readBuffer(), edges).whenComplete((v, e) -> {
            if (e == null) {
                succeeded();
                r.replyRead(n);
            } else {
                r.replyError(failed("read", node, offset, n, e));
            }
        });
    }

    @Override
    public void write(FuseRequest r, long node, long offset, int size, int flags) {
        NamespaceFile f = file(node);
        if (f == null) {
            r.replyError(ENOENT);
            return;
        }
        if (f.readOnly()) {
            r.replyError(EROFS);
            return;
        }
        int n = f.clamp(offset, size);
        if (n == 0) {
            r.replyError(ENOSPC); // a block device ends where it ends
            return;
        }
        if (!(r.attachment instanceof NamespaceFile.WriteState)) r.attachment = new NamespaceFile.WriteState();
        f.writeAsync(offset, n, r.writeData(n), (flags & O_DSYNC) != 0, (NamespaceFile.WriteState) r.attachment, edges)
                .whenComplete((v, e) -> {
                    if (e == null) {
                        succeeded();
                        r.replyWrite(n);
                    } else {
                        r.replyError(failed("write", node, offset, n, e));
                    }
                });
    }

    @Override
    public void flush(FuseRequest r, long node) {
        sync(r, node, "flush");
    }

    @Override
    public void fsync(FuseRequest r, long node) {
        sync(r, node, "fsync");
    }

    private void sync(FuseRequest r, long node, String what) {
        NamespaceFile f = file(node);
        if (f == null) {
            if (node == ROOT_ID) r.replyOk();
            else r.replyError(ENOENT);
            return;
        }
        reply(r, f.flushAsync(), what, node, 0, 0);
    }

    @Override
    public void fallocate(FuseRequest r, long node, int mode, long offset, long length) {
        NamespaceFile f = file(node);
        if (f == null) {
            r.replyError(ENOENT);
            return;
        }
        if (offset < 0 || length <= 0) {
            r.replyError(EINVAL);
            return;
        }
        if (offset + length > f.size() && (mode & FALLOC_FL_KEEP_SIZE) == 0) {
            r.replyError(ENOSPC);
            return;
        }
        long n = Math.min(length, f.size() - offset);
        if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) {
            r.replyOk(); // every block of a namespace is there already
            return;
        }
        if (f.readOnly()) {
            r.replyError(EROFS);
            return;
        }
        boolean punch = mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
        if (!punch && (mode & ~FALLOC_FL_KEEP_SIZE) != FALLOC_FL_ZERO_RANGE) {
            r.replyError(EOPNOTSUPP);
            return;
        }
        CompletableFuture<Void> done = n <= 0
                ? CompletableFuture.completedFuture(null)
                : CompletableFuture.runAsync(
                        () -> {
                            try {
                                if (punch) f.punchHole(offset, n);
                                else f.zero(offset, n);
                            } catch (IOException e) {
                                throw new CompletionException(e);
                            }
                        },
                        edges);
        reply(r, done, "fallocate", node, offset, n);
    }

    private void reply(FuseRequest r, CompletableFuture<Void> f, String what, long node, long offset, long n) {
        f.whenComplete((v, e) -> {
            if (e == null) {
                succeeded();
                r.replyOk();
            } else {
                r.replyError(failed(what, node, offset, n, e));
            }
        });
    }

    @Override
    public void statfs(FuseRequest r, long node) {
        long bytes = 0;
        int bs = 4096;
        for (NamespaceFile f : byNode) {
            bytes += f.size();
            bs = f.blockSize();
        }
        // Every byte belongs to a file already: nothing free.
        r.replyStatfs(bytes / bs, 0, 0, byNode.size(), 0, bs, 255, bs);
    }

    @Override
    public void opendir(FuseRequest r, long node) {
        if (node != ROOT_ID) r.replyError(ENOTDIR);
        else r.replyOpen(0, 0);
    }

    @Override
    public void readdir(FuseRequest r, long node, long offset, int size, boolean plus) {
        if (node != ROOT_ID) {
            r.replyError(ENOTDIR);
            return;
        }
        FuseRequest.Directory d = r.directory(size, plus);
        // Index 0 ".", 1 "..", 2.. the files; each entry's offset is the index of the next.
        for (long i = offset; i < 2 + byNode.size(); i++) {
            boolean added;
            if (i < 2) {
                added = d.add(i == 0 ? "." : "..", DT_DIR, ROOT_ID, i + 1, null, 0);
            } else {
                int k = (int) i - 2;
                added = d.add(names.get(k), DT_REG, k + 2, i + 1, attr(k + 2, byNode.get(k)), VALID_SECONDS);
            }
            if (!added) break;
        }
        d.reply();
    }

    private void succeeded() {
        if (failing.get()) failing.set(false);
    }

    private int failed(String what, long node, long offset, long length, Throwable e) {
        int errno = ErrnoMapping.of(e);
        String path = node == ROOT_ID ? "/" : names.get((int) node - 2);
        if (errno != EIO) {
            log.debug("{} {} at {} (+{}): {}", what, path, offset, length, e.getMessage());
        } else if (failing.compareAndSet(false, true)) {
            log.error(
                    "{}/{}: {} at offset {} ({} bytes) failed, returning EIO: {}{}",
                    name,
                    path,
                    what,
                    offset,
                    length,
                    e.getMessage(),
                    " (further failures are not logged until a call succeeds)");
        }
        return errno;
    }
}
