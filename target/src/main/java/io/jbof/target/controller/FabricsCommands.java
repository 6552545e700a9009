package io.jbof.target.controller;

import io.jbof.nvme.Connect;
import io.jbof.nvme.Nqn;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Properties;
import io.jbof.nvme.Status;
import io.jbof.nvme.auth.AuthMessages;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.tls.TlsPskIdentity;
import io.jbof.target.subsystem.Listener;
import io.jbof.target.subsystem.Subsystem;
import io.jbof.transport.TargetRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.ForkJoinPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Fabrics commands: Connect (admin and I/O queues), Property Get/Set, Disconnect. */
final class FabricsCommands {
    private static final Logger log = LoggerFactory.getLogger(FabricsCommands.class);

    private final TargetContext target;

    FabricsCommands(TargetContext target) {
        this.target = target;
    }

    void handle(QueueSession session, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int fctype = cmd.fctype();
        if (fctype == Opcodes.FCTYPE_CONNECT) {
            connect(session, req);
            return;
        }
        Controller c = session.controller();
        if (c == null) {
            req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            return;
        }
        if (session.qid() == 0) c.keepAlive();
        if (fctype == Opcodes.FCTYPE_AUTH_SEND || fctype == Opcodes.FCTYPE_AUTH_RECEIVE) {
            authentication(session, req, fctype == Opcodes.FCTYPE_AUTH_SEND);
            return;
        }
        QueueAuthentication auth = session.auth();
        if (auth != null && !auth.authenticated() && fctype != Opcodes.FCTYPE_DISCONNECT) {
            req.complete(Status.dnr(Status.AUTHENTICATION_REQUIRED), 0);
            return;
        }
        switch (fctype) {
            case Opcodes.FCTYPE_PROPERTY_GET:
                if (session.qid() != 0) {
                    req.complete(Status.dnr(Status.INVALID_FIELD), 0);
                    return;
                }
                propertyGet(c, req);
                break;
            case Opcodes.FCTYPE_PROPERTY_SET:
                if (session.qid() != 0) {
                    req.complete(Status.dnr(Status.INVALID_FIELD), 0);
                    return;
                }
                propertySet(session, c, req);
                break;
            case Opcodes.FCTYPE_DISCONNECT:
                req.complete(Status.SUCCESS, 0);
                session.queue().close("Disconnect command");
                break;
            default:
                req.complete(Status.dnr(Status.INVALID_OPCODE), 0);
        }
    }

    // ---- In-band authentication (DH-HMAC-CHAP) ----

    /** Messages larger than this are no DH-HMAC-CHAP message (the largest, a reply with ffdhe8192, is 1168 bytes). */
    private static final int AUTH_MESSAGE_MAX = 4096;

    private void authentication(QueueSession session, TargetRequest req, boolean send) {
        NvmeCommand cmd = req.command();
        QueueAuthentication auth = session.auth();
        if (cmd.byteAt(43) != AuthMessages.SECP
                || cmd.byteAt(41) != AuthMessages.SPSP0
                || cmd.byteAt(42) != AuthMessages.SPSP1) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        if (auth == null) {
            // No secret is configured for this host: there is nothing to authenticate (as Linux's nvmet).
            req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            return;
        }
        if (req.sglStatus() != Status.SUCCESS) {
            req.complete(req.sglStatus(), 0);
            return;
        }
        int length = cmd.u32At(44); // TL (send) or AL (receive)
        if (!send) {
            byte[] m = auth.onReceive();
            if (m == null) {
                req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
                return;
            }
            int n = Math.min(m.length, Math.min(length, Math.max(req.transferLength(), 0)));
            int whole = Math.max(req.transferLength(), 0);
            if (whole > 0) req.sendData(AdminCommands.padded(Unpooled.wrappedBuffer(m, 0, n), whole));
            req.complete(Status.SUCCESS, 0);
            return;
        }
        if (length <= 0 || length > AUTH_MESSAGE_MAX || req.transferLength() != length) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        byte[] m = new byte[length];
        req.receiveData(new TargetRequest.DataReceiver() {
            @Override
            public int onData(ByteBuf chunk, int offset) {
                chunk.getBytes(chunk.readerIndex(), m, offset, chunk.readableBytes());
                return Status.SUCCESS;
            }

            @Override
            public void onComplete(int status) {
                if (status == Status.SUCCESS) auth.onSend(m);
                req.complete(status, 0);
            }
        });
    }

    /** After a Connect of a host with a DH-HMAC-CHAP secret: the queue must authenticate; Connect's DW0 says so. */
    private static long requireAuthentication(
            QueueSession session, Subsystem subsystem, String hostnqn, int qid, int cntlid) {
        DhchapKey[] keys = subsystem.dhchapKeys(hostnqn);
        if (keys == null) return cntlid;
        session.requireAuthentication(new QueueAuthentication(
                keys[0], keys[1], hostnqn, subsystem.nqn(), "controller " + cntlid + " queue " + qid));
        return cntlid | AuthMessages.CONNECT_AUTHREQ_ATR;
    }

    // ---- Connect ----

    private void connect(QueueSession session, TargetRequest req) {
        NvmeCommand cmd = req.command();
        if (!session.claimConnect()) {
            // One Connect per queue, even while the first still waits for its data: a second would make a
            // second controller that only this queue's close could end, and nothing ends it.
            log.warn(
                    "second Connect on queue {} from {}",
                    session.qid(),
                    session.queue().remoteAddress());
            req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            return;
        }
        if (cmd.u16At(Connect.OFF_RECFMT) != 0) {
            session.connectFailed();
            req.complete(
                    Status.dnr(Status.CONNECT_INCOMPATIBLE_FORMAT),
                    Connect.invalidParameterInCommand(Connect.OFF_RECFMT));
            return;
        }
        if (req.sglStatus() != Status.SUCCESS) {
            session.connectFailed();
            req.complete(req.sglStatus(), 0);
            return;
        }
        if (req.transferLength() != Connect.DATA_SIZE) {
            session.connectFailed();
            req.complete(Status.dnr(Status.DATA_SGL_LENGTH_INVALID), 0);
            return;
        }
        ByteBuf data = Unpooled.buffer(Connect.DATA_SIZE, Connect.DATA_SIZE);
        req.receiveData(new TargetRequest.DataReceiver() {
            @Override
            public int onData(ByteBuf chunk, int offset) {
                data.setBytes(offset, chunk, chunk.readerIndex(), chunk.readableBytes());
                return Status.SUCCESS;
            }

            @Override
            public void onComplete(int status) {
                if (status != Status.SUCCESS) {
                    session.connectFailed();
                    req.complete(status, 0);
                } else if (!connectWithData(session, req, data)) {
                    session.connectFailed();
                }
            }
        });
    }

    /** Answers the Connect; true when the queue is now bound to a controller. */
    private boolean connectWithData(QueueSession session, TargetRequest req, ByteBuf data) {
        NvmeCommand cmd = req.command();
        int qid = cmd.u16At(Connect.OFF_QID);
        int sqsize = cmd.u16At(Connect.OFF_SQSIZE);
        int cattr = cmd.byteAt(Connect.OFF_CATTR);
        int kato = cmd.u32At(Connect.OFF_KATO);
        String subnqn = Connect.readString(data, Connect.DATA_OFF_SUBNQN, Connect.NQN_FIELD);
        String hostnqn = Connect.readString(data, Connect.DATA_OFF_HOSTNQN, Connect.NQN_FIELD);
        int cntlid = data.getUnsignedShortLE(Connect.DATA_OFF_CNTLID);
        UUID hostId = new UUID(data.getLong(Connect.DATA_OFF_HOSTID), data.getLong(Connect.DATA_OFF_HOSTID + 8));
        String peer = session.queue().remoteAddress();

        Subsystem subsystem = target.subsystem(subnqn);
        if (subsystem == null) {
            log.warn("Connect from {} (host {}) refused: no subsystem '{}'", peer, hostnqn, subnqn);
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                    Connect.invalidParameterInData(Connect.DATA_OFF_SUBNQN));
            return false;
        }
        if (!Nqn.isValid(hostnqn)) {
            log.warn("Connect from {} refused: host NQN '{}' is invalid: {}", peer, hostnqn, Nqn.problem(hostnqn));
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                    Connect.invalidParameterInData(Connect.DATA_OFF_HOSTNQN));
            return false;
        }
        TlsPskIdentity tls = session.queue().tlsIdentity();
        if (tls != null && (!tls.hostNqn().equals(hostnqn) || !tls.subsysNqn().equals(subnqn))) {
            // The PSK binds one host to one subsystem: a queue secured for another pair cannot connect here.
            log.warn(
                    "Connect from {} refused: host {} to {} on a TLS queue whose PSK identity is for host {} and subsystem {}",
                    peer,
                    hostnqn,
                    subnqn,
                    tls.hostNqn(),
                    tls.subsysNqn());
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_HOST), Connect.invalidParameterInData(Connect.DATA_OFF_HOSTNQN));
            return false;
        }
        boolean discovery = Nqn.DISCOVERY.equals(subnqn);
        Listener listener = discovery ? null : listenerOf(subsystem, session.portId());
        if (!discovery && listener == null) {
            // As nvmet: a subsystem not linked to this port is, for this port, no subsystem at all.
            log.warn(
                    "Connect from {} (host {}) refused: subsystem {} does not listen on the port it came to",
                    peer,
                    hostnqn,
                    subnqn);
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                    Connect.invalidParameterInData(Connect.DATA_OFF_SUBNQN));
            return false;
        }
        if (!discovery && !subsystem.allows(hostnqn)) {
            log.warn("Connect from {} refused: host {} is not allowed on subsystem {}", peer, hostnqn, subnqn);
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_HOST), Connect.invalidParameterInData(Connect.DATA_OFF_HOSTNQN));
            return false;
        }
        boolean sqFlowDisabled = (cattr & Connect.CATTR_DISABLE_SQ_FLOW) != 0;
        int entries = sqsize + 1;
        TargetLimits limits = target.limits();
        if (qid == 0) {
            if (sqsize == 0 || entries > TargetLimits.ADMIN_QUEUE_ENTRIES) {
                req.complete(
                        Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                        Connect.invalidParameterInCommand(Connect.OFF_SQSIZE));
                return false;
            }
            if (cntlid != Connect.CNTLID_DYNAMIC) {
                log.warn("Connect from {} refused: admin queue asked for static controller ID {}", peer, cntlid);
                req.complete(
                        Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                        Connect.invalidParameterInData(Connect.DATA_OFF_CNTLID));
                return false;
            }
            int katoMs = kato == 0 && discovery ? 120_000 : kato;
            Controller c = target.controllers().create(subsystem, discovery, hostnqn, hostId, katoMs, target, listener);
            if (c == null) {
                log.warn(
                        "Connect from {} (host {}) refused: the limit of {} controllers, or every controller ID of this target's range, is taken",
                        peer,
                        hostnqn,
                        limits.maxControllers());
                req.complete(Status.CONNECT_CONTROLLER_BUSY, 0);
                return false;
            }
            session.bind(c, 0, entries, sqFlowDisabled);
            c.attachAdmin(session);
            log.info(
                    "host {} connected to {} from {}: controller {}, KATO {} ms",
                    hostnqn,
                    subnqn,
                    peer,
                    c.id(),
                    katoMs);
            req.complete(
                    Status.SUCCESS, discovery ? c.id() : requireAuthentication(session, subsystem, hostnqn, 0, c.id()));
            return true;
        }
        Controller c = target.controllers().find(cntlid);
        if (c == null || c.subsystem() != subsystem || !c.hostNqn().equals(hostnqn)) {
            log.warn(
                    "I/O queue Connect from {} refused: no controller {} of host {} on {}",
                    peer,
                    cntlid,
                    hostnqn,
                    subnqn);
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                    Connect.invalidParameterInData(Connect.DATA_OFF_CNTLID));
            return false;
        }
        if (c.isDiscovery()) {
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_PARAMETERS), Connect.invalidParameterInCommand(Connect.OFF_QID));
            return false;
        }
        if (sqsize == 0 || entries > limits.maxQueueEntries()) {
            req.complete(
                    Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                    Connect.invalidParameterInCommand(Connect.OFF_SQSIZE));
            return false;
        }
        if (!c.ready()) {
            req.complete(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), 0);
            return false;
        }
        Controller.AttachRefusal problem = c.attachIo(qid, session);
        if (problem != null) {
            log.warn(
                    "I/O queue Connect from {} refused: controller {}, QID {} ({} granted): {}",
                    peer,
                    c.id(),
                    qid,
                    c.grantedIoQueues(),
                    problem.reason);
            boolean inUse = problem == Controller.AttachRefusal.QID_IN_USE;
            req.complete(
                    Status.dnr(inUse ? Status.COMMAND_SEQUENCE_ERROR : Status.CONNECT_INVALID_PARAMETERS),
                    inUse ? 0 : Connect.invalidParameterInCommand(Connect.OFF_QID));
            return false;
        }
        session.bind(c, qid, entries, sqFlowDisabled);
        log.debug("controller {}: I/O queue {} ({} entries) connected from {}", c.id(), qid, entries, peer);
        req.complete(Status.SUCCESS, requireAuthentication(session, subsystem, hostnqn, qid, c.id()));
        return true;
    }

    // ---- Properties ----

    /** The subsystem's listener on {@code portId}; a queue on no port (the loop transport) takes the first. */
    private static Listener listenerOf(Subsystem s, int portId) {
        if (portId != QueueSession.ANY_PORT) return s.listener(portId);
        for (Listener l : s.listeners()) return l;
        return null;
    }

    private static boolean eightBytes(NvmeCommand cmd) {
        return (cmd.byteAt(Properties.OFF_ATTRIB) & 0x7) == 1;
    }

    private void propertyGet(Controller c, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int offset = cmd.u32At(Properties.OFF_OFFSET);
        boolean wide = eightBytes(cmd);
        long value;
        switch (offset) {
            case Properties.CAP:
                value = c.cap();
                break;
            case Properties.VS:
                value = Properties.VERSION_1_3;
                break;
            case Properties.CC:
                value = c.cc() & 0xFFFFFFFFL;
                break;
            case Properties.CSTS:
                value = c.csts() & 0xFFFFFFFFL;
                break;
            default:
                req.complete(Status.dnr(Status.INVALID_FIELD), 0);
                return;
        }
        if (offset == Properties.CAP ? !wide : wide) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        req.complete(Status.SUCCESS, value);
    }

    private void propertySet(QueueSession session, Controller c, TargetRequest req) {
        NvmeCommand cmd = req.command();
        int offset = cmd.u32At(Properties.OFF_OFFSET);
        if (offset != Properties.CC || eightBytes(cmd)) {
            req.complete(Status.dnr(Status.INVALID_FIELD), 0);
            return;
        }
        int value = (int) cmd.u64At(Properties.OFF_VALUE);
        int old = c.cc();
        c.setCc(value);
        boolean enable = (value & Properties.CC_EN) != 0;
        boolean wasEnabled = (old & Properties.CC_EN) != 0;
        if (enable && !wasEnabled) {
            if (validCc(value)) {
                c.setCsts(c.csts() | Properties.CSTS_RDY);
            } else {
                log.warn(
                        "controller {}: host {} enabled it with unsupported CC 0x{}; CSTS.CFS set",
                        c.id(),
                        c.hostNqn(),
                        Integer.toHexString(value));
                c.setCsts(c.csts() | Properties.CSTS_CFS);
            }
        } else if (!enable && wasEnabled) {
            // Controller reset: I/O queues go away, state returns to disabled.
            c.closeIoQueues("controller reset (CC.EN cleared)");
            c.setCsts(0);
        }
        int shn = (value & Properties.CC_SHN_MASK) >>> Properties.CC_SHN_SHIFT;
        int oldShn = (old & Properties.CC_SHN_MASK) >>> Properties.CC_SHN_SHIFT;
        if (shn != 0 && oldShn == 0) {
            // Shutdown notification: make all data durable before reporting shutdown complete.
            c.setCsts((c.csts() & ~(0x3 << Properties.CSTS_SHST_SHIFT)) | (1 << Properties.CSTS_SHST_SHIFT));
            ForkJoinPool.commonPool().execute(() -> {
                try {
                    c.subsystem().forceAll();
                } catch (IOException e) {
                    log.error(
                            "flush on shutdown of controller {} (host {}, {}) failed",
                            c.id(),
                            c.hostNqn(),
                            c.subsystem().nqn(),
                            e);
                }
                session.queue().executor().execute(() -> {
                    c.setCsts((c.csts() & ~(0x3 << Properties.CSTS_SHST_SHIFT))
                            | (Properties.SHST_COMPLETE << Properties.CSTS_SHST_SHIFT));
                    req.complete(Status.SUCCESS, 0);
                });
            });
            return;
        }
        if (shn == 0 && oldShn != 0) {
            c.setCsts(c.csts() & ~(0x3 << Properties.CSTS_SHST_SHIFT));
        }
        req.complete(Status.SUCCESS, 0);
    }

    /** CC fields we implement: NVM command set, 4 KiB pages, round robin, 64/16-byte entries (or unset). */
    private static boolean validCc(int cc) {
        int css = (cc >>> 4) & 0x7;
        int mps = (cc >>> 7) & 0xF;
        int ams = (cc >>> 11) & 0x7;
        int iosqes = (cc >>> 16) & 0xF;
        int iocqes = (cc >>> 20) & 0xF;
        return css == 0 && mps == 0 && ams == 0 && (iosqes == 6 || iosqes == 0) && (iocqes == 4 || iocqes == 0);
    }
}
