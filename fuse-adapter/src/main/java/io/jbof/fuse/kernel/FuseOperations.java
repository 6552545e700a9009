package io.jbof.fuse.kernel;

/**
 * The file system behind a {@link FuseSession}: one method per request the session decodes, as the
 * kernel's fuse_operations table is the only seam of a Linux FUSE server. Each call must end in exactly
 * one reply on {@code r} (now, or later from any thread); the defaults answer ENOSYS, which the
 * kernel remembers for the calls that have a fallback.
 */
public interface FuseOperations {
    default void lookup(FuseRequest r, long parent, String name) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void getattr(FuseRequest r, long node) {
        r.replyError(FuseAbi.ENOSYS);
    }

    /** {@code valid}: FATTR_* bits of what the caller changes; {@code size} counts when FATTR_SIZE is set. */
    default void setattr(FuseRequest r, long node, int valid, long size) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void open(FuseRequest r, long node, int flags) {
        r.replyError(FuseAbi.ENOSYS);
    }

    /** Reply with {@link FuseRequest#replyRead}: the data goes into {@link FuseRequest#readBuffer}. */
    default void read(FuseRequest r, long node, long offset, int size) {
        r.replyError(FuseAbi.ENOSYS);
    }

    /** The data is {@link FuseRequest#writeData}; {@code flags} are the open(2) flags of the file. */
    default void write(FuseRequest r, long node, long offset, int size, int flags) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void flush(FuseRequest r, long node) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void fsync(FuseRequest r, long node) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void release(FuseRequest r, long node) {
        r.replyOk();
    }

    default void fallocate(FuseRequest r, long node, int mode, long offset, long length) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void statfs(FuseRequest r, long node) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void opendir(FuseRequest r, long node) {
        r.replyError(FuseAbi.ENOSYS);
    }

    /** Entries from index {@code offset} on, as many as fit in {@code size} bytes ({@link FuseRequest#directory}). */
    default void readdir(FuseRequest r, long node, long offset, int size, boolean plus) {
        r.replyError(FuseAbi.ENOSYS);
    }

    default void releasedir(FuseRequest r, long node) {
        r.replyOk();
    }

    /** Namespace changes (create, unlink, mkdir, rename, ...): refused by default. */
    default void modify(FuseRequest r, int opcode) {
        r.replyError(FuseAbi.EPERM);
    }
}
