package io.jbof.nvme;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class SglTest {
    private static NvmeCommand command(int opcode, long address, int length) {
        ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        NvmeCommand c = new NvmeCommand().wrap(sqe, 0).opcode(opcode).flags(NvmeCommand.FLAGS_SGL);
        Sgl.write(sqe, 0, address, length, Sgl.ID_IN_CAPSULE);
        return c;
    }

    @Test
    void inCapsuleDataWithinTheLimitAndCarriedIsAccepted() {
        assertEquals(Status.SUCCESS, Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 0, 4096), 8192, 4096, true));
        assertEquals(Status.SUCCESS, Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 0, 4096), 8192, 4160, false));
        assertEquals(Status.SUCCESS, Sgl.checkInCapsule(command(Opcodes.IO_READ, 0, 0), 8192, 0, true));
    }

    @Test
    void inCapsuleDataToTheHostIsAnInvalidField() {
        assertEquals(
                Status.dnr(Status.INVALID_FIELD), Sgl.checkInCapsule(command(Opcodes.IO_READ, 0, 4096), 8192, 0, true));
    }

    @Test
    void aNonZeroOffsetOrALengthBeyondTheLimitIsAnInvalidSglOffset() {
        assertEquals(
                Status.dnr(Status.SGL_OFFSET_INVALID),
                Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 512, 4096), 8192, 4096, true));
        assertEquals(
                Status.dnr(Status.SGL_OFFSET_INVALID),
                Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 0, 16384), 8192, 16384, true));
    }

    @Test
    void dataTheCapsuleDoesNotCarryIsAnInvalidSglLength() {
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 0, 4096), 8192, 4000, true));
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 0, 4096), 8192, 4160, true));
        assertEquals(
                Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                Sgl.checkInCapsule(command(Opcodes.IO_WRITE, 0, 4096), 8192, 4000, false));
    }
}
