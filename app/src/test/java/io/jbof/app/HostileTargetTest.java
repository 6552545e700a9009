package io.jbof.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jbof.initiator.ConnectOptions;
import io.jbof.initiator.NvmeController;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The initiator against a target that answers ICReq properly and then misbehaves: every case ends in
 * an error for the caller (never a hang), and protocol violations get an H2CTermReq before the close.
 */
class HostileTargetTest {
    enum Misbehaviour {
        UNKNOWN_CID,
        GARBAGE,
        HUGE_PLEN,
        DATA_FOR_A_COMMAND_THAT_READS_NONE,
        SILENCE
    }

    @ParameterizedTest
    @EnumSource(Misbehaviour.class)
    @Timeout(60)
    void aMisbehavingTargetFailsTheConnectWithoutHanging(Misbehaviour how) throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Integer> seenByTarget = CompletableFuture.supplyAsync(() -> misbehave(server, how));
            ConnectOptions o = ConnectOptions.builder()
                    .port(server.getLocalPort())
                    .subsystemNqn("nqn.2024-01.io.jbof:hostile")
                    .ioQueues(1)
                    .commandTimeoutMillis(1500)
                    .build();
            Exception e = assertThrows(
                    Exception.class, () -> NvmeController.connect(o).close());
            assertTrue(e instanceof IOException, "an I/O error for the caller, not " + e);
            int lastPduType = seenByTarget.get(30, TimeUnit.SECONDS);
            if (how != Misbehaviour.SILENCE) {
                assertEquals(Pdu.H2C_TERM_REQ, lastPduType, "the host ends a protocol violation with an H2CTermReq");
            }
        }
    }

    /** Plays the target's side; returns the type of the last PDU the host sent before closing (-1: none). */
    private static int misbehave(ServerSocket server, Misbehaviour how) {
        try (Socket s = server.accept()) {
            s.setSoTimeout(20_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            byte[] icreq = new byte[Pdu.IC_LENGTH];
            in.readFully(icreq);
            ByteBuf ic = Unpooled.buffer(Pdu.IC_LENGTH);
            Pdu.writeCommonHeader(ic, Pdu.IC_RESP, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
            ic.writeShortLE(0).writeByte(0).writeByte(0).writeIntLE(128 * 1024);
            ic.writeZero(Pdu.IC_LENGTH - ic.writerIndex());
            out.write(ic.array(), 0, Pdu.IC_LENGTH);
            int cid = readPdu(in)[1]; // the admin Connect capsule: remember its CID
            ByteBuf bad = Unpooled.buffer(64);
            switch (how) {
                case UNKNOWN_CID:
                    Pdu.writeCommonHeader(bad, Pdu.CAPSULE_RESP, 0, Pdu.CAPSULE_RESP_HLEN, 0, Pdu.CAPSULE_RESP_HLEN);
                    bad.writeZero(12).writeShortLE(cid + 7).writeShortLE(0);
                    break;
                case GARBAGE:
                    for (int i = 0; i < 24; i++) bad.writeByte(0xA5 ^ i);
                    break;
                case HUGE_PLEN:
                    Pdu.writeCommonHeader(bad, Pdu.C2H_DATA, 0, Pdu.DATA_HLEN, Pdu.DATA_HLEN, 1 << 30);
                    bad.writeZero(Pdu.DATA_HLEN - 8);
                    break;
                case DATA_FOR_A_COMMAND_THAT_READS_NONE:
                    Pdu.writeCommonHeader(
                            bad, Pdu.C2H_DATA, Pdu.FLAG_LAST_PDU, Pdu.DATA_HLEN, Pdu.DATA_HLEN, Pdu.DATA_HLEN + 8);
                    bad.writeShortLE(cid)
                            .writeShortLE(0)
                            .writeIntLE(0)
                            .writeIntLE(8)
                            .writeIntLE(0)
                            .writeZero(8);
                    break;
                case SILENCE:
                    break;
            }
            out.write(bad.array(), 0, bad.writerIndex());
            int last = -1;
            while (true) {
                int[] pdu = readPdu(in);
                if (pdu == null) return last;
                last = pdu[0];
            }
        } catch (IOException e) {
            return -1;
        }
    }

    /** {type, cid of a capsule (or -1)}, or null at the end of the stream. */
    private static int[] readPdu(DataInputStream in) throws IOException {
        byte[] head = new byte[Pdu.COMMON_HEADER];
        try {
            in.readFully(head);
        } catch (IOException eof) {
            return null;
        }
        ByteBuf h = Unpooled.wrappedBuffer(head);
        byte[] rest = new byte[Pdu.plen(h, 0) - Pdu.COMMON_HEADER];
        in.readFully(rest);
        int cid = Pdu.type(h, 0) == Pdu.CAPSULE_CMD ? (rest[2] & 0xFF) | (rest[3] & 0xFF) << 8 : -1;
        return new int[] {Pdu.type(h, 0), cid};
    }
}
