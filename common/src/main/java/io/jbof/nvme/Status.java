package io.jbof.nvme;

/**
 * NVMe completion status as the 15-bit value of CQE DW3 bits 31:17 (SC in bits 7:0, SCT in 10:8,
 * CRD 12:11, More 13, DNR 14). The constants below are (SCT << 8) | SC; {@link #dnr(int)} adds DNR.
 */
public final class Status {
    private Status() {}

    public static final int SCT_GENERIC = 0;
    public static final int SCT_COMMAND_SPECIFIC = 1;
    public static final int SCT_MEDIA = 2;
    public static final int SCT_PATH = 3;

    public static final int DNR = 1 << 14;

    // Generic command status (SCT 0)
    public static final int SUCCESS = 0x00;
    public static final int INVALID_OPCODE = 0x01;
    public static final int INVALID_FIELD = 0x02;
    public static final int CID_CONFLICT = 0x03;
    public static final int DATA_TRANSFER_ERROR = 0x04;
    public static final int INTERNAL_ERROR = 0x06;
    public static final int ABORT_REQUESTED = 0x07;
    public static final int ABORTED_SQ_DELETION = 0x08;
    public static final int INVALID_NAMESPACE = 0x0B;
    public static final int COMMAND_SEQUENCE_ERROR = 0x0C;
    public static final int INVALID_SGL_SEGMENT_DESCRIPTOR = 0x0D;
    public static final int INVALID_NUMBER_OF_SGL_DESCRIPTORS = 0x0E;
    public static final int DATA_SGL_LENGTH_INVALID = 0x0F;
    public static final int SGL_DESCRIPTOR_TYPE_INVALID = 0x11;
    public static final int SGL_OFFSET_INVALID = 0x16;
    public static final int HOST_ID_INCONSISTENT_FORMAT = 0x18;
    public static final int KEEP_ALIVE_EXPIRED = 0x19;
    public static final int KEEP_ALIVE_INVALID = 0x1A;
    public static final int NAMESPACE_WRITE_PROTECTED = 0x20;
    public static final int TRANSIENT_TRANSPORT_ERROR = 0x22;
    public static final int LBA_OUT_OF_RANGE = 0x80;
    public static final int CAPACITY_EXCEEDED = 0x81;
    public static final int NAMESPACE_NOT_READY = 0x82;

    // Command specific status (SCT 1)
    public static final int INVALID_QUEUE_IDENTIFIER = 0x101;
    public static final int INVALID_QUEUE_SIZE = 0x102;
    public static final int ASYNC_EVENT_LIMIT_EXCEEDED = 0x105;
    public static final int INVALID_LOG_PAGE = 0x109;
    public static final int FEATURE_NOT_SAVEABLE = 0x10D;
    public static final int FEATURE_NOT_CHANGEABLE = 0x10E;
    public static final int CONNECT_INCOMPATIBLE_FORMAT = 0x180;
    public static final int CONNECT_CONTROLLER_BUSY = 0x181;
    public static final int CONNECT_INVALID_PARAMETERS = 0x182;
    public static final int CONNECT_RESTART_DISCOVERY = 0x183;
    public static final int CONNECT_INVALID_HOST = 0x184;
    /** In-band authentication is required before this command (Linux: NVME_SC_AUTH_REQUIRED). */
    public static final int AUTHENTICATION_REQUIRED = 0x191;

    // Media and data integrity errors (SCT 2)
    public static final int WRITE_FAULT = 0x280;
    public static final int UNRECOVERED_READ_ERROR = 0x281;

    // Path related status (SCT 3): the host retries on another path (Linux fails the I/O over)
    public static final int ANA_PERSISTENT_LOSS = 0x301;
    public static final int ANA_INACCESSIBLE = 0x302;
    public static final int ANA_TRANSITION = 0x303;

    public static int dnr(int status) {
        return status | DNR;
    }

    public static int sct(int status) {
        return (status >> 8) & 0x7;
    }

    public static int sc(int status) {
        return status & 0xFF;
    }

    public static boolean isSuccess(int status) {
        return (status & 0x7FF) == 0;
    }

    public static boolean isDnr(int status) {
        return (status & DNR) != 0;
    }

    /** A readable name, as nvme-cli would print it, for logs and exception messages. */
    public static String describe(int status) {
        String name;
        switch (status & 0x7FF) {
            case SUCCESS:
                name = "Success";
                break;
            case INVALID_OPCODE:
                name = "Invalid Command Opcode";
                break;
            case INVALID_FIELD:
                name = "Invalid Field in Command";
                break;
            case CID_CONFLICT:
                name = "Command ID Conflict";
                break;
            case DATA_TRANSFER_ERROR:
                name = "Data Transfer Error";
                break;
            case INTERNAL_ERROR:
                name = "Internal Error";
                break;
            case ABORT_REQUESTED:
                name = "Command Abort Requested";
                break;
            case ABORTED_SQ_DELETION:
                name = "Command Aborted due to SQ Deletion";
                break;
            case INVALID_NAMESPACE:
                name = "Invalid Namespace or Format";
                break;
            case COMMAND_SEQUENCE_ERROR:
                name = "Command Sequence Error";
                break;
            case INVALID_SGL_SEGMENT_DESCRIPTOR:
                name = "Invalid SGL Segment Descriptor";
                break;
            case INVALID_NUMBER_OF_SGL_DESCRIPTORS:
                name = "Invalid Number of SGL Descriptors";
                break;
            case DATA_SGL_LENGTH_INVALID:
                name = "Data SGL Length Invalid";
                break;
            case SGL_DESCRIPTOR_TYPE_INVALID:
                name = "SGL Descriptor Type Invalid";
                break;
            case SGL_OFFSET_INVALID:
                name = "SGL Offset Invalid";
                break;
            case HOST_ID_INCONSISTENT_FORMAT:
                name = "Host Identifier Inconsistent Format";
                break;
            case KEEP_ALIVE_EXPIRED:
                name = "Keep Alive Timer Expired";
                break;
            case KEEP_ALIVE_INVALID:
                name = "Keep Alive Timeout Invalid";
                break;
            case NAMESPACE_WRITE_PROTECTED:
                name = "Namespace is Write Protected";
                break;
            case TRANSIENT_TRANSPORT_ERROR:
                name = "Transient Transport Error";
                break;
            case LBA_OUT_OF_RANGE:
                name = "LBA Out of Range";
                break;
            case CAPACITY_EXCEEDED:
                name = "Capacity Exceeded";
                break;
            case NAMESPACE_NOT_READY:
                name = "Namespace Not Ready";
                break;
            case INVALID_QUEUE_IDENTIFIER:
                name = "Invalid Queue Identifier";
                break;
            case INVALID_QUEUE_SIZE:
                name = "Invalid Queue Size";
                break;
            case ASYNC_EVENT_LIMIT_EXCEEDED:
                name = "Asynchronous Event Request Limit Exceeded";
                break;
            case INVALID_LOG_PAGE:
                name = "Invalid Log Page";
                break;
            case FEATURE_NOT_SAVEABLE:
                name = "Feature Identifier Not Saveable";
                break;
            case FEATURE_NOT_CHANGEABLE:
                name = "Feature Not Changeable";
                break;
            case CONNECT_INCOMPATIBLE_FORMAT:
                name = "Connect Incompatible Format";
                break;
            case CONNECT_CONTROLLER_BUSY:
                name = "Connect Controller Busy";
                break;
            case CONNECT_INVALID_PARAMETERS:
                name = "Connect Invalid Parameters";
                break;
            case CONNECT_RESTART_DISCOVERY:
                name = "Connect Restart Discovery";
                break;
            case CONNECT_INVALID_HOST:
                name = "Connect Invalid Host";
                break;
            case AUTHENTICATION_REQUIRED:
                name = "Authentication Required";
                break;
            case WRITE_FAULT:
                name = "Write Fault";
                break;
            case UNRECOVERED_READ_ERROR:
                name = "Unrecovered Read Error";
                break;
            default:
                name = "Unknown status";
                break;
        }
        return String.format("%s (SCT 0x%x SC 0x%02x%s)", name, sct(status), sc(status), isDnr(status) ? ", DNR" : "");
    }
}
