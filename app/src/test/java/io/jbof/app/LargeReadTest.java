package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.Namespace;
import io.jbof.initiator.NvmeController;
import io.jbof.target.TargetServer;
import io.jbof.util.Tunable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Large reads at depth return the file's bytes on every way their data can travel: copied into the PDU or sent
 * by sendfile on the target; read by the host's socket straight into the reader's direct buffer, or copied into
 * a heap buffer; with and without a data digest over the bytes read in place.
 */
class LargeReadTest {
    private static final String NQN = "nqn.2024-01.io.jbof:large-read";
    private static final int BLOCKS = 32; // 128 KiB
    private static final int DEPTH = 16;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "sendfileMin={0} dataDigest={1} direct={2}")
    @CsvSource({"0,false,true", "16384,false,true", "0,true,true", "0,false,false"})
    void largeReadsAtDepthReturnTheFilesBytes(int sendfileMin, boolean dataDigest, boolean direct) throws Exception {
        Path img = dir.resolve("a.img");
        byte[] content = new byte[16 << 20];
        new Random(sendfileMin + (dataDigest ? 1 : 0)).nextBytes(content);
        Files.write(img, content);
        String was = System.getProperty(Tunable.SENDFILE_MIN.property());
        System.setProperty(Tunable.SENDFILE_MIN.property(), Integer.toString(sendfileMin)); // read per connection
        try (TargetServer t = TestTargets.start(TestTargets.config(NQN, img))) {
            ConnectOptions o = ConnectOptions.builder()
                    .port(TestTargets.port(t))
                    .subsystemNqn(NQN)
                    .ioQueues(1)
                    .dataDigest(dataDigest)
                    .build();
            try (NvmeController c = NvmeController.connect(o)) {
                Namespace ns = c.namespace(1);
                int bytes = BLOCKS * ns.blockSize();
                List<ByteBuf> bufs = new ArrayList<>();
                List<CompletableFuture<Void>> reads = new ArrayList<>();
                for (int round = 0; round < 4; round++) {
                    for (int i = 0; i < DEPTH; i++) {
                        ByteBuf b = direct
                                ? PooledByteBufAllocator.DEFAULT.directBuffer(bytes, bytes)
                                : Unpooled.buffer(bytes, bytes);
                        bufs.add(b);
                        reads.add(ns.read((long) (round * DEPTH + i) * BLOCKS, BLOCKS, b));
                    }
                }
                for (int i = 0; i < reads.size(); i++) {
                    reads.get(i).get();
                    ByteBuf b = bufs.get(i);
                    assertEquals(bytes, b.readableBytes());
                    byte[] got = new byte[bytes];
                    b.getBytes(0, got);
                    b.release();
                    int at = i * bytes;
                    int k = Arrays.mismatch(got, 0, bytes, content, at, at + bytes);
                    if (k >= 0) throw new AssertionError("read " + i + ": byte " + k + " differs from the file's");
                }
            }
        } finally {
            if (was == null) System.clearProperty(Tunable.SENDFILE_MIN.property());
            else System.setProperty(Tunable.SENDFILE_MIN.property(), was);
        }
    }
}
