package io.jbof.microbench;

import io.jbof.transport.TransportType;
import io.jbof.nvme.Connect;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Properties;
import io.jbof.nvme.Sgl;
import io.jbof.nvme.Status;
import io.jbof.target.TargetServer;
import io.jbof.target.config.TargetConfig;
import io.jbof.target.controller.CommandSet;
import io.jbof.target.controller.QueueSession;
import io.jbof.transport.TargetQueue;
import io.jbof.transport.TargetRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * The target's command handling without a transport: a connected controller's I/O queue session gets
 * a 4 KiB Read (completed as if sendfile ran) or an in-capsule 4 KiB Write (written to the page cache
 * of a /dev/shm file). ns/op is dispatch, checks and file access per command; B/op what it allocates.
 */
@State(Scope.Thread)
public class TargetDispatchBench {
    static final String NQN = "nqn.2024-01.io.jbof:dispatch";
    private Path dir;
    private TargetServer target;
    private QueueSession io;
    private FakeRequest request;
    private final SplittableRandom rnd = new SplittableRandom(7);
    private final ByteBuf block = Unpooled.directBuffer(4096).writeZero(4096);

    @Setup(Level.Trial)
    public void setup() throws Exception {
        dir = Files.createTempDirectory(Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir")), "jbof-jmh");
        target = TargetServer.start(TargetConfig.loopback(NQN, "256M", dir.resolve("ns1.img")));
        CommandSet commands = new CommandSet(target);
        QueueSession admin = new QueueSession(new FakeQueue(), commands);
        FakeRequest r = new FakeRequest();
        connect(admin, r, 0, 0xFFFF);
        int cntlid = (int) (r.result & 0xFFFF);
        r.reset(Opcodes.FABRICS, 0).command.fctype(Opcodes.FCTYPE_PROPERTY_SET).cdw(11, Properties.CC).cdw(12, Properties.CC_EN | (6 << 16) | (4 << 20));
        admin.onCommand(r);
        check(r, "Property Set CC.EN");
        io = new QueueSession(new FakeQueue(), commands);
        request = new FakeRequest();
        connect(io, request, 1, cntlid);
        // The measured commands must really succeed, not take an early error path.
        read4k();
        check(request, "Read");
        write4kInCapsule();
        check(request, "Write");
    }

    private static void connect(QueueSession s, FakeRequest r, int qid, int cntlid) {
        UUID id = UUID.nameUUIDFromBytes("jmh".getBytes());
        ByteBuf data = Connect.data(id, cntlid, NQN, "nqn.2014-08.org.nvmexpress:uuid:" + id);
        r.reset(Opcodes.FABRICS, Connect.DATA_SIZE).command.fctype(Opcodes.FCTYPE_CONNECT).cdw(10, qid << 16).cdw(11, 31);
        r.payload = data;
        s.onCommand(r);
        check(r, "Connect (queue " + qid + ")");
    }

    private static void check(FakeRequest r, String what) {
        if (r.status != Status.SUCCESS) throw new IllegalStateException(what + " failed: " + Status.describe(r.status));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        target.close();
        Files.deleteIfExists(dir.resolve("ns1.img"));
        Files.deleteIfExists(dir);
    }

    @Benchmark
    public int read4k() {
        request.reset(Opcodes.IO_READ, 4096).command.nsid(1).cdw(10, rnd.nextInt(65536)).cdw(12, 0);
        io.onCommand(request);
        return request.status;
    }

    @Benchmark
    public int write4kInCapsule() {
        request.reset(Opcodes.IO_WRITE, 4096).command.nsid(1).cdw(10, rnd.nextInt(65536)).cdw(12, 0);
        request.payload = block;
        io.onCommand(request);
        return request.status;
    }

    /** A queue whose thread is the caller's: commands complete before onCommand returns. */
    static final class FakeQueue implements TargetQueue {
        @Override public EventExecutor executor() { return ImmediateEventExecutor.INSTANCE; }
        @Override public TransportType transport() { return TransportType.TCP; }
        @Override public String remoteAddress() { return "jmh"; }
        @Override public int inCapsuleDataSize() { return 16384; }
        @Override public void bind(int qid, int sqSize, boolean sqFlowControlDisabled) { }
        @Override public void close(String reason) { }
    }

    /** One reusable exchange: data to the host is dropped, data from the host is {@link #payload}. */
    static final class FakeRequest implements TargetRequest {
        final ByteBuf sqe = Unpooled.directBuffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        final NvmeCommand command = new NvmeCommand().wrap(sqe, 0);
        final FakeQueue queue = new FakeQueue();
        int length;
        ByteBuf payload;
        int status = -1;
        long result;
        Object attachment;

        FakeRequest reset(int opcode, int length) {
            command.clear().opcode(opcode).flags(NvmeCommand.FLAGS_SGL).cid(1);
            Sgl.write(sqe, 0, 0, length, Sgl.ID_IN_CAPSULE);
            this.length = length;
            this.payload = null;
            this.status = -1;
            return this;
        }

        @Override public NvmeCommand command() { return command; }
        @Override public TargetQueue queue() { return queue; }
        @Override public int transferLength() { return length; }
        @Override public int sglStatus() { return Status.SUCCESS; }
        @Override public void sendData(ByteBuf data) { data.release(); }
        @Override public void sendFile(FileChannel file, long position, int n) { }
        @Override public void receiveData(DataReceiver r) {
            int st = payload == null || length == 0 ? Status.SUCCESS : r.onData(payload.slice(0, length), 0);
            r.onComplete(st);
        }
        @Override public Object attachment() { return attachment; }
        @Override public void attach(Object a) { attachment = a; }
        @Override public void complete(int status, long result) {
            this.status = status;
            this.result = result;
        }
    }
}
