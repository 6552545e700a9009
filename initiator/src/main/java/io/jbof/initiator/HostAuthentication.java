package io.jbof.initiator;

import io.jbof.initiator.queue.QueuePair;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.auth.AuthMessages;
import io.jbof.nvme.auth.Dhchap;
import io.jbof.nvme.auth.DhchapHash;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.auth.FfdheGroup;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's side of DH-HMAC-CHAP on one queue, run right after its Connect when the controller asks
 * for authentication: negotiate (all hashes and groups offered), answer the challenge, check success1
 * and, with a controller secret, the controller's response (success2 or failure2).
 */
final class HostAuthentication {
    private static final Logger log = LoggerFactory.getLogger(HostAuthentication.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int RECEIVE_SIZE = 4096;
    /** Every hash and group jbof knows is offered. */
    private static final int[] HASHES =
            Arrays.stream(DhchapHash.values()).mapToInt(h -> h.id).toArray();

    private static final int[] GROUPS =
            Arrays.stream(FfdheGroup.values()).mapToInt(g -> g.id).toArray();

    private final QueuePair queue;
    private final int qid;
    private final DhchapKey hostKey;
    private final DhchapKey ctrlKey;
    private final String hostNqn;
    private final String subNqn;
    private final String where;

    HostAuthentication(QueuePair queue, int qid, ConnectOptions o, String where) {
        this.queue = queue;
        this.qid = qid;
        this.hostKey = o.dhchapKey;
        this.ctrlKey = o.dhchapCtrlKey;
        this.hostNqn = o.hostNqn;
        this.subNqn = o.subsystemNqn;
        this.where = where;
    }

    void run() throws IOException {
        if (hostKey == null) {
            throw new IOException(where
                    + " requires DH-HMAC-CHAP authentication: give this host's secret with --dhchap-secret DHHC-1:...");
        }
        int tid = qid & 0xFFFF;
        send(AuthMessages.negotiate(tid, HASHES, GROUPS));
        String afterNegotiation = "negotiation";
        byte[] ch = receive(afterNegotiation);
        refused(ch, afterNegotiation);
        ByteBuffer b = AuthMessages.le(ch);
        if (AuthMessages.type(ch) != AuthMessages.TYPE_DHCHAP
                || AuthMessages.id(ch) != AuthMessages.CHALLENGE
                || ch.length < AuthMessages.HEADER) {
            throw protocol("a challenge");
        }
        int hl = b.get(6) & 0xFF, dhvlen = b.getShort(10) & 0xFFFF, seqnum = b.getInt(12);
        DhchapHash hash = DhchapHash.of(b.get(8) & 0xFF);
        FfdheGroup group = FfdheGroup.of(b.get(9) & 0xFF);
        if (hash == null
                || group == null
                || hl != hash.length
                || dhvlen != group.valueLength()
                || ch.length < AuthMessages.HEADER + hl + dhvlen
                || AuthMessages.tid(ch) != tid) {
            throw protocol("a well-formed challenge");
        }
        byte[] c1 = Arrays.copyOfRange(ch, AuthMessages.HEADER, AuthMessages.HEADER + hl);
        byte[] secret = null, dhv = new byte[0];
        if (group != FfdheGroup.NULL) {
            FfdheGroup.KeyPair kp = group.keyPair(RANDOM);
            try {
                secret = group.sharedSecret(
                        kp.privateKey(),
                        Arrays.copyOfRange(ch, AuthMessages.HEADER + hl, AuthMessages.HEADER + hl + dhvlen));
            } catch (IllegalArgumentException e) {
                throw new IOException(where + ": " + e.getMessage());
            }
            dhv = kp.publicValue();
            c1 = Dhchap.augment(hash, secret, c1);
        }
        byte[] response =
                Dhchap.response(hash, hostKey.transform(hostNqn), c1, seqnum, tid, Dhchap.HOST_ROLE, hostNqn, subNqn);
        byte[] c2 = null;
        int s2 = 0;
        if (ctrlKey != null) {
            c2 = new byte[hl];
            RANDOM.nextBytes(c2);
            do {
                s2 = RANDOM.nextInt();
            } while (s2 == 0);
        }
        send(AuthMessages.reply(tid, hl, response, c2, s2, dhv));
        String afterResponse = "our response (is --dhchap-secret the one the target has for " + hostNqn + "?)";
        byte[] s1 = receive(afterResponse);
        refused(s1, afterResponse);
        if (AuthMessages.type(s1) != AuthMessages.TYPE_DHCHAP
                || AuthMessages.id(s1) != AuthMessages.SUCCESS1
                || AuthMessages.tid(s1) != tid) {
            throw protocol("success1");
        }
        if (ctrlKey != null) {
            byte[] c2x = secret != null ? Dhchap.augment(hash, secret, c2) : c2;
            byte[] expected = Dhchap.response(
                    hash, ctrlKey.transform(subNqn), c2x, s2, tid, Dhchap.CONTROLLER_ROLE, subNqn, hostNqn);
            boolean rvalid = s1.length >= AuthMessages.HEADER + hl && (s1[8] & 0xFF) == 1;
            if (!rvalid || !Dhchap.matches(expected, s1, AuthMessages.HEADER, hl)) {
                sendFailure2(tid);
                throw new IOException(where + ": the controller failed authentication: its response does not match"
                        + " --dhchap-ctrl-secret (a target without that secret, or not the target you meant)");
            }
            send(AuthMessages.success2(tid));
        }
        log.debug(
                "{}: authenticated with DH-HMAC-CHAP ({}, {}){}",
                where,
                hash,
                group,
                ctrlKey != null ? ", controller authenticated too" : "");
    }

    /**
     * Best effort: Linux nvmet ends the association on Failure2 and may close the connection before
     * completing this command, so its outcome must not hide why the host gave up.
     */
    private void sendFailure2(int tid) {
        try {
            send(AuthMessages.failure(AuthMessages.FAILURE2, tid, AuthMessages.FAILED));
        } catch (IOException e) {
            log.debug("{}: Failure2 not completed: {}", where, e.getMessage());
        }
    }

    private void refused(byte[] m, String what) throws IOException {
        if (AuthMessages.type(m) == AuthMessages.TYPE_COMMON && AuthMessages.id(m) == AuthMessages.FAILURE1) {
            int exp = m.length >= AuthMessages.FAILURE_SIZE ? m[7] & 0xFF : 0;
            throw new IOException(where + ": DH-HMAC-CHAP refused after " + what + ": " + AuthMessages.explain(exp));
        }
    }

    private IOException protocol(String expected) {
        return new IOException(where + ": DH-HMAC-CHAP: the controller did not send " + expected);
    }

    private static int cdw10() {
        return AuthMessages.SECP << 24 | AuthMessages.SPSP1 << 16 | AuthMessages.SPSP0 << 8;
    }

    private void send(byte[] m) throws IOException {
        FutureRequest r = FutureRequest.fabrics("Authentication Send (queue " + qid + ")", Opcodes.FCTYPE_AUTH_SEND);
        r.cdw[10] = cdw10();
        r.cdw[11] = m.length;
        r.data = Unpooled.wrappedBuffer(m);
        r.dataLength = m.length;
        r.toController = true;
        queue.submitPriority(r);
        NvmeController.await(r.future, "Authentication Send to " + where);
    }

    /**
     * Linux nvmet ends the association right after it queues a Failure1, and the connection may close
     * before the Failure1 arrives: a receive that fails is then reported as the refusal it most likely is.
     */
    private byte[] receive(String after) throws IOException {
        try {
            return receive();
        } catch (IOException e) {
            throw new IOException(
                    where + ": DH-HMAC-CHAP failed after " + after + ": no answer from the controller ("
                            + e.getMessage() + "; Linux nvmet closes the connection when it refuses)",
                    e);
        }
    }

    private byte[] receive() throws IOException {
        FutureRequest r =
                FutureRequest.fabrics("Authentication Receive (queue " + qid + ")", Opcodes.FCTYPE_AUTH_RECEIVE);
        r.cdw[10] = cdw10();
        r.cdw[11] = RECEIVE_SIZE;
        ByteBuf buf = Unpooled.buffer(RECEIVE_SIZE, RECEIVE_SIZE);
        r.data = buf;
        r.dataLength = RECEIVE_SIZE;
        r.toController = false;
        queue.submitPriority(r);
        NvmeController.await(r.future, "Authentication Receive from " + where);
        byte[] m = new byte[RECEIVE_SIZE];
        buf.getBytes(0, m);
        return Arrays.copyOf(m, Math.min(AuthMessages.length(m), m.length)); // the rest of the buffer is unused
    }
}
