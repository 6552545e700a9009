package io.jbof.microbench;

import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.NvmeCompletion;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Sgl;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/** The 64-byte command and 16-byte response capsules as flyweights over one direct buffer: encode, decode, SGL. */
@State(Scope.Thread)
public class CapsuleBench {
    private ByteBuf sqe;
    private ByteBuf cqe;
    private final NvmeCommand cmd = new NvmeCommand();
    private final NvmeCompletion cpl = new NvmeCompletion();
    private long lba;

    @Setup
    public void setup() {
        sqe = Unpooled.directBuffer(NvmeCommand.SIZE).writerIndex(NvmeCommand.SIZE);
        cqe = Unpooled.directBuffer(NvmeCompletion.SIZE).writerIndex(NvmeCompletion.SIZE);
        cmd.wrap(sqe, 0);
        cpl.wrap(cqe, 0);
    }

    @Benchmark
    public ByteBuf encodeReadCommand() {
        lba += 8;
        cmd.clear()
                .opcode(Opcodes.IO_READ)
                .flags(NvmeCommand.FLAGS_SGL)
                .cid((int) lba & 0xFFFF)
                .nsid(1);
        cmd.cdw(10, (int) lba).cdw(11, (int) (lba >>> 32)).cdw(12, 7);
        Sgl.write(sqe, 0, 0, 32768, Sgl.ID_TCP_TRANSPORT);
        return sqe;
    }

    @Benchmark
    public void decodeReadCommandAndSgl(Blackhole bh) {
        bh.consume(cmd.opcode());
        bh.consume(cmd.cid());
        bh.consume(cmd.nsid());
        bh.consume(((long) cmd.cdw(11) << 32) | (cmd.cdw(10) & 0xFFFFFFFFL));
        bh.consume((cmd.cdw(12) & 0xFFFF) + 1);
        bh.consume(sqe.getLongLE(NvmeCommand.OFF_DPTR)); // SGL address / offset
        bh.consume(sqe.getIntLE(NvmeCommand.OFF_DPTR + 8)); // length
        bh.consume(sqe.getUnsignedByte(NvmeCommand.OFF_DPTR + 15)); // identifier: type and subtype
    }

    @Benchmark
    public int encodeAndDecodeCompletion() {
        NvmeCompletion.write(cqe, 0, 0, 5, 1, 42, 0);
        return cpl.cid() + cpl.status();
    }
}
