package io.jbof.target.namespace;

import java.io.IOException;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/**
 * The libc calls namespace backends make that the JDK does not offer: fallocate, the block-device
 * ioctls, open with O_EXCL or O_DIRECT, and pread/pwrite at raw addresses (so direct I/O follows the
 * device's alignment, not the JDK's file-system block size). Bound by jnr-ffi at run time; a
 * {@code long} address argument costs no allocation per call. Public only because jnr-ffi implements it in a class loader of its own.
 */
public interface Libc {
    int O_RDONLY = 0;
    int O_RDWR = 02;
    int O_EXCL = 0200;
    int O_CLOEXEC = 02000000;
    /** O_DIRECT differs between architectures (asm-generic: 040000; arm64: 0200000). */
    int O_DIRECT = "aarch64".equals(System.getProperty("os.arch")) ? 0200000 : 040000;

    int EINVAL = 22;
    int EBUSY = 16;
    int EACCES = 13;
    int EROFS = 30;
    int ENOENT = 2;
    int EOPNOTSUPP = 95;
    int EINTR = 4;

    // <linux/fs.h>: _IO(0x12, n) and _IOR(0x12, 114, size_t).
    long BLKROGET = 0x125E;
    long BLKSSZGET = 0x1268;
    long BLKPBSZGET = 0x127B;
    long BLKIOOPT = 0x1279;
    long BLKDISCARD = 0x1277;
    long BLKZEROOUT = 0x127F;
    long BLKGETSIZE64 = 0x80081272L;

    int open(String path, int flags);

    int close(int fd);

    int fallocate(int fd, int mode, long offset, long length);

    /**
     * ioctl with a pointer argument: {@code arg} is copied in and back out. An int-sized result lands in
     * the low half of {@code arg[0]} (little-endian); BLKDISCARD and BLKZEROOUT take {start, length}.
     */
    int ioctl(int fd, long request, long[] arg);

    long pread(int fd, long buf, long count, long offset);

    long pwrite(int fd, long buf, long count, long offset);

    int fdatasync(int fd);

    String strerror(int errnum);

    /** The one binding, loaded on first use; null where libc cannot be bound (no jnr-ffi stub for this platform). */
    final class Holder {
        static final Libc LIBC = load();
        private static final Runtime RUNTIME = LIBC == null ? null : Runtime.getRuntime(LIBC);

        private Holder() {}

        private static Libc load() {
            try {
                return LibraryLoader.create(Libc.class).load("c");
            } catch (Throwable e) {
                return null;
            }
        }

        /** errno of the calling thread's last call through {@link #LIBC}. */
        static int errno() {
            return RUNTIME.getLastError();
        }

        /** "strerror (errno N)", for messages. */
        static String describe(int errno) {
            return LIBC.strerror(errno) + " (errno " + errno + ")";
        }

        static Libc require(String what) throws IOException {
            if (LIBC == null)
                throw new IOException(what + " needs libc through jnr-ffi, which cannot be loaded on this platform");
            return LIBC;
        }
    }
}
