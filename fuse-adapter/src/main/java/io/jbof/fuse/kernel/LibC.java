package io.jbof.fuse.kernel;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

/**
 * The libc calls a FUSE server needs, bound by jnr-ffi (already on the classpath for the target's
 * fallocate): no native code of ours to build, and a {@code long} address argument costs no
 * allocation per call, which matters for read and writev on every request.
 */
public interface LibC {
    int O_RDWR = 02;
    int O_CLOEXEC = 02000000;
    long MS_RDONLY = 1;
    long MS_NOSUID = 2;
    long MS_NODEV = 4;
    int MNT_DETACH = 2;
    int AF_UNIX = 1;
    int SOCK_STREAM = 1;
    int F_GETFL = 3;
    int F_SETFL = 4;
    int O_NONBLOCK = 04000;
    int EPOLL_CTL_ADD = 1;
    int EPOLL_CTL_DEL = 2;
    int EPOLLIN = 1;
    int EPOLLET = 1 << 31;

    int open(String path, int flags);

    int close(int fd);

    long read(int fd, long buf, long count);

    long write(int fd, long buf, long count);

    long writev(int fd, long iov, int iovcnt);

    int mount(String source, String target, String fstype, long flags, String data);

    int umount2(String target, int flags);

    int ioctl(int fd, long request, Pointer arg);

    int socketpair(int domain, int type, int protocol, Pointer fds);

    long recvmsg(int fd, long msghdr, int flags);

    int fcntl(int fd, int cmd, int arg);

    /** {@code event}: the address of a struct epoll_event (packed on x86_64: events at 0, data at 4; data at 8 elsewhere). */
    int epoll_ctl(int epfd, int op, int fd, long event);

    String strerror(int errnum);

    int posix_spawnp(
            int[] pid, String file, Pointer fileActions, Pointer attr, CharSequence[] argv, CharSequence[] envp);

    int waitpid(int pid, int[] status, int options);

    int geteuid();

    /** The one binding, loaded on first use. */
    final class Holder {
        public static final LibC LIBC = LibraryLoader.create(LibC.class).load("c");
        public static final Runtime RUNTIME = Runtime.getRuntime(LIBC);

        private Holder() {}

        /** errno of the calling thread's last call through {@link #LIBC}. */
        public static int errno() {
            return RUNTIME.getLastError();
        }
    }
}
