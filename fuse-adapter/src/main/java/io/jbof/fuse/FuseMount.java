package io.jbof.fuse;

import com.sun.security.auth.module.UnixSystem;
import io.jbof.fuse.kernel.FuseDevice;
import io.jbof.fuse.kernel.FuseSession;
import io.jbof.initiator.NvmeController;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A mounted {@link VolumeFileSystem}, served by jbof's own FUSE server ({@link FuseSession}) on
 * /dev/fuse: {@link #mount} returns once the kernel's INIT was answered. {@link #close} unmounts,
 * waits for the readers to see the end and sends Flush to every namespace with writes.
 */
public final class FuseMount implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FuseMount.class);

    /**
     * How to mount: page-cache bypass, other users' access, read-only, the kernel's write cache (opt-in),
     * and the server's shape (readers, max_background, largest request).
     */
    public record Options(
            boolean directIo,
            boolean allowOther,
            boolean readOnly,
            boolean writebackCache,
            int readaheadKib,
            FuseSession.Config server) {
        /** The readahead jbof sets where it can (root): sequential buffered reads of 128 KiB gain from it. */
        public static final int DEFAULT_READAHEAD_KIB = 4096;

        public static Options defaults() {
            return new Options(false, false, false, false, DEFAULT_READAHEAD_KIB, FuseSession.Config.defaults());
        }

        public Options withDirectIo(boolean on) {
            return new Options(on, allowOther, readOnly, writebackCache, readaheadKib, server);
        }
    }

    private final VolumeFileSystem fs;
    private final FuseDevice device;
    private final FuseSession session;
    private boolean closed;

    private FuseMount(VolumeFileSystem fs, FuseDevice device, FuseSession session) {
        this.fs = fs;
        this.device = device;
        this.session = session;
    }

    public static FuseMount mount(NvmeController controller, Path mountPoint, Options o) throws IOException {
        if (!Files.isDirectory(mountPoint)) {
            throw new IOException(
                    "mount point " + mountPoint + " is not a directory (create it with: mkdir -p " + mountPoint + ")");
        }
        if (!Files.exists(Path.of("/dev/fuse"))) {
            throw new IOException(
                    "/dev/fuse is missing: load the fuse module (modprobe fuse) or, in a container, pass the device in");
        }
        VolumeFileSystem fs = new VolumeFileSystem(controller, o.directIo());
        UnixSystem me = new UnixSystem();
        FuseDevice.MountSpec spec = new FuseDevice.MountSpec(
                "jbof:" + controller.options().subsystemNqn.replace(",", "_"), "jbof", o.readOnly(), o.allowOther());
        FuseDevice device;
        try {
            device = FuseDevice.mount(mountPoint, spec, (int) me.getUid(), (int) me.getGid());
        } catch (IOException e) {
            fs.shutdown();
            throw e;
        }
        FuseSession.Config server = o.server();
        if (o.writebackCache() != server.writebackCache()) {
            server = new FuseSession.Config(
                    server.readers(), server.maxBackground(), server.maxIo(), o.writebackCache(), server.onLoops());
        }
        FuseSession session = new FuseSession(device, fs, server);
        FuseMount m = new FuseMount(fs, device, session);
        session.start(controller.ioQueueLoops());
        boolean ready;
        try {
            ready = session.awaitInit(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ready = false;
        }
        if (!ready) {
            m.close();
            Throwable f = session.failure();
            throw new IOException(
                    "mounting on " + mountPoint.toAbsolutePath() + " failed: the kernel's FUSE INIT was not answered"
                            + (f != null ? " (" + f + ")" : ""),
                    f);
        }
        device.rememberConnection();
        if (o.readaheadKib() > 0 && !device.setReadahead(o.readaheadKib())) {
            log.debug("readahead stays the kernel's (setting it needs root)");
        }
        return m;
    }

    public VolumeFileSystem fileSystem() {
        return fs;
    }

    public Path mountPoint() {
        return device.mountPoint();
    }

    public FuseSession session() {
        return session;
    }

    /** Waits until the file system is unmounted (by {@link #close}, {@code jbof umount} or umount). */
    public void awaitUnmounted() throws InterruptedException {
        session.awaitEnd(Long.MAX_VALUE, TimeUnit.DAYS);
    }

    public boolean isMounted() {
        return session.running();
    }

    /**
     * Unmounts lazily (open files do not keep the daemon alive longer than 30 s: then the connection is
     * aborted and they get ENOTCONN), waits for the readers, flushes every namespace with writes.
     */
    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        try {
            if (session.running()) {
                int rc = Unmount.run(mountPoint(), true);
                if (rc != 0 && rc != 22 /* EINVAL: not mounted any more */)
                    log.warn("unmounting {}: status {}", mountPoint(), rc);
                if (!session.awaitEnd(30, TimeUnit.SECONDS)) {
                    log.warn(
                            "{} still has open files 30 s after the unmount: aborting the FUSE connection",
                            mountPoint());
                    device.abort();
                    if (!session.awaitEnd(10, TimeUnit.SECONDS))
                        log.warn("the FUSE readers for {} did not stop", mountPoint());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            device.close();
            fs.shutdown();
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
        if (!session.running()) session.freeSlots();
        if (first != null) throw first;
    }
}
