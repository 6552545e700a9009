package io.jbof.fuse.kernel;

/**
 * The FUSE kernel protocol as Linux's include/uapi/linux/fuse.h defines it (version 7): opcodes, INIT
 * flags, and the byte offsets of the fields this server reads and writes. Everything is little endian
 * (x86-64 and arm64 Linux, where jbof runs).
 */
public final class FuseAbi {
    private FuseAbi() {}

    public static final int KERNEL_VERSION = 7;
    /** The newest minor this server knows; a kernel that speaks less gets its own (INIT negotiates down). */
    public static final int KERNEL_MINOR = 38;
    /** The oldest minor whose structure sizes this server writes (7.23: the 64-byte init_out, 7.28: max_pages). */
    public static final int OLDEST_MINOR = 28;

    public static final long ROOT_ID = 1;

    // Opcodes.
    public static final int LOOKUP = 1,
            FORGET = 2,
            GETATTR = 3,
            SETATTR = 4,
            READLINK = 5,
            SYMLINK = 6,
            MKNOD = 8,
            MKDIR = 9,
            UNLINK = 10,
            RMDIR = 11,
            RENAME = 12,
            LINK = 13,
            OPEN = 14,
            READ = 15,
            WRITE = 16,
            STATFS = 17,
            RELEASE = 18,
            FSYNC = 20,
            SETXATTR = 21,
            GETXATTR = 22,
            LISTXATTR = 23,
            REMOVEXATTR = 24,
            FLUSH = 25,
            INIT = 26,
            OPENDIR = 27,
            READDIR = 28,
            RELEASEDIR = 29,
            FSYNCDIR = 30,
            ACCESS = 34,
            CREATE = 35,
            INTERRUPT = 36,
            DESTROY = 38,
            BATCH_FORGET = 42,
            FALLOCATE = 43,
            READDIRPLUS = 44,
            RENAME2 = 45;

    // INIT flags.
    public static final int ASYNC_READ = 1,
            BIG_WRITES = 1 << 5,
            DO_READDIRPLUS = 1 << 13,
            ASYNC_DIO = 1 << 15,
            WRITEBACK_CACHE = 1 << 16,
            PARALLEL_DIROPS = 1 << 18,
            MAX_PAGES = 1 << 22;

    // OPEN reply flags.
    public static final int FOPEN_DIRECT_IO = 1, FOPEN_PARALLEL_DIRECT_WRITES = 1 << 6;

    // SETATTR valid bits.
    public static final int FATTR_MODE = 1, FATTR_UID = 1 << 1, FATTR_GID = 1 << 2, FATTR_SIZE = 1 << 3;

    // fuse_in_header: len u32, opcode u32, unique u64, nodeid u64, uid u32, gid u32, pid u32, total_extlen u16, padding
    // u16.
    public static final int IN_HEADER = 40;
    public static final int IN_LEN = 0,
            IN_OPCODE = 4,
            IN_UNIQUE = 8,
            IN_NODEID = 16,
            IN_UID = 24,
            IN_GID = 28,
            IN_PID = 32;
    // fuse_out_header: len u32, error s32, unique u64.
    public static final int OUT_HEADER = 16;

    // Request bodies start at IN_HEADER; offsets below are from there.
    // fuse_init_in: major, minor, max_readahead, flags (u32 each), then flags2 from 7.36.
    public static final int INIT_MAJOR = 0, INIT_MINOR = 4, INIT_MAX_READAHEAD = 8, INIT_FLAGS = 12;
    /** fuse_init_out as of 7.23+ (64 bytes). */
    public static final int INIT_OUT = 64;
    // fuse_read_in / fuse_write_in: fh u64, offset u64, size u32, read/write_flags u32, lock_owner u64, flags u32,
    // padding u32.
    public static final int RW_FH = 0, RW_OFFSET = 8, RW_SIZE = 16, RW_FLAGS = 32;
    public static final int WRITE_IN = 40;
    // fuse_open_in: flags u32, open_flags u32.
    public static final int OPEN_FLAGS = 0;
    // fuse_setattr_in: valid u32, padding u32, fh u64, size u64, ...
    public static final int SETATTR_VALID = 0, SETATTR_SIZE = 16;
    // fuse_fallocate_in: fh u64, offset u64, length u64, mode u32, padding u32.
    public static final int FALLOC_OFFSET = 8, FALLOC_LENGTH = 16, FALLOC_MODE = 24;
    // fuse_interrupt_in: unique u64. fuse_read_in for READDIR: offset at 8, size at 16 (as RW_*).

    /** fuse_attr: 88 bytes. */
    public static final int ATTR = 88;
    /** fuse_entry_out: nodeid, generation, entry_valid, attr_valid (u64), entry_valid_nsec, attr_valid_nsec (u32), attr. */
    public static final int ENTRY_OUT = 40 + ATTR;
    /** fuse_attr_out: attr_valid u64, attr_valid_nsec u32, dummy u32, attr. */
    public static final int ATTR_OUT = 16 + ATTR;

    public static final int OPEN_OUT = 16;
    public static final int WRITE_OUT = 8;
    public static final int STATFS_OUT = 80;
    /** fuse_dirent: ino u64, off u64, namelen u32, type u32, name padded to 8 bytes. */
    public static final int DIRENT = 24;

    // errno values (Linux).
    public static final int EPERM = 1,
            ENOENT = 2,
            EINTR = 4,
            EIO = 5,
            EAGAIN = 11,
            EACCES = 13,
            ENODEV = 19,
            ENOTDIR = 20,
            EISDIR = 21,
            EINVAL = 22,
            ENOSPC = 28,
            EROFS = 30,
            ENOSYS = 38,
            EPROTO = 71,
            EOPNOTSUPP = 95;

    // File types and open flags.
    public static final int S_IFDIR = 0040000, S_IFREG = 0100000, DT_DIR = 4, DT_REG = 8;
    public static final int O_ACCMODE = 3, O_RDONLY = 0, O_DSYNC = 010000;
    public static final int FALLOC_FL_KEEP_SIZE = 0x01, FALLOC_FL_PUNCH_HOLE = 0x02, FALLOC_FL_ZERO_RANGE = 0x10;

    /** _IOR(229, 0, uint32_t): a new /dev/fuse descriptor that serves the same connection. */
    public static final long FUSE_DEV_IOC_CLONE = 0x8004E500L;
}
