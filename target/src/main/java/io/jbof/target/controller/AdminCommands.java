package io.jbof.target.controller;

import io.jbof.nvme.AnaLog;
import io.jbof.nvme.Connect;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Status;
import io.jbof.target.namespace.TargetNamespace;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.transport.TargetRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/** The admin command set: Identify, Get Log Page, Set/Get Features, Keep Alive, AER, Abort. */
final class AdminCommands {
    static final int AER_LIMIT = 4;
    private static final int NSID_ALL = 0xFFFFFFFF;

    private final TargetContext target;
    private final long startNanos = System.nanoTime();

    AdminCommands(TargetContext target) {
        this.target = target;
    }

    void handle(QueueSession session, TargetRequest req) {
        Controller c = session.controller();
        NvmeCommand cmd = req.command();
        int opcode = cmd.opcode();
        if (!c.ready() && opcode != Opcodes.ADMIN_KEEP_ALIVE) {
            req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            return;
        }
        switch (opcode) {
            case Opcodes.ADMIN_IDENTIFY:
                identify(c, req);
                break;
            case Opcodes.ADMIN_GET_LOG_PAGE:
                getLogPage(c, req);
                break;
            case Opcodes.ADMIN_SET_FEATURES:
                setFeatures(c, req);
                break;
            case Opcodes.ADMIN_GET_FEATURES:
                getFeatures(c, req);
                break;
            case Opcodes.ADMIN_KEEP_ALIVE:
                req.complete(Status.SUCCESS, 0);
                break;
            case Opcodes.ADMIN_ASYNC_EVENT_REQUEST:
                if (!c.holdAer(req, AER_LIMIT)) req.complete(Status.dnr(Status.ASYNC_EVENT_LIMIT_EXCEEDED), 0);
                break;
            case Opcodes.ADMIN_ABORT:
                req.complete(Status.SUCCESS, 1); // DW0 bit 0: the command was not aborted
                break;
            default:
                req.complete(Status.dnr(Status.INVALID_OPCODE), 0);
        }
    }

    /** Sends up to the host's buffer length of a data structure, then completes. */
    private static void reply(TargetRequest req, ByteBuf data) {
        int len = req.transferLength();
        if (len < 0) {
            data.release();
            req.complete(req.sglStatus(), 0);
            return;
        }
        if (len < data.readableBytes()) data.writerIndex(data.readerIndex() + len);
        if (len > data.readableBytes()) data = padded(data, len);
        if (data.readableBytes() > 0) req.sendData(data);
        else data.release();
        req.complete(Status.SUCCESS, 0);
    }

    /**
     * {@code data} followed by zeroes up to {@code length} (at most MDTS): the host's whole buffer is
     * written, as nvmet does, so a host that counts the bytes of a transfer sees it complete.
     */
    static ByteBuf padded(ByteBuf data, int length) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(length, length);
        b.writeBytes(data, data.readerIndex(), data.readableBytes());
        data.release();
        return b.writeZero(length - b.writerIndex());
    }

    private static ByteBuf buffer(int size) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        b.writerIndex(0);
        return b;
    }

    private void identify(Controller c, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int cns = cmd.cdw(10) & 0xFF;
        int nsid = cmd.nsid();
        Subsystem s = c.subsystem();
        if (c.isDiscovery() && cns != 0x01) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        ByteBuf b = buffer(4096);
        switch (cns) {
            case 0x01:
                IdentifyData.controller(
                        b,
                        c,
                        target.limits(),
                        req.queue().transport().keyedSgls(),
                        req.queue().maxTransferBytes());
                break;
            case 0x00:
                if (nsid == 0 || nsid == NSID_ALL) {
                    b.release();
                    req.complete(Status.dnr(Status.INVALID_NAMESPACE), 0);
                    return;
                }
                IdentifyData.namespace(b, s.namespace(nsid)); // an inactive NSID reads as zeroes
                break;
            case 0x02:
                if (nsid == 0xFFFFFFFE || nsid == NSID_ALL) {
                    b.release();
                    req.complete(Status.dnr(Status.INVALID_NAMESPACE), 0);
                    return;
                }
                IdentifyData.activeNamespaces(b, s, nsid);
                break;
            case 0x03: {
                TargetNamespace ns = s.namespace(nsid);
                if (ns == null) {
                    b.release();
                    req.complete(Status.dnr(Status.INVALID_NAMESPACE), 0);
                    return;
                }
                IdentifyData.descriptors(b, ns);
                break;
            }
            default:
                b.release();
                req.complete(Status.dnr(Status.INVALID_FIELD), 0);
                return;
        }
        reply(req, b);
    }

    // ---- Get Log Page ----

    private void getLogPage(Controller c, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int cdw10 = cmd.cdw(10);
        int lid = cdw10 & 0xFF;
        boolean retain = (cdw10 & (1 << 15)) != 0;
        long numd = (((cmd.cdw(11) & 0xFFFFL) << 16) | ((cdw10 >>> 16) & 0xFFFF)) + 1;
        long length = numd * 4;
        long offset = (cmd.cdw(12) & 0xFFFFFFFFL) | ((long) cmd.cdw(13) << 32);
        if (req.transferLength() < 0) {
            req.complete(req.sglStatus(), 0); // the data pointer itself is bad: its own status
            return;
        }
        // NUMD is 32 bits: without these bounds a host could make us allocate 16 GiB (found by fuzzing).
        if ((offset & 3) != 0
                || length > req.transferLength()
                || length > target.limits().maxTransferBytes(req.queue().maxTransferBytes())) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        ByteBuf page;
        if (c.isDiscovery()) {
            if (lid != Opcodes.LOG_DISCOVERY) {
                req.complete(Status.dnr(Status.INVALID_LOG_PAGE), 0);
                return;
            }
            page = DiscoveryService.logPage(target, c.hostNqn());
            if (!retain) c.discoveryLogRead();
        } else {
            switch (lid) {
                case Opcodes.LOG_ERROR_INFORMATION:
                    page = zeroed(64);
                    break;
                case Opcodes.LOG_SMART_HEALTH:
                    page = smart(c);
                    break;
                case Opcodes.LOG_FIRMWARE_SLOT:
                    page = firmwareSlots();
                    break;
                case Opcodes.LOG_CHANGED_NAMESPACES:
                    page = changedNamespaces(c, retain);
                    break;
                case Opcodes.LOG_ANA:
                    page = AnaLogPage.of(c, ((cdw10 >>> 8) & 0xF & AnaLog.LSP_RGO) != 0);
                    if (!retain) c.anaLogRead();
                    break;
                default:
                    req.complete(Status.dnr(Status.INVALID_LOG_PAGE), 0);
                    return;
            }
        }
        int size = page.readableBytes();
        if (offset < 0 || offset > size) { // LPOU is unsigned: a set top bit is past any page
            page.release();
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        // Past the end of the page the host's buffer gets zeroes.
        ByteBuf out = buffer((int) length);
        int copy = (int) Math.min(length, size - offset);
        out.writeBytes(page, page.readerIndex() + (int) offset, copy);
        out.writeZero((int) length - copy);
        page.release();
        reply(req, out);
    }

    /** A pooled direct buffer of {@code size} zero bytes, the shape every log page and Identify reply starts from. */
    static ByteBuf zeroed(int size) {
        ByteBuf b = buffer(size);
        b.writeZero(size);
        return b;
    }

    private ByteBuf smart(Controller c) {
        ByteBuf b = zeroed(512);
        long[] io = c.ioCounters();
        b.setShortLE(1, 273 + 35); // composite temperature, kelvin
        b.setByte(3, 100); // available spare %
        b.setByte(4, 10); // spare threshold %
        // Data units are thousands of 512-byte units, rounded up.
        b.setLongLE(32, (io[2] / 512 + 999) / 1000);
        b.setLongLE(48, (io[3] / 512 + 999) / 1000);
        b.setLongLE(64, io[0]);
        b.setLongLE(80, io[1]);
        b.setLongLE(128, (System.nanoTime() - startNanos) / 3_600_000_000_000L);
        return b;
    }

    private static ByteBuf firmwareSlots() {
        ByteBuf b = zeroed(512);
        b.setByte(0, 1); // active slot 1
        Connect.writeSpacePadded(b, 8, 8, IdentifyData.FIRMWARE);
        return b;
    }

    private static ByteBuf changedNamespaces(Controller c, boolean retain) {
        ByteBuf b = zeroed(4096);
        int[] ids = c.takeChangedNamespaces(retain);
        if (ids.length > 1024) {
            b.setIntLE(0, 0xFFFFFFFF);
        } else {
            for (int i = 0; i < ids.length; i++) b.setIntLE(4 * i, ids[i]);
        }
        return b;
    }

    // ---- Features ----

    private void setFeatures(Controller c, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int cdw10 = cmd.cdw(10);
        int fid = cdw10 & 0xFF;
        int cdw11 = cmd.cdw(11);
        if ((cdw10 & (1 << 31)) != 0) {
            req.complete(Status.dnr(Status.FEATURE_NOT_SAVEABLE), 0);
            return;
        }
        switch (fid) {
            case Opcodes.FEAT_NUMBER_OF_QUEUES: {
                int nsqr = cdw11 & 0xFFFF;
                int ncqr = cdw11 >>> 16;
                if (nsqr == 0xFFFF || ncqr == 0xFFFF || c.isDiscovery()) {
                    req.complete(Status.dnr(Status.INVALID_FIELD), 0);
                    return;
                }
                int max = target.limits().maxIoQueues();
                int granted = Math.min(max, Math.min(nsqr, ncqr) + 1);
                c.grantIoQueues(granted);
                req.complete(Status.SUCCESS, (granted - 1) | ((long) (granted - 1) << 16));
                return;
            }
            case Opcodes.FEAT_KEEP_ALIVE_TIMER:
                c.katoMillis(cdw11);
                req.complete(Status.SUCCESS, 0);
                return;
            case Opcodes.FEAT_ASYNC_EVENT_CONFIG:
                c.asyncEventConfig(cdw11);
                req.complete(Status.SUCCESS, 0);
                return;
            default:
                req.complete(Status.dnr(Status.INVALID_FIELD), 0);
        }
    }

    private void getFeatures(Controller c, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int fid = cmd.cdw(10) & 0xFF;
        int sel = (cmd.cdw(10) >>> 8) & 0x7;
        if (sel == 3) { // supported capabilities: nothing saveable or per-namespace; changeable
            req.complete(Status.SUCCESS, 0x4);
            return;
        }
        switch (fid) {
            case Opcodes.FEAT_NUMBER_OF_QUEUES: {
                int n = (sel == 1 ? target.limits().maxIoQueues() : c.grantedIoQueues()) - 1;
                req.complete(Status.SUCCESS, n | ((long) n << 16));
                return;
            }
            case Opcodes.FEAT_KEEP_ALIVE_TIMER:
                req.complete(Status.SUCCESS, c.katoMillis() & 0xFFFFFFFFL);
                return;
            case Opcodes.FEAT_ASYNC_EVENT_CONFIG:
                req.complete(Status.SUCCESS, c.asyncEventConfig() & 0xFFFFFFFFL);
                return;
            case 0x06: // Volatile Write Cache: enabled (writes are in the page cache until Flush)
                req.complete(Status.SUCCESS, 1);
                return;
            default:
                req.complete(Status.dnr(Status.INVALID_FIELD), 0);
        }
    }
}
