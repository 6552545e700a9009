package io.jbof.target.namespace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One event loop's io_uring for direct namespaces, on real files opened with O_DIRECT. */
class DirectIoRingTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    EventExecutor loop;
    private DirectIo file;
    private final List<ByteBuf> buffers = new ArrayList<>();

    @BeforeEach
    void open() throws Exception {
        assumeTrue(
                DirectIoRing.unavailableReason() == null,
                () -> "io_uring unavailable: " + DirectIoRing.unavailableReason());
        Path p = dir.resolve("ring.img");
        Files.write(p, new byte[64 * BLOCK]);
        file = DirectIo.open(p, false, BLOCK);
        loop = newLoop();
    }

    /** Whether the rings under test have a thread that waits for their completions. */
    boolean expectsWaker() {
        return true;
    }

    /** A loop of the kind the rings under test run on: here one a thread waits for completions beside. */
    EventExecutor newLoop() {
        return new DefaultEventExecutor();
    }

    @AfterEach
    void close() throws Exception {
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        if (loop.parent() != null)
            loop.parent().shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        if (file != null) file.close();
        buffers.forEach(ByteBuf::release);
    }

    @Test
    void writesAndReadsCompleteOnTheLoopThatStartedThem() throws Exception {
        DirectIoRing ring = onLoop(() -> DirectIoRing.of(loop));
        assertNotNull(ring);
        assertEquals(expectsWaker(), ring.hasWaker(), "a thread waits for completions");
        byte[] data = pattern(8 * BLOCK, 5);
        ByteBuf src = buffer(data.length);
        src.writeBytes(data);
        Result w = startOnLoop(ring, true, src, data.length, 3L * BLOCK);
        assertEquals(data.length, w.bytes.get(10, TimeUnit.SECONDS));
        assertTrue(w.onLoop, "the write's completion ran on the loop");

        ByteBuf dst = buffer(data.length);
        Result r = startOnLoop(ring, false, dst, data.length, 3L * BLOCK);
        assertEquals(data.length, r.bytes.get(10, TimeUnit.SECONDS));
        assertTrue(r.onLoop, "the read's completion ran on the loop");
        byte[] got = new byte[data.length];
        dst.getBytes(0, got);
        assertArrayEquals(data, got);
        assertEquals(2, ring.completed());
    }

    @Test
    void manyAtOnceAreSubmittedTogetherAndAllComplete() throws Exception {
        DirectIoRing ring = onLoop(() -> DirectIoRing.of(loop));
        List<Result> results = new ArrayList<>();
        List<ByteBuf> bufs = new ArrayList<>();
        for (int i = 0; i < 64; i++) bufs.add(buffer(BLOCK));
        // All 64 started in one loop task: one submission carries them.
        onLoop(() -> {
            for (int i = 0; i < 64; i++) {
                ByteBuf b = bufs.get(i);
                b.writerIndex(BLOCK);
                b.setInt(0, i);
                Result res = new Result();
                assertTrue(ring.start(true, file.fd(), b, BLOCK, (long) i * BLOCK, false, res));
                results.add(res);
            }
            return null;
        });
        for (Result res : results) assertEquals(BLOCK, res.bytes.get(10, TimeUnit.SECONDS));
        byte[] all = Files.readAllBytes(dir.resolve("ring.img"));
        for (int i = 0; i < 64; i++)
            assertEquals(i, java.nio.ByteBuffer.wrap(all, i * BLOCK, 4).getInt(), "block " + i);
    }

    @Test
    void aReadPastTheEndCompletesShortAndAnUnalignedOneWithTheErrno() throws Exception {
        DirectIoRing ring = onLoop(() -> DirectIoRing.of(loop));
        ByteBuf b = buffer(2 * BLOCK);
        assertEquals(0, startOnLoop(ring, false, b, BLOCK, 64L * BLOCK).bytes.get(10, TimeUnit.SECONDS));
        assertEquals(
                BLOCK, startOnLoop(ring, false, b, 2 * BLOCK, 63L * BLOCK).bytes.get(10, TimeUnit.SECONDS));
        // O_DIRECT refuses a length that is not a multiple of the logical block: EINVAL, as -22.
        assertEquals(-22, startOnLoop(ring, false, b, 100, 0).bytes.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aFullRingRefusesSoTheCallerTakesThePool() throws Exception {
        DirectIoRing ring = onLoop(() -> new DirectIoRing(loop, 4));
        ByteBuf b = buffer(BLOCK);
        // Started in one task, so none can have completed and freed its place before the fifth.
        List<Boolean> started = onLoop(() -> {
            List<Boolean> s = new ArrayList<>();
            for (int i = 0; i < 5; i++) s.add(ring.start(false, file.fd(), b, BLOCK, 0, false, new Result()));
            return s;
        });
        assertEquals(List.of(true, true, true, true, false), started);
    }

    @Test
    void aLoopWithoutAThreadOfItsOwnGetsNoRing() {
        assertNull(DirectIoRing.of(ImmediateEventExecutor.INSTANCE));
    }

    @Test
    void theRingGoesWithItsLoop() throws Exception {
        DirectIoRing ring = onLoop(() -> DirectIoRing.of(loop));
        assertNotNull(ring);
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        EventExecutor next = newLoop();
        try {
            DirectIoRing other = next.submit(() -> DirectIoRing.of(next)).get(10, TimeUnit.SECONDS);
            assertFalse(ring == other);
        } finally {
            next.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
            if (next.parent() != null)
                next.parent().shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    Result startOnLoop(DirectIoRing ring, boolean write, ByteBuf buf, int n, long position) throws Exception {
        Result r = new Result();
        assertTrue(onLoop(() -> ring.start(write, file.fd(), buf, n, position, false, r)));
        return r;
    }

    <T> T onLoop(java.util.concurrent.Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    private ByteBuf buffer(int n) {
        ByteBuf b = DirectIo.buffer(n);
        buffers.add(b);
        return b;
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (i * 31 + seed);
        return b;
    }

    /** A completion that records its result and whether it ran on the loop. */
    final class Result implements DirectIoRing.Completion {
        final CompletableFuture<Integer> bytes = new CompletableFuture<>();
        volatile boolean onLoop;

        @Override
        public void directDone(int result) {
            onLoop = loop.inEventLoop();
            bytes.complete(result);
        }
    }
}
