package io.jbof.fuse.kernel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A FUSE connection's device side: /dev/fuse opened and mounted on a directory with mount(2), as
 * libfuse's fuse_kern_mount does for root, plus the descriptors cloned from it for more readers.
 * Unmounting and aborting work on the mount point and the connection's /sys/fs/fuse entry.
 */
public final class FuseDevice implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FuseDevice.class);

    /** How the file system appears: /proc/mounts' source (fsname) and type (fuse.SUBTYPE), and its access. */
    public record MountSpec(String fsName, String subtype, boolean readOnly, boolean allowOther) {}

    private final Path mountPoint;
    private final int fd;
    private final List<Integer> clones = new ArrayList<>();
    private long connection = -1;
    private boolean closed;

    private FuseDevice(Path mountPoint, int fd) {
        this.mountPoint = mountPoint;
        this.fd = fd;
    }

    /**
     * Mounts a FUSE file system on {@code mountPoint}: as root with mount(2) on a /dev/fuse it opened, as
     * libfuse's fuse_kern_mount does; otherwise (or where mount(2) is not permitted) through fusermount3.
     */
    public static FuseDevice mount(Path mountPoint, MountSpec spec, int uid, int gid) throws IOException {
        LibC libc = LibC.Holder.LIBC;
        String mp = mountPoint.toAbsolutePath().toString();
        if (libc.geteuid() == 0) {
            int fd = libc.open("/dev/fuse", LibC.O_RDWR | LibC.O_CLOEXEC);
            if (fd < 0) throw new IOException("cannot open /dev/fuse: " + error(LibC.Holder.errno()));
            // default_permissions: the kernel checks the mode bits we report, as for any local file.
            String data = "fd=" + fd + ",rootmode=40000,user_id=" + uid + ",group_id=" + gid + ",default_permissions"
                    + (spec.allowOther() ? ",allow_other" : "");
            long flags = LibC.MS_NOSUID | LibC.MS_NODEV | (spec.readOnly() ? LibC.MS_RDONLY : 0);
            if (libc.mount(spec.fsName(), mp, "fuse." + spec.subtype(), flags, data) == 0) {
                return new FuseDevice(mountPoint.toAbsolutePath(), fd);
            }
            int e = LibC.Holder.errno();
            libc.close(fd);
            if (e != FuseAbi.EPERM) throw new IOException("mount(2) of " + mp + " failed: " + error(e));
            log.debug("mount(2) not permitted (no CAP_SYS_ADMIN): trying fusermount3");
        }
        String options = "fsname=" + spec.fsName() + ",subtype=" + spec.subtype() + ",default_permissions"
                + (spec.allowOther() ? ",allow_other" : "") + (spec.readOnly() ? ",ro" : ",rw");
        int fd = Fusermount.mount(mountPoint.toAbsolutePath(), options);
        return new FuseDevice(mountPoint.toAbsolutePath(), fd);
    }

    public int fd() {
        return fd;
    }

    public Path mountPoint() {
        return mountPoint;
    }

    /**
     * A further descriptor for the same connection (FUSE_DEV_IOC_CLONE): its reader has its own queue of
     * requests being processed in the kernel, so readers do not contend on one. Where the kernel lacks
     * it, the readers share the first descriptor.
     */
    public synchronized int cloneOrShare() {
        LibC libc = LibC.Holder.LIBC;
        int c = libc.open("/dev/fuse", LibC.O_RDWR | LibC.O_CLOEXEC);
        if (c < 0) return fd;
        Pointer arg = Memory.allocateDirect(LibC.Holder.RUNTIME, 4);
        arg.putInt(0, fd);
        if (libc.ioctl(c, FuseAbi.FUSE_DEV_IOC_CLONE, arg) != 0) {
            log.debug("FUSE_DEV_IOC_CLONE failed (errno {}): readers share one descriptor", LibC.Holder.errno());
            libc.close(c);
            return fd;
        }
        clones.add(c);
        return c;
    }

    /** Notes the connection's number (the mount's device minor) while the mount answers, for {@link #abort}. */
    public void rememberConnection() {
        try {
            Object dev = Files.getAttribute(mountPoint, "unix:dev");
            long d = ((Number) dev).longValue();
            connection = (d & 0xff) | ((d >>> 12) & ~0xffL); // minor(dev) as glibc computes it
        } catch (IOException | UnsupportedOperationException e) {
            log.debug("cannot stat {}: {}", mountPoint, e.toString());
        }
    }

    /**
     * Ends the connection at once (/sys/fs/fuse/connections/N/abort): requests still waiting fail with
     * ENOTCONN and the readers see ENODEV. Used when an unmount cannot finish because files stay open.
     */
    public boolean abort() {
        if (connection < 0) return false;
        Path abort = Path.of("/sys/fs/fuse/connections", Long.toString(connection), "abort");
        if (!Files.exists(abort) && LibC.Holder.LIBC.geteuid() == 0) {
            // fusectl is not always mounted (containers, minimal systems); as root, mount it.
            LibC.Holder.LIBC.mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, null);
        }
        try {
            Files.writeString(abort, "1");
            return true;
        } catch (IOException e) {
            log.debug("cannot write {}: {}", abort, e.toString());
            return false;
        }
    }

    /**
     * Sets the kernel's readahead for this mount (its backing device info, 0:N in /sys/class/bdi): FUSE
     * starts at 128 KiB, and the INIT reply can only lower it. Needs root; false where it could not.
     */
    public boolean setReadahead(int kib) {
        if (connection < 0) return false;
        Path ra = Path.of("/sys/class/bdi", "0:" + connection, "read_ahead_kb");
        try {
            Files.writeString(ra, Integer.toString(kib));
            return true;
        } catch (IOException e) {
            log.debug("cannot write {}: {}", ra, e.toString());
            return false;
        }
    }

    /** umount2, lazily ({@code MNT_DETACH}: open files keep it served until closed) or not. */
    public static int unmount(Path mountPoint, boolean lazy) {
        LibC libc = LibC.Holder.LIBC;
        int rc = libc.umount2(mountPoint.toAbsolutePath().toString(), lazy ? LibC.MNT_DETACH : 0);
        return rc == 0 ? 0 : LibC.Holder.errno();
    }

    static String error(int errno) {
        return LibC.Holder.LIBC.strerror(errno) + " (errno " + errno + ")";
    }

    /** Closes every descriptor; the kernel aborts the connection when the last one goes. */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        LibC libc = LibC.Holder.LIBC;
        for (int c : clones) libc.close(c);
        libc.close(fd);
    }
}
