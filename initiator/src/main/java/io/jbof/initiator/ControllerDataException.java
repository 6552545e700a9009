package io.jbof.initiator;

import java.io.IOException;

/**
 * A value the controller reported (Identify, a property, ICResp) that no host can use: the controller
 * is input like any other, and a field used for arithmetic is checked before it is used.
 */
public final class ControllerDataException extends IOException {
    private final String field;
    private final long value;

    public ControllerDataException(String field, long value, String why) {
        super("the controller reports " + field + " = " + value + ", " + why
                + "; this target is misconfigured or not an NVMe controller");
        this.field = field;
        this.value = value;
    }

    /** The field, as the specification names it (MDTS, IOCCSZ, LBADS, NSZE, CAP.MQES, MAXCMD). */
    public String field() {
        return field;
    }

    public long value() {
        return value;
    }
}
