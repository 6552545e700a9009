package io.jbof.initiator.cli;

import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "write", description = "Write a file or stdin to a namespace at a byte offset (dd-like), then Flush.")
public final class WriteCommand implements Callable<Integer> {
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
            description = "Bytes to write (default: all of the input).")
    String length;

    @Option(
            names = {"-d", "--data", "--input"},
            paramLabel = "FILE",
            description = "Input file (default stdin).")
    Path input;

    @Option(names = "--fua", description = "Force Unit Access on every write.")
    boolean fua;

    @Option(names = "--no-flush", description = "Skip the final Flush.")
    boolean noFlush;

    @Override
    public Integer call() throws Exception {
        try (NvmeController c = NvmeController.connect(conn.toOptions(null, 1))) {
            Namespace ns = c.namespace(nsid);
            if (ns.readOnly()) throw new IllegalArgumentException("namespace " + nsid + " is read-only");
            long pos = ByteRanges.parse(offset, "offset");
            long limit = length == null ? Long.MAX_VALUE : ByteRanges.parse(length, "length");
            int bs = ns.blockSize();
            int chunk = Math.max(bs, (4 << 20) / bs * bs);
            byte[] in = new byte[chunk];
            ByteBuf buf = Unpooled.directBuffer(chunk + 2 * bs);
            long written = 0;
            try (InputStream src = input == null ? System.in : new FileInputStream(input.toFile())) {
                while (written < limit) {
                    int want = (int) Math.min(chunk, limit - written);
                    int n = src.readNBytes(in, 0, want);
                    if (n <= 0) break;
                    ByteRanges.check(ns, pos, n);
                    // Unaligned edges: read the covering blocks, patch, write back (read-modify-write).
                    long lba = pos / bs;
                    int head = (int) (pos % bs);
                    int blocks = (head + n + bs - 1) / bs;
                    buf.clear();
                    if (head != 0 || (head + n) % bs != 0) {
                        ns.readBlocking(lba, blocks, buf);
                    } else {
                        buf.writerIndex(blocks * bs);
                    }
                    buf.setBytes(head, in, 0, n);
                    ns.writeBlocking(lba, blocks, buf, fua);
                    pos += n;
                    written += n;
                }
            }
            buf.release();
            if (!noFlush) ns.flushBlocking();
            System.err.println(
                    "jbof: wrote " + written + " bytes to namespace " + nsid + (noFlush ? "" : " and flushed"));
        }
        return 0;
    }
}
