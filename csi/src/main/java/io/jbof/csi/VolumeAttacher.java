package io.jbof.csi;

import java.io.IOException;
import java.util.List;

/**
 * How a node attaches a volume as a block device, and takes it away again: the one seam between the
 * Node service (format, mount, publish) and the way the node reaches its storage host. A detach that
 * cannot prove the device gone fails rather than report success.
 */
interface VolumeAttacher {
    /** The volume {@code id} (subsystem {@code nqn}, namespace {@code uuid}) as a block device, through {@code portals}. */
    Attachment attach(VolumeId id, String nqn, String uuid, List<String> portals, DhchapSecrets auth)
            throws IOException;

    /** Whether {@code a} still serves its device (a node or driver restart may have ended it). */
    boolean alive(Attachment a) throws IOException;

    /**
     * Takes the device away; fails (INTERNAL) unless it is gone. {@code othersOnSubsystem}: other volumes
     * staged here through the same subsystem, whose connection it must leave.
     */
    void detach(VolumeId id, Attachment a, int othersOnSubsystem) throws IOException;

    /** Makes the device show its namespace's current size after the storage host grew it; the new size. */
    long refreshSize(Attachment a) throws IOException;

    /** Whether a grown volume reaches the device while it is in use (ONLINE expansion). */
    boolean growsOnline();
}
