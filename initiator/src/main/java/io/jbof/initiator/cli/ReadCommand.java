package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "read", description = "Read bytes of a namespace to a file or stdout (dd-like; any offset and length).")
public final class ReadCommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Option(
            names = {"-N", "--namespace-id"},
            paramLabel = "NSID",
            defaultValue = "1",
            description = "Namespace ID (default 1).")
    int nsid;

    @Option(
            names = {"-o", "--offset"},
            paramLabel = "BYTES",
            defaultValue = "0",
            description = "Byte offset (K/M/G suffixes allowed).")
    String offset;

    @Option(
            names = {"-l", "--length"},
            paramLabel = "BYTES",
            description = "Bytes to read (default: to the end).")
    String length;

    @Option(
            names = {"-d", "--data", "--output"},
            paramLabel = "FILE",
            description = "Output file (default stdout).")
    Path output;

    @Override
    public Integer call() throws Exception {
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 1))) {
            Namespace ns = c.namespace(nsid);
            long off = ByteRanges.parse(offset, "offset");
            long len = length == null ? ns.sizeBytes() - off : ByteRanges.parse(length, "length");
            ByteRanges.check(ns, off, len);
            try (OutputStream out = output == null ? System.out : new FileOutputStream(output.toFile())) {
                int bs = ns.blockSize();
                int chunkBlocks = Math.max(1, (4 << 20) / bs);
                ByteBuf buf = Unpooled.directBuffer(chunkBlocks * bs);
                byte[] copy = new byte[chunkBlocks * bs];
                long pos = off;
                long end = off + len;
                while (pos < end) {
                    long lba = pos / bs;
                    int skip = (int) (pos % bs);
                    int blocks = (int) Math.min(chunkBlocks, (end - lba * bs + bs - 1) / bs);
                    buf.clear();
                    ns.readBlocking(lba, blocks, buf);
                    int n = (int) Math.min(end - pos, (long) blocks * bs - skip);
                    buf.getBytes(skip, copy, 0, n);
                    out.write(copy, 0, n);
                    pos += n;
                }
                buf.release();
                out.flush();
            }
        }
        return 0;
    }
}
