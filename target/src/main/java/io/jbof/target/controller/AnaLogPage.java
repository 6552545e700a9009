package io.jbof.target.controller;

import io.jbof.nvme.AnaLog;
import io.jbof.nvme.AnaState;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Listener;
import io.jbof.target.subsystem.Subsystem;
import io.netty.buffer.ByteBuf;
import java.util.Collection;

/**
 * The Asymmetric Namespace Access log page (nvmet's nvmet_execute_get_log_page_ana): one descriptor per
 * ANA group in use, each with the state hosts on the controller's port see and its NSIDs in ascending order.
 */
final class AnaLogPage {
    private AnaLogPage() {}

    /** {@code groupsOnly}: LSP bit 0 (RGO), descriptors without their NSID lists. */
    static ByteBuf of(Controller c, boolean groupsOnly) {
        Subsystem s = c.subsystem();
        Listener listener = c.listener();
        Collection<TargetNamespace> namespaces = s.namespaces(); // one snapshot: the API may add or remove meanwhile
        int[] groups = Subsystem.anaGroups(namespaces);
        int size = AnaLog.HEADER_SIZE + groups.length * AnaLog.DESC_SIZE + (groupsOnly ? 0 : 4 * namespaces.size());
        ByteBuf b = AdminCommands.zeroed(size);
        long changes = s.anaChangeCount();
        b.setLongLE(AnaLog.CHGCNT, changes);
        b.setShortLE(AnaLog.NGRPS, groups.length);
        int at = AnaLog.HEADER_SIZE;
        for (int g : groups) {
            int count = 0;
            if (!groupsOnly) {
                for (TargetNamespace ns : namespaces) { // ascending NSIDs: Linux walks the list in order
                    if (ns.anaGroup() == g) b.setIntLE(at + AnaLog.DESC_SIZE + 4 * count++, ns.nsid());
                }
            }
            b.setIntLE(at + AnaLog.D_GRPID, g);
            b.setIntLE(at + AnaLog.D_NNSIDS, count);
            b.setLongLE(at + AnaLog.D_CHGCNT, changes);
            b.setByte(at + AnaLog.D_STATE, (listener == null ? AnaState.OPTIMIZED : listener.state(g)).code);
            at += AnaLog.DESC_SIZE + 4 * count;
        }
        return b.writerIndex(at);
    }
}
