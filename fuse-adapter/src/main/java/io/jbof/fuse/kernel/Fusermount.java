package io.jbof.fuse.kernel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * Mounting without root, as libfuse does: the setuid helper fusermount3 opens /dev/fuse, mounts it and
 * passes the descriptor back over a Unix socket (SCM_RIGHTS) named by {@code _FUSE_COMMFD}. The helper
 * is started with posix_spawn because it must inherit that socket, which a Java Process cannot pass.
 */
final class Fusermount {
    private static final int SOL_SOCKET = 1;
    private static final int SCM_RIGHTS = 1;

    private Fusermount() {}

    /** Runs {@code fusermount3 -o OPTIONS -- MOUNTPOINT} and returns the /dev/fuse descriptor it mounted. */
    static int mount(Path mountPoint, String options) throws IOException {
        LibC libc = LibC.Holder.LIBC;
        jnr.ffi.Runtime rt = LibC.Holder.RUNTIME;
        Pointer pair = Memory.allocateDirect(rt, 8);
        if (libc.socketpair(LibC.AF_UNIX, LibC.SOCK_STREAM, 0, pair) != 0) {
            throw new IOException("socketpair failed: " + FuseDevice.error(LibC.Holder.errno()));
        }
        int ours = pair.getInt(0);
        int theirs = pair.getInt(4);
        try {
            String tool = "fusermount3";
            List<String> env = new ArrayList<>();
            for (Map.Entry<String, String> e : System.getenv().entrySet()) env.add(e.getKey() + "=" + e.getValue());
            env.add("_FUSE_COMMFD=" + theirs);
            CharSequence[] argv = {tool, "-o", options, "--", mountPoint.toString(), null};
            int[] pid = new int[1];
            CharSequence[] envp = env.toArray(new CharSequence[env.size() + 1]);
            int rc = libc.posix_spawnp(pid, tool, null, null, argv, envp);
            if (rc != 0) {
                throw new IOException("cannot run fusermount3 (" + FuseDevice.error(rc)
                        + "): install it with apt-get install fuse3, or mount as root");
            }
            libc.close(theirs);
            theirs = -1;
            int fd = receiveFd(ours);
            int[] status = new int[1];
            libc.waitpid(pid[0], status, 0);
            int exit = (status[0] >> 8) & 0xff;
            if (fd < 0) {
                throw new IOException("fusermount3 did not mount " + mountPoint + " (exit status " + exit
                        + "; its message is above)");
            }
            return fd;
        } finally {
            libc.close(ours);
            if (theirs >= 0) libc.close(theirs);
        }
    }

    /** recvmsg of one byte with an SCM_RIGHTS control message; -1 when the helper closed without one. */
    private static int receiveFd(int socket) {
        jnr.ffi.Runtime rt = LibC.Holder.RUNTIME;
        // struct msghdr (56 bytes on LP64), one iovec of one byte, and CMSG_SPACE(sizeof(int)) = 24 bytes of control.
        Pointer msg = Memory.allocateDirect(rt, 56, true);
        Pointer iov = Memory.allocateDirect(rt, 16, true);
        Pointer data = Memory.allocateDirect(rt, 8, true);
        Pointer control = Memory.allocateDirect(rt, 24, true);
        iov.putAddress(0, data.address());
        iov.putLong(8, 1);
        msg.putAddress(16, iov.address()); // msg_iov
        msg.putLong(24, 1); // msg_iovlen
        msg.putAddress(32, control.address());
        msg.putLong(40, 24); // msg_controllen
        long n;
        do {
            n = LibC.Holder.LIBC.recvmsg(socket, msg.address(), 0);
        } while (n < 0 && LibC.Holder.errno() == FuseAbi.EINTR);
        if (n <= 0) return -1;
        long len = control.getLong(0);
        if (len < 20 || control.getInt(8) != SOL_SOCKET || control.getInt(12) != SCM_RIGHTS) return -1;
        return control.getInt(16);
    }
}
