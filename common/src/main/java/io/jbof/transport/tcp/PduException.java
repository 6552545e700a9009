package io.jbof.transport.tcp;

/**
 * A fatal NVMe/TCP protocol error on a connection: the peer gets a TermReq with this fatal error
 * status and field offset, and the connection ends.
 */
public final class PduException extends RuntimeException {
    private final int fes;
    private final int fei;

    public PduException(int fes, int fei, String message) {
        super(message);
        this.fes = fes;
        this.fei = fei;
    }

    public int fes() {
        return fes;
    }

    public int fei() {
        return fei;
    }
}
