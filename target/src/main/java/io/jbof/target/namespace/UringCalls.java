package io.jbof.target.namespace;

/**
 * The system calls an io_uring needs, bound by jnr-ffi like {@link Libc}: the rings themselves are shared
 * memory that {@link IoUring} reads and writes in place, so no call is made per I/O beyond the batched
 * io_uring_enter. Public only because jnr-ffi implements it in a class loader of its own.
 */
public interface UringCalls {
    /**
     * glibc's syscall(2): the number, then up to six arguments; -1 and errno on failure. (mmap too goes
     * through it: jnr-ffi's binding of glibc's mmap got EINVAL from the ring where the same call by number did not.)
     */
    long syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6);

    /**
     * The same with five arguments, for the io_uring_enter that submits (once per loop turn): jnr-ffi calls a
     * function of at most six long parameters without allocating, one of seven through a heap buffer per call
     * (72 bytes). The sixth argument is then whatever its register holds: io_uring_enter reads its last two
     * (signal mask and its size) only when it waits (IORING_ENTER_GETEVENTS), which a submission does not ask;
     * a wait goes through the seven-parameter form (the kernel refused a stray size there: EINVAL).
     */
    long syscall(long number, long a1, long a2, long a3, long a4, long a5);

    int close(int fd);
}
