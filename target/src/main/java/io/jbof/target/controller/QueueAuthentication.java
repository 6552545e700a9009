package io.jbof.target.controller;

import io.jbof.nvme.auth.AuthMessages;
import io.jbof.nvme.auth.Dhchap;
import io.jbof.nvme.auth.DhchapHash;
import io.jbof.nvme.auth.DhchapKey;
import io.jbof.nvme.auth.FfdheGroup;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's side of DH-HMAC-CHAP on one queue: negotiate, challenge, reply, success1 and, when
 * the host authenticates the controller too, success2. Authentication Send brings the host's messages,
 * Authentication Receive fetches the controller's; a failure is answered with AUTH_Failure1 on the next
 * receive. Until it succeeds the queue takes no other command but Disconnect.
 */
final class QueueAuthentication {
    private static final Logger log = LoggerFactory.getLogger(QueueAuthentication.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final DhchapHash[] HASHES = {DhchapHash.SHA512, DhchapHash.SHA384, DhchapHash.SHA256};
    private static final FfdheGroup[] GROUPS = {
        FfdheGroup.FFDHE8192,
        FfdheGroup.FFDHE6144,
        FfdheGroup.FFDHE4096,
        FfdheGroup.FFDHE3072,
        FfdheGroup.FFDHE2048,
        FfdheGroup.NULL
    };

    private enum State {
        NEGOTIATE,
        CHALLENGE,
        REPLY,
        SUCCESS1,
        SUCCESS2,
        FAILURE1,
        DONE
    }

    private final DhchapKey hostKey;
    private final DhchapKey ctrlKey;
    private final String hostNqn;
    private final String subNqn;
    private final String where;
    private State state = State.NEGOTIATE;
    private boolean authenticated;
    private int tid;
    private DhchapHash hash;
    private FfdheGroup group;
    private byte[] challenge;
    private int seqnum;
    private FfdheGroup.KeyPair dh;
    private byte[] controllerResponse;
    private int failure;

    QueueAuthentication(DhchapKey hostKey, DhchapKey ctrlKey, String hostNqn, String subNqn, String where) {
        this.hostKey = hostKey;
        this.ctrlKey = ctrlKey;
        this.hostNqn = hostNqn;
        this.subNqn = subNqn;
        this.where = where;
    }

    boolean authenticated() {
        return authenticated;
    }

    /** An Authentication Send message; returns false when the message was not understood at all. */
    void onSend(byte[] m) {
        int type = AuthMessages.type(m), id = AuthMessages.id(m);
        if (type == AuthMessages.TYPE_COMMON && id == AuthMessages.NEGOTIATE) {
            negotiate(m);
        } else if (type == AuthMessages.TYPE_DHCHAP && id == AuthMessages.REPLY) {
            reply(m);
        } else if (type == AuthMessages.TYPE_DHCHAP && id == AuthMessages.SUCCESS2 && state == State.SUCCESS2) {
            if (AuthMessages.tid(m) != tid) {
                fail(AuthMessages.INCORRECT_PAYLOAD, "transaction ID mismatch in success2");
                return;
            }
            finish();
        } else if (type == AuthMessages.TYPE_COMMON && id == AuthMessages.FAILURE2 && state == State.SUCCESS2) {
            log.warn(
                    "{}: host {} did not accept the controller's response (bidirectional authentication failed)",
                    where,
                    hostNqn);
            state = State.NEGOTIATE;
        } else {
            fail(
                    AuthMessages.INCORRECT_PROTOCOL,
                    "message type " + type + " id 0x" + Integer.toHexString(id) + " in state " + state);
        }
    }

    /** The message an Authentication Receive returns now, or null when none is due. */
    byte[] onReceive() {
        switch (state) {
            case CHALLENGE: {
                challenge = new byte[hash.length];
                RANDOM.nextBytes(challenge);
                do {
                    seqnum = RANDOM.nextInt();
                } while (seqnum == 0);
                byte[] dhv = new byte[0];
                if (group != FfdheGroup.NULL) {
                    dh = group.keyPair(RANDOM);
                    dhv = dh.publicValue();
                }
                state = State.REPLY;
                return AuthMessages.challenge(tid, hash, group, seqnum, challenge, dhv);
            }
            case SUCCESS1: {
                byte[] m = AuthMessages.success1(tid, hash.length, controllerResponse);
                if (controllerResponse == null) finish();
                else state = State.SUCCESS2;
                return m;
            }
            case FAILURE1: {
                state = State.NEGOTIATE;
                return AuthMessages.failure(AuthMessages.FAILURE1, tid, failure);
            }
            default:
                return null;
        }
    }

    private void negotiate(byte[] m) {
        authenticated = false; // a new negotiation re-authenticates
        tid = AuthMessages.tid(m);
        if (m.length < AuthMessages.NEGOTIATE_HEADER) {
            fail(AuthMessages.INCORRECT_PAYLOAD, "negotiate of " + m.length + " bytes");
            return;
        }
        ByteBuffer b = AuthMessages.le(m);
        int scc = b.get(6) & 0xFF, napd = b.get(7) & 0xFF;
        if (m.length != AuthMessages.NEGOTIATE_HEADER + napd * AuthMessages.DESCRIPTOR) {
            fail(AuthMessages.INCORRECT_PAYLOAD, "negotiate length " + m.length + " for " + napd + " descriptors");
            return;
        }
        if (scc != 0) {
            fail(AuthMessages.CONCAT_MISMATCH, "secure channel concatenation asked for");
            return;
        }
        int d = -1;
        for (int i = 0; i < napd; i++) {
            int at = AuthMessages.NEGOTIATE_HEADER + i * AuthMessages.DESCRIPTOR;
            if ((b.get(at) & 0xFF) == AuthMessages.AUTH_ID_DHCHAP) {
                d = at;
                break;
            }
        }
        if (d < 0) {
            fail(AuthMessages.NOT_USABLE, "no DH-HMAC-CHAP descriptor");
            return;
        }
        int halen = b.get(d + 2) & 0xFF, dhlen = b.get(d + 3) & 0xFF;
        if (halen > 30 || dhlen > 30) {
            fail(AuthMessages.INCORRECT_PAYLOAD, "HALEN " + halen + " DHLEN " + dhlen);
            return;
        }
        hash = null;
        for (DhchapHash h : HASHES) if (hash == null && contains(m, d + 4, halen, h.id)) hash = h;
        if (hash == null) {
            fail(AuthMessages.HASH_UNUSABLE, "no hash in common");
            return;
        }
        group = null;
        for (FfdheGroup g : GROUPS) if (group == null && contains(m, d + 4 + 30, dhlen, g.id)) group = g;
        if (group == null) {
            fail(AuthMessages.DHGROUP_UNUSABLE, "no DH group in common");
            return;
        }
        log.debug("{}: DH-HMAC-CHAP with {} and {} (transaction {})", where, hash, group, tid);
        state = State.CHALLENGE;
    }

    private static boolean contains(byte[] m, int at, int n, int id) {
        for (int i = 0; i < n; i++) if ((m[at + i] & 0xFF) == id) return true;
        return false;
    }

    private void reply(byte[] m) {
        if (state != State.REPLY) {
            fail(AuthMessages.INCORRECT_PROTOCOL, "reply in state " + state);
            return;
        }
        if (m.length < AuthMessages.HEADER) {
            fail(AuthMessages.INCORRECT_PAYLOAD, "reply of " + m.length + " bytes");
            return;
        }
        ByteBuffer b = AuthMessages.le(m);
        int hl = b.get(6) & 0xFF, cvalid = b.get(8) & 0xFF, dhvlen = b.getShort(10) & 0xFFFF, seq2 = b.getInt(12);
        if (hl != hash.length
                || m.length != AuthMessages.HEADER + 2 * hl + dhvlen
                || AuthMessages.tid(m) != tid
                || cvalid > 1
                || (cvalid == 1 && seq2 == 0)
                || dhvlen != group.valueLength()) {
            fail(
                    AuthMessages.INCORRECT_PAYLOAD,
                    "reply fields (hl " + hl + ", dhvlen " + dhvlen + ", cvalid " + cvalid + ")");
            return;
        }
        byte[] secret = null;
        byte[] c1 = challenge;
        if (group != FfdheGroup.NULL) {
            try {
                secret = group.sharedSecret(
                        dh.privateKey(), Arrays.copyOfRange(m, AuthMessages.HEADER + 2 * hl, m.length));
            } catch (IllegalArgumentException e) {
                fail(AuthMessages.INCORRECT_PAYLOAD, e.getMessage());
                return;
            }
            c1 = Dhchap.augment(hash, secret, challenge);
        }
        byte[] expected =
                Dhchap.response(hash, hostKey.transform(hostNqn), c1, seqnum, tid, Dhchap.HOST_ROLE, hostNqn, subNqn);
        if (!Dhchap.matches(expected, m, AuthMessages.HEADER, hl)) {
            fail(AuthMessages.FAILED, "host " + hostNqn + " gave a wrong response (its DH-HMAC-CHAP secret differs)");
            return;
        }
        controllerResponse = null;
        if (cvalid == 1) {
            if (ctrlKey == null) {
                fail(
                        AuthMessages.FAILED,
                        "host " + hostNqn
                                + " asks to authenticate the controller, but no controller secret is configured for it");
                return;
            }
            byte[] c2 = Arrays.copyOfRange(m, AuthMessages.HEADER + hl, AuthMessages.HEADER + 2 * hl);
            if (secret != null) c2 = Dhchap.augment(hash, secret, c2);
            controllerResponse = Dhchap.response(
                    hash, ctrlKey.transform(subNqn), c2, seq2, tid, Dhchap.CONTROLLER_ROLE, subNqn, hostNqn);
        }
        state = State.SUCCESS1;
    }

    private void finish() {
        authenticated = true;
        state = State.DONE;
        dh = null;
        log.debug("{}: host {} authenticated ({}, {})", where, hostNqn, hash, group);
    }

    private void fail(int reason, String why) {
        log.warn("{}: DH-HMAC-CHAP of host {} failed: {}", where, hostNqn, why);
        failure = reason;
        authenticated = false;
        state = State.FAILURE1;
    }
}
