package io.jbof.target.controller;

import io.jbof.nvme.Connect;
import io.jbof.nvme.DiscoveryLog;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.transport.tcp.tls.TlsMode;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The discovery service's one job (Linux's discovery.c): the Discovery Log Page a host sees, built
 * from the subsystems that admit it and the ports the target listens on.
 */
final class DiscoveryService {
    private DiscoveryService() {}

    /** The Discovery Log Page for {@code hostNqn}: one entry per subsystem it may use and port that subsystem listens on. */
    static ByteBuf logPage(TargetContext target, String hostNqn) {
        List<Subsystem> visible = new ArrayList<>();
        List<List<PortInfo>> portsOf = new ArrayList<>();
        int records = 0;
        for (Subsystem s : target.subsystems()) {
            if (!s.allows(hostNqn)) continue;
            List<PortInfo> ports = new ArrayList<>();
            for (PortInfo p : target.ports()) if (s.listener(p.portId()) != null) ports.add(p);
            visible.add(s);
            portsOf.add(ports);
            records += ports.size();
        }
        ByteBuf b = AdminCommands.zeroed(DiscoveryLog.HEADER_SIZE + records * DiscoveryLog.ENTRY_SIZE);
        b.setLongLE(DiscoveryLog.GENCTR, target.discoveryGeneration());
        b.setLongLE(DiscoveryLog.NUMREC, records);
        b.setShortLE(DiscoveryLog.RECFMT, 0);
        int at = DiscoveryLog.HEADER_SIZE;
        for (int i = 0; i < visible.size(); i++) {
            Subsystem s = visible.get(i);
            for (PortInfo p : portsOf.get(i)) {
                b.setByte(at + DiscoveryLog.TRTYPE, p.transport().trtype());
                b.setByte(at + DiscoveryLog.ADRFAM, p.ipv6() ? DiscoveryLog.ADRFAM_IPV6 : DiscoveryLog.ADRFAM_IPV4);
                b.setByte(at + DiscoveryLog.SUBTYPE, DiscoveryLog.SUBTYPE_NVME);
                b.setByte(
                        at + DiscoveryLog.TREQ,
                        p.tls() == TlsMode.REQUIRED
                                ? DiscoveryLog.TREQ_SECURE_REQUIRED
                                : DiscoveryLog.TREQ_SECURE_NOT_REQUIRED);
                b.setShortLE(at + DiscoveryLog.PORTID, p.portId());
                b.setShortLE(at + DiscoveryLog.CNTLID, Connect.CNTLID_DYNAMIC);
                b.setShortLE(at + DiscoveryLog.ASQSZ, TargetLimits.ADMIN_QUEUE_ENTRIES);
                Connect.writeSpacePadded(b, at + DiscoveryLog.TRSVCID, 32, Integer.toString(p.port()));
                Connect.writeString(b, at + DiscoveryLog.SUBNQN, 256, s.nqn());
                Connect.writeSpacePadded(b, at + DiscoveryLog.TRADDR, 256, p.address());
                p.transport().writeTsas(b, at + DiscoveryLog.TSAS, p.tls() != TlsMode.OFF);
                at += DiscoveryLog.ENTRY_SIZE;
            }
        }
        return b;
    }
}
