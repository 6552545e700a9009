package io.jbof.nvme;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Fabrics Connect: the command's fields (SQE bytes 40-51) and the 1024-byte Connect data
 * (host identifier, controller ID, subsystem NQN, host NQN).
 */
public final class Connect {
    private Connect() {}

    public static final int OFF_RECFMT = 40;
    public static final int OFF_QID = 42;
    public static final int OFF_SQSIZE = 44;
    public static final int OFF_CATTR = 46;
    public static final int OFF_KATO = 48;

    /** CATTR bit 2: the host disables SQ flow control (no SQHD updates needed). */
    public static final int CATTR_DISABLE_SQ_FLOW = 1 << 2;

    public static final int DATA_SIZE = 1024;
    public static final int DATA_OFF_HOSTID = 0;
    public static final int DATA_OFF_CNTLID = 16;
    public static final int DATA_OFF_SUBNQN = 256;
    public static final int DATA_OFF_HOSTNQN = 512;
    public static final int NQN_FIELD = 256;

    /** Dynamic controller model: the host asks for any controller on the admin queue. */
    public static final int CNTLID_DYNAMIC = 0xFFFF;

    /** Connect response DW0 for Invalid Parameters: IATTR bit 0 = 1 means the offset is in the data. */
    public static int invalidParameterInData(int offset) {
        return 1 | (offset << 16);
    }

    public static int invalidParameterInCommand(int offset) {
        return offset << 16;
    }

    /** A new 1024-byte Connect data buffer: host identifier, controller ID, subsystem and host NQNs. */
    public static ByteBuf data(UUID hostId, int cntlid, String subNqn, String hostNqn) {
        ByteBuf data = Unpooled.buffer(DATA_SIZE, DATA_SIZE).writeZero(DATA_SIZE);
        data.setLong(DATA_OFF_HOSTID, hostId.getMostSignificantBits());
        data.setLong(DATA_OFF_HOSTID + 8, hostId.getLeastSignificantBits());
        data.setShortLE(DATA_OFF_CNTLID, cntlid);
        writeString(data, DATA_OFF_SUBNQN, NQN_FIELD, subNqn);
        writeString(data, DATA_OFF_HOSTNQN, NQN_FIELD, hostNqn);
        return data;
    }

    public static String readString(ByteBuf data, int at, int fieldLength) {
        int end = at;
        int limit = at + fieldLength;
        while (end < limit && data.getByte(end) != 0) end++;
        return data.toString(at, end - at, StandardCharsets.UTF_8);
    }

    /** Writes a NUL-padded string field; the caller validated its length. */
    public static void writeString(ByteBuf data, int at, int fieldLength, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, fieldLength - 1);
        data.setBytes(at, bytes, 0, n);
        data.setZero(at + n, fieldLength - n);
    }

    /** Writes an ASCII field padded with spaces, as Identify's SN/MN/FR and discovery TRSVCID are. */
    public static void writeSpacePadded(ByteBuf data, int at, int fieldLength, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
        int n = Math.min(bytes.length, fieldLength);
        data.setBytes(at, bytes, 0, n);
        for (int i = n; i < fieldLength; i++) data.setByte(at + i, ' ');
    }

    public static String readSpacePadded(ByteBuf data, int at, int fieldLength) {
        return data.toString(at, fieldLength, StandardCharsets.US_ASCII)
                .replace('\0', ' ')
                .trim();
    }
}
