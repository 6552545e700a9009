package io.jbof.fuse;

import io.jbof.initiator.NvmeController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A mounted {@link VolumeFileSystem}: libfuse's loop runs on its own thread (multi-threaded: it adds
 * worker threads while requests wait); {@link #mount} returns once the kernel's FUSE INIT was served.
 * {@link #close} unmounts, waits for the loop to end and sends Flush to every namespace with writes.
 */
public final class FuseMount implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FuseMount.class);
    /** 128 KiB: the most a FUSE 2 request carries (the kernel's default of 32 pages). */
    public static final int MAX_IO = 128 * 1024;

    /** How to mount: page-cache bypass, other users' access, read-only, extra -o options for libfuse. */
    public record Options(boolean directIo, boolean allowOther, boolean readOnly, List<String> extra, boolean debug) {
        public static Options defaults() {
            return new Options(false, false, false, List.of(), false);
        }
    }

    private final VolumeFileSystem fs;
    private final Path mountPoint;
    private final Thread loop;
    private volatile int loopResult = Integer.MIN_VALUE;
    private volatile Throwable loopFailure;
    private boolean closed;

    private FuseMount(VolumeFileSystem fs, Path mountPoint, Thread loop) {
        this.fs = fs;
        this.mountPoint = mountPoint;
        this.loop = loop;
    }

    public static FuseMount mount(NvmeController controller, Path mountPoint, Options o) throws IOException {
        if (!Files.isDirectory(mountPoint)) {
            throw new IOException("mount point " + mountPoint + " is not a directory (create it with: mkdir -p " + mountPoint + ")");
        }
        if (!Files.exists(Path.of("/dev/fuse"))) {
            throw new IOException("/dev/fuse is missing: load the fuse module (modprobe fuse) or, in a container, pass the device in");
        }
        VolumeFileSystem fs;
        try {
            fs = new VolumeFileSystem(controller);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            throw new IOException("cannot load libfuse.so.2: install it with apt-get install -y libfuse2 fuse (" + e.getMessage() + ")", e);
        }
        // 4 MiB readahead: buffered sequential reads through the page cache went from 345 to 449 MiB/s (128 KiB reads).
        List<String> opts = new ArrayList<>(List.of("big_writes", "max_write=" + MAX_IO, "max_read=" + MAX_IO, "max_readahead=" + (4 << 20),
                "fsname=jbof:" + controller.options().subsystemNqn.replace(",", "_"), "subtype=jbof"));
        if (o.directIo()) opts.add("direct_io");
        if (o.allowOther()) opts.add("allow_other");
        if (o.readOnly()) opts.add("ro");
        opts.addAll(o.extra());
        String[] args = {"-o", String.join(",", opts)};
        Path abs = mountPoint.toAbsolutePath();
        FuseMount[] self = new FuseMount[1];
        Thread t = new Thread(() -> {
            try {
                // Blocking: libfuse's fuse_main mounts, serves until unmounted, and returns.
                fs.mount(abs, true, o.debug(), args);
                self[0].loopResult = 0;
            } catch (Throwable e) {
                self[0].loopFailure = e;
            }
        }, "fuse-main");
        FuseMount m = new FuseMount(fs, abs, t);
        self[0] = m;
        t.setDaemon(true);
        t.start();
        try {
            while (!fs.initialized().await(50, TimeUnit.MILLISECONDS)) {
                if (!t.isAlive()) {
                    Throwable f = m.loopFailure;
                    throw new IOException("mounting on " + abs + " failed" + (f != null ? ": " + rootMessage(f) : "")
                            + " (is something mounted there already? is libfuse2 installed?)", f);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while mounting", e);
        }
        return m;
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null) t = t.getCause();
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    public VolumeFileSystem fileSystem() { return fs; }
    public Path mountPoint() { return mountPoint; }

    /** Waits until the file system is unmounted (by {@link #close}, {@code jbof umount} or fusermount -u). */
    public void awaitUnmounted() throws InterruptedException {
        loop.join();
    }

    public boolean isMounted() {
        return loop.isAlive();
    }

    /** Unmounts (lazily, so open files do not keep the daemon alive), waits for the loop, flushes. */
    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        if (loop.isAlive()) {
            Unmount.run(mountPoint, true);
            try {
                loop.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (loop.isAlive()) log.warn("the FUSE loop for {} did not end within 30 s of the unmount", mountPoint);
        }
        IOException first = null;
        for (NamespaceFile f : fs.files().values()) {
            try {
                f.flush();
            } catch (IOException e) {
                if (first == null) first = e;
            } finally {
                f.close();
            }
        }
        if (first != null) throw first;
    }
}
