package io.jbof.nvme;

/** NVMe opcodes: admin command set, NVM (I/O) command set, and the Fabrics command types. */
public final class Opcodes {
    private Opcodes() {}

    // Admin command set
    public static final int ADMIN_GET_LOG_PAGE = 0x02;
    public static final int ADMIN_IDENTIFY = 0x06;
    public static final int ADMIN_ABORT = 0x08;
    public static final int ADMIN_SET_FEATURES = 0x09;
    public static final int ADMIN_GET_FEATURES = 0x0A;
    public static final int ADMIN_ASYNC_EVENT_REQUEST = 0x0C;
    public static final int ADMIN_KEEP_ALIVE = 0x18;

    // NVM command set
    public static final int IO_FLUSH = 0x00;
    public static final int IO_WRITE = 0x01;
    public static final int IO_READ = 0x02;
    public static final int IO_WRITE_ZEROES = 0x08;
    public static final int IO_DATASET_MANAGEMENT = 0x09;

    /** All Fabrics commands share this opcode; the command type sits in byte 4. */
    public static final int FABRICS = 0x7F;

    public static final int FCTYPE_PROPERTY_SET = 0x00;
    public static final int FCTYPE_CONNECT = 0x01;
    public static final int FCTYPE_PROPERTY_GET = 0x04;
    public static final int FCTYPE_AUTH_SEND = 0x05;
    public static final int FCTYPE_AUTH_RECEIVE = 0x06;
    public static final int FCTYPE_DISCONNECT = 0x08;

    // Identify CNS values
    public static final int CNS_NAMESPACE = 0x00;
    public static final int CNS_CONTROLLER = 0x01;
    public static final int CNS_ACTIVE_NAMESPACES = 0x02;
    public static final int CNS_NAMESPACE_DESCRIPTORS = 0x03;
    public static final int CNS_CS_INDEPENDENT_NAMESPACE = 0x08;

    // Log page identifiers
    public static final int LOG_ERROR_INFORMATION = 0x01;
    public static final int LOG_SMART_HEALTH = 0x02;
    public static final int LOG_FIRMWARE_SLOT = 0x03;
    public static final int LOG_CHANGED_NAMESPACES = 0x04;
    public static final int LOG_ANA = 0x0C;
    public static final int LOG_DISCOVERY = 0x70;

    // Feature identifiers
    public static final int FEAT_NUMBER_OF_QUEUES = 0x07;
    public static final int FEAT_ASYNC_EVENT_CONFIG = 0x0B;
    public static final int FEAT_KEEP_ALIVE_TIMER = 0x0F;

    /** A data transfer direction, from opcode bits 1:0 (01b host to controller, 10b controller to host). */
    public static boolean transfersToController(int opcode) {
        return (opcode & 0x3) == 0x1;
    }

    public static boolean transfersToHost(int opcode) {
        return (opcode & 0x3) == 0x2;
    }

    public static String ioName(int opcode) {
        switch (opcode) {
            case IO_FLUSH:
                return "Flush";
            case IO_WRITE:
                return "Write";
            case IO_READ:
                return "Read";
            case IO_WRITE_ZEROES:
                return "Write Zeroes";
            case IO_DATASET_MANAGEMENT:
                return "Dataset Management";
            default:
                return String.format("I/O opcode 0x%02x", opcode);
        }
    }
}
