package io.jbof.target.mgmt;

/** A management call that cannot be done, with the kind of failure its JSON-RPC error code says. */
public final class ManagementException extends RuntimeException {
    /** What went wrong; each kind is one JSON-RPC error code, so clients branch on the code, not the text. */
    public enum Kind {
        PARSE_ERROR(-32700),
        INVALID_REQUEST(-32600),
        METHOD_NOT_FOUND(-32601),
        INVALID_PARAMS(-32602),
        INTERNAL(-32603),
        /** No such subsystem, namespace or host. */
        NOT_FOUND(-32001),
        /** The subsystem, NSID or file is already in use. */
        ALREADY_EXISTS(-32002),
        /** A file or device could not be opened, created, grown, or the configuration not saved. */
        IO_ERROR(-32003);

        public final int code;

        Kind(int code) {
            this.code = code;
        }
    }

    private final Kind kind;

    public ManagementException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public ManagementException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
