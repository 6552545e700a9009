package io.jbof.fuse.kernel;

/** What the kernel caches of an inode (fuse_attr). Times are one instant, in seconds. */
public record FuseAttr(long ino, long size, int mode, int nlink, int uid, int gid, int blockSize, long timeSeconds) {}
