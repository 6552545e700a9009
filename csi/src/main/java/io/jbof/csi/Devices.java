package io.jbof.csi;

import java.io.IOException;
import java.util.List;

/** What a block device holds, as the node's tools (blkid, blockdev, dumpe2fs) tell it. */
final class Devices {
    private Devices() {}

    /** Whether {@code device} holds no file system, partition table or other signature blkid knows: only then is it formatted. */
    static boolean blank(String device) throws IOException {
        try {
            Commands.run(List.of("blkid", "-p", device));
            return false;
        } catch (Commands.Failed e) {
            if (e.status == 2) return true; // blkid: nothing found
            throw e;
        }
    }

    static long bytes(String device) throws IOException {
        return Long.parseLong(
                Commands.run(List.of("blockdev", "--getsize64", device)).strip());
    }

    /** The size of the ext2/3/4 file system on {@code device} (its superblock's block count times block size). */
    static long extBytes(String device) throws IOException {
        long blocks = -1;
        long blockSize = -1;
        for (String line : Commands.run(List.of("dumpe2fs", "-h", device)).split("\n")) {
            if (line.startsWith("Block count:"))
                blocks = Long.parseLong(line.substring(12).strip());
            if (line.startsWith("Block size:"))
                blockSize = Long.parseLong(line.substring(11).strip());
        }
        if (blocks < 0 || blockSize < 0)
            throw new IOException("dumpe2fs -h " + device + " gave no block count and size");
        return blocks * blockSize;
    }
}
