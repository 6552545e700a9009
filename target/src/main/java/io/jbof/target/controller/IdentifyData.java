package io.jbof.target.controller;

import io.jbof.nvme.AnaLog;
import io.jbof.nvme.Connect;
import io.jbof.nvme.IdentifyController;
import io.jbof.nvme.IdentifyNamespace;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.Properties;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.netty.buffer.ByteBuf;
import java.util.UUID;

/** Fills the Identify data structures a controller returns. */
final class IdentifyData {
    private IdentifyData() {}

    static final String FIRMWARE = "0.1.0";
    /** How long a group may stay in the change state before the host may give up on it, seconds (nvmet: 10). */
    static final int ANA_TRANSITION_SECONDS = 10;

    /**
     * {@code keyedSgls}: the host came over RDMA, where data moves through keyed SGL data blocks (Linux's host requires the bit);
     * {@code transportMaxTransfer}: the most its transport carries in one command, which MDTS must not exceed.
     */
    static void controller(ByteBuf b, Controller c, TargetLimits limits, boolean keyedSgls, long transportMaxTransfer) {
        Subsystem s = c.subsystem();
        b.setZero(0, IdentifyController.SIZE);
        Connect.writeSpacePadded(b, IdentifyController.SN, 20, c.isDiscovery() ? "jbof-discovery" : s.serial());
        Connect.writeSpacePadded(
                b, IdentifyController.MN, 40, c.isDiscovery() ? "jbof discovery controller" : s.model());
        Connect.writeSpacePadded(b, IdentifyController.FR, 8, FIRMWARE);
        b.setByte(IdentifyController.RAB, 6);
        // Several ports, several controllers (hosts), and ANA reporting: what Linux's native multipath keys on.
        b.setByte(
                IdentifyController.CMIC,
                c.isDiscovery()
                        ? 0
                        : IdentifyController.CMIC_MULTI_PORT
                                | IdentifyController.CMIC_MULTI_CONTROLLER
                                | IdentifyController.CMIC_ANA);
        b.setByte(IdentifyController.MDTS, limits.mdtsField(transportMaxTransfer));
        b.setShortLE(IdentifyController.CNTLID, c.id());
        b.setIntLE(IdentifyController.VER, Properties.VERSION_1_3);
        b.setIntLE(
                IdentifyController.OAES,
                c.isDiscovery()
                        ? IdentifyController.OAES_DISCOVERY_CHANGE
                        : IdentifyController.OAES_NS_ATTRIBUTE | IdentifyController.OAES_ANA_CHANGE);
        b.setIntLE(IdentifyController.CTRATT, IdentifyController.CTRATT_HOST_ID_128);
        b.setByte(
                IdentifyController.CNTRLTYPE,
                c.isDiscovery() ? IdentifyController.CNTRLTYPE_DISCOVERY : IdentifyController.CNTRLTYPE_IO);
        b.setByte(IdentifyController.ACL, 3);
        b.setByte(IdentifyController.AERL, AdminCommands.AER_LIMIT - 1);
        b.setByte(IdentifyController.FRMW, 0x3); // one slot, read-only
        b.setByte(IdentifyController.LPA, IdentifyController.LPA_EXTENDED_DATA);
        b.setByte(IdentifyController.ELPE, 0);
        b.setByte(IdentifyController.NPSS, 0);
        b.setShortLE(IdentifyController.KAS, 10); // 100 ms units: keep-alive granularity 1 s
        b.setByte(IdentifyController.SQES, 0x66);
        b.setByte(IdentifyController.CQES, 0x44);
        b.setShortLE(IdentifyController.MAXCMD, limits.maxQueueEntries());
        if (!c.isDiscovery()) {
            // As nvmet: NN and MNAN fixed at the most NSIDs a subsystem may hold (Linux requires 0 < MNAN <= NN with
            // ANA,
            // and sizes its ANA log buffer from them); the Active Namespace ID list says which are there.
            b.setIntLE(IdentifyController.NN, TargetLimits.MAX_NAMESPACES);
            b.setIntLE(IdentifyController.MNAN, TargetLimits.MAX_NAMESPACES);
            b.setByte(IdentifyController.ANATT, ANA_TRANSITION_SECONDS);
            b.setByte(IdentifyController.ANACAP, IdentifyController.ANACAP_ALL_STATES);
            b.setIntLE(IdentifyController.ANAGRPMAX, AnaLog.MAX_GROUPS);
            b.setIntLE(IdentifyController.NANAGRPID, AnaLog.MAX_GROUPS);
            b.setShortLE(IdentifyController.ONCS, IdentifyController.ONCS_DSM | IdentifyController.ONCS_WRITE_ZEROES);
            // Volatile write cache present (Flush is meaningful); Flush with NSID FFFFFFFFh supported.
            b.setByte(IdentifyController.VWC, 0x7);
        }
        b.setIntLE(
                IdentifyController.SGLS,
                IdentifyController.SGLS_SUPPORTED
                        | IdentifyController.SGLS_OFFSET
                        | (keyedSgls ? IdentifyController.SGLS_KEYED : 0));
        Connect.writeString(b, IdentifyController.SUBNQN, 256, c.isDiscovery() ? Nqn.DISCOVERY : s.nqn());
        b.setIntLE(IdentifyController.IOCCSZ, (64 + limits.inCapsuleData()) / 16);
        b.setIntLE(IdentifyController.IORCSZ, 1);
        b.setShortLE(IdentifyController.ICDOFF, 0);
        b.setByte(IdentifyController.FCATT, 0);
        b.setByte(IdentifyController.MSDBD, 1);
        b.setShortLE(IdentifyController.OFCS, IdentifyController.OFCS_DISCONNECT);
        // Power state 0: 25 W max (units of 0.01 W), entry/exit latency unspecified.
        b.setShortLE(IdentifyController.PSD0, 2500);
        b.writerIndex(IdentifyController.SIZE);
    }

    static void namespace(ByteBuf b, TargetNamespace ns) {
        b.setZero(0, IdentifyNamespace.SIZE);
        if (ns != null) {
            b.setLongLE(IdentifyNamespace.NSZE, ns.blocks());
            b.setLongLE(IdentifyNamespace.NCAP, ns.blocks());
            b.setLongLE(IdentifyNamespace.NUSE, ns.blocks());
            b.setByte(IdentifyNamespace.NLBAF, 0);
            b.setByte(IdentifyNamespace.FLBAS, 0);
            // Bit 3: Write Zeroes may deallocate. Bits 2:0: deallocated blocks read as zeroes (files: holes) or
            // unreported (devices: discard).
            b.setByte(
                    IdentifyNamespace.DLFEAT,
                    (ns.deallocatedReadZeroes() ? IdentifyNamespace.DLFEAT_READ_ZEROES : 0) | (1 << 3));
            if (ns.physicalBlockSize() > ns.blockSize() || ns.optimalIoBytes() > 0) {
                // OPTPERF, as nvmet's bdev backend: a Linux host takes NPWG as the physical block size and NOWS as
                // io_opt.
                int perPhysical = ns.physicalBlockSize() / ns.blockSize() - 1;
                b.setByte(IdentifyNamespace.NSFEAT, IdentifyNamespace.NSFEAT_OPTPERF);
                b.setShortLE(IdentifyNamespace.NPWG, perPhysical);
                b.setShortLE(IdentifyNamespace.NPWA, perPhysical);
                b.setShortLE(IdentifyNamespace.NOWS, Math.max(ns.optimalIoBytes() / ns.blockSize(), 1) - 1);
            }
            b.setByte(IdentifyNamespace.NMIC, 1); // may be shared by several controllers
            b.setIntLE(IdentifyNamespace.ANAGRPID, ns.anaGroup());
            b.setByte(IdentifyNamespace.NSATTR, ns.readOnly() ? IdentifyNamespace.NSATTR_WRITE_PROTECTED : 0);
            writeUuid(b, IdentifyNamespace.NGUID, ns.uuid());
            long eui = ns.uuid().getMostSignificantBits();
            b.setLong(IdentifyNamespace.EUI64, eui);
            b.setByte(IdentifyNamespace.LBAF0 + 2, ns.blockShift()); // LBADS; MS 0, RP 0
        }
        b.writerIndex(IdentifyNamespace.SIZE);
    }

    static void activeNamespaces(ByteBuf b, Subsystem s, int after) {
        b.setZero(0, 4096);
        int i = 0;
        for (TargetNamespace ns : s.namespaces()) {
            if (Integer.compareUnsigned(ns.nsid(), after) > 0 && i < 1024) b.setIntLE(4 * i++, ns.nsid());
        }
        b.writerIndex(4096);
    }

    static void descriptors(ByteBuf b, TargetNamespace ns) {
        b.setZero(0, 4096);
        int at = 0;
        b.setByte(at, IdentifyNamespace.NIDT_NGUID);
        b.setByte(at + 1, 16);
        writeUuid(b, at + 4, ns.uuid());
        at += 20;
        b.setByte(at, IdentifyNamespace.NIDT_UUID);
        b.setByte(at + 1, 16);
        writeUuid(b, at + 4, ns.uuid());
        at += 20;
        b.setByte(at, IdentifyNamespace.NIDT_CSI);
        b.setByte(at + 1, 1);
        b.setByte(at + 4, 0); // NVM command set
        b.writerIndex(4096);
    }

    private static void writeUuid(ByteBuf b, int at, UUID u) {
        b.setLong(at, u.getMostSignificantBits());
        b.setLong(at + 8, u.getLeastSignificantBits());
    }
}
