package io.jbof.app;

import io.jbof.nvme.Connect;
import io.jbof.nvme.NvmeCommand;
import io.jbof.nvme.Opcodes;
import io.jbof.nvme.Properties;
import io.jbof.nvme.Sgl;
import io.jbof.transport.tcp.Pdu;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * A host written from the NVMe/TCP specification, not jbof's initiator: one plain socket, PDUs built
 * byte by byte, so tests can send what a well-behaved initiator never would (and stop half way).
 */
final class RawTcpHost implements AutoCloseable {
    static final int CC_ENABLE = Properties.CC_EN | (6 << 16) | (4 << 20);

    final Socket socket;
    final DataInputStream in;
    private final boolean dataDigest;
    private int cntlid;

    private RawTcpHost(Socket socket, boolean dataDigest) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.dataDigest = dataDigest;
    }

    /** Opens a socket and exchanges ICReq/ICResp (asking for data digests when {@code dataDigest}). */
    static RawTcpHost open(int port, boolean dataDigest) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        s.setSoTimeout(30_000); // a target that neither answers nor closes fails the test instead of hanging it
        s.setTcpNoDelay(true);
        RawTcpHost h = new RawTcpHost(s, dataDigest);
        ByteBuf ic = Unpooled.buffer(Pdu.IC_LENGTH);
        Pdu.writeCommonHeader(ic, Pdu.IC_REQ, 0, Pdu.IC_LENGTH, 0, Pdu.IC_LENGTH);
        ic.writeShortLE(0).writeByte(0).writeByte(dataDigest ? Pdu.IC_DGST_DATA : 0);
        ic.writeZero(Pdu.IC_LENGTH - ic.writerIndex());
        h.write(ic);
        byte[] resp = new byte[Pdu.IC_LENGTH];
        h.in.readFully(resp);
        if (resp[0] != Pdu.IC_RESP) throw new IOException("no ICResp");
        return h;
    }

    /** Admin queue: ICReq, Connect, CC.EN; returns the controller ID. */
    static RawTcpHost admin(int port, String nqn, int katoMillis) throws IOException {
        RawTcpHost h = open(port, false);
        ByteBuf r = h.connectCapsule(1, 0, 0xFFFF, nqn, katoMillis, true);
        if (status(r) != 0) throw new IOException("admin Connect failed: status 0x" + Integer.toHexString(status(r)));
        h.cntlid = r.getUnsignedShortLE(Pdu.COMMON_HEADER);
        h.expectSuccess(h.propertySet(2, Properties.CC, CC_ENABLE), "Property Set CC.EN");
        return h;
    }

    /** I/O queue {@code qid} of controller {@code cntlid}. */
    static RawTcpHost io(int port, String nqn, int cntlid, int qid, boolean dataDigest) throws IOException {
        RawTcpHost h = open(port, dataDigest);
        h.cntlid = cntlid;
        ByteBuf r = h.connectCapsule(1, qid, cntlid, nqn, 0, true);
        if (status(r) != 0) throw new IOException("I/O Connect failed: status 0x" + Integer.toHexString(status(r)));
        return h;
    }

    int cntlid() {
        return cntlid;
    }

    static String hostNqn() {
        return "nqn.2014-08.org.nvmexpress:uuid:" + UUID.nameUUIDFromBytes("raw-host".getBytes());
    }

    /** A Connect capsule; data in the capsule, or (inCapsule false) announced by a transport SGL for an R2T. Returns the response when in-capsule. */
    ByteBuf connectCapsule(int cid, int qid, int cntlid, String nqn, int katoMillis, boolean inCapsule)
            throws IOException {
        ByteBuf sqe = sqe(Opcodes.FABRICS, cid);
        new NvmeCommand()
                .wrap(sqe, 0)
                .fctype(Opcodes.FCTYPE_CONNECT)
                .cdw(10, qid << 16)
                .cdw(11, 31)
                .cdw(12, katoMillis);
        ByteBuf data = Connect.data(UUID.nameUUIDFromBytes("raw-host".getBytes()), cntlid, nqn, hostNqn());
        if (inCapsule) {
            Sgl.write(sqe, 0, 0, Connect.DATA_SIZE, Sgl.ID_IN_CAPSULE);
            sendCapsule(sqe, data.array(), Connect.DATA_SIZE);
            return readPdu();
        }
        Sgl.write(sqe, 0, 0, Connect.DATA_SIZE, Sgl.ID_TCP_TRANSPORT);
        sendCapsule(sqe, null, 0);
        return null;
    }

    ByteBuf propertySet(int cid, int offset, int value) throws IOException {
        ByteBuf sqe = sqe(Opcodes.FABRICS, cid);
        new NvmeCommand()
                .wrap(sqe, 0)
                .fctype(Opcodes.FCTYPE_PROPERTY_SET)
                .cdw(11, offset)
                .cdw(12, value);
        sendCapsule(sqe, null, 0);
        return readPdu();
    }

    /** A zeroed 64-byte command with opcode, CID and PSDT = SGL. */
    static ByteBuf sqe(int opcode, int cid) {
        ByteBuf sqe = Unpooled.buffer(NvmeCommand.SIZE).writeZero(NvmeCommand.SIZE);
        new NvmeCommand()
                .wrap(sqe, 0)
                .opcode(opcode)
                .flags(NvmeCommand.FLAGS_SGL)
                .cid(cid);
        return sqe;
    }

    static NvmeCommand command(ByteBuf sqe) {
        return new NvmeCommand().wrap(sqe, 0);
    }

    /** Sends a CapsuleCmd with {@code len} bytes of in-capsule data (none when data is null). */
    void sendCapsule(ByteBuf sqe, byte[] data, int len) throws IOException {
        write(capsule(sqe, data, len, dataDigest));
    }

    /** A CapsuleCmd PDU: the 64-byte command and {@code len} bytes of in-capsule data, with their digest if asked. */
    static ByteBuf capsule(ByteBuf sqe, byte[] data, int len, boolean dataDigest) {
        int dd = len > 0 && dataDigest ? Pdu.DIGEST : 0;
        ByteBuf pdu = Unpooled.buffer(Pdu.CAPSULE_CMD_HLEN + len + dd);
        Pdu.writeCommonHeader(
                pdu,
                Pdu.CAPSULE_CMD,
                dd > 0 ? Pdu.FLAG_DDGST : 0,
                Pdu.CAPSULE_CMD_HLEN,
                len > 0 ? Pdu.CAPSULE_CMD_HLEN : 0,
                Pdu.CAPSULE_CMD_HLEN + len + dd);
        pdu.writeBytes(sqe, 0, NvmeCommand.SIZE);
        if (len > 0) {
            pdu.writeBytes(data, 0, len);
            if (dd > 0) pdu.writeIntLE(digest(data, 0, len));
        }
        return pdu;
    }

    /** Sends one H2CData PDU; {@code corruptDigest} sends a wrong data digest. */
    void sendH2CData(int cid, int ttag, int offset, byte[] data, boolean corruptDigest) throws IOException {
        int dd = dataDigest ? Pdu.DIGEST : 0;
        ByteBuf pdu = Unpooled.buffer(Pdu.DATA_HLEN + data.length + dd);
        Pdu.writeCommonHeader(
                pdu,
                Pdu.H2C_DATA,
                Pdu.FLAG_LAST_PDU | (dd > 0 ? Pdu.FLAG_DDGST : 0),
                Pdu.DATA_HLEN,
                Pdu.DATA_HLEN,
                Pdu.DATA_HLEN + data.length + dd);
        pdu.writeShortLE(cid)
                .writeShortLE(ttag)
                .writeIntLE(offset)
                .writeIntLE(data.length)
                .writeIntLE(0);
        pdu.writeBytes(data);
        if (dd > 0) pdu.writeIntLE(digest(data, 0, data.length) ^ (corruptDigest ? 1 : 0));
        write(pdu);
    }

    private static int digest(byte[] data, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(data, off, len);
        return (int) c.getValue();
    }

    void write(ByteBuf pdu) throws IOException {
        socket.getOutputStream().write(pdu.array(), pdu.arrayOffset() + pdu.readerIndex(), pdu.readableBytes());
    }

    /** The next PDU whole, or null when the target closed the connection. */
    ByteBuf readPdu() throws IOException {
        return readPdu(in);
    }

    /** The next PDU whole from {@code in}, or null when the stream ended (or was reset) first. */
    static ByteBuf readPdu(DataInputStream in) throws IOException {
        byte[] head = new byte[Pdu.COMMON_HEADER];
        try {
            in.readFully(head);
        } catch (EOFException | SocketException e) {
            return null;
        }
        int plen = Pdu.plen(Unpooled.wrappedBuffer(head), 0);
        if (plen < Pdu.COMMON_HEADER || plen > (4 << 20))
            throw new IOException("the target sent a PDU with PLEN " + plen);
        byte[] all = new byte[plen];
        System.arraycopy(head, 0, all, 0, Pdu.COMMON_HEADER);
        try {
            in.readFully(all, Pdu.COMMON_HEADER, plen - Pdu.COMMON_HEADER);
        } catch (EOFException | SocketException e) {
            return null;
        }
        return Unpooled.wrappedBuffer(all);
    }

    /** Reads PDUs until a CapsuleResp (skipping data); null when the connection closed first. */
    ByteBuf readResponse() throws IOException {
        for (; ; ) {
            ByteBuf p = readPdu();
            if (p == null || Pdu.type(p, 0) == Pdu.CAPSULE_RESP || Pdu.type(p, 0) == Pdu.C2H_TERM_REQ) return p;
            if (Pdu.type(p, 0) == Pdu.C2H_DATA && (Pdu.flags(p, 0) & Pdu.FLAG_SUCCESS) != 0) return p;
        }
    }

    /** Status field of a CapsuleResp (SCT/SC and DNR, without the phase bit); 0 for a C2HData with SUCCESS. */
    static int status(ByteBuf resp) {
        if (resp == null) return -1;
        if (Pdu.type(resp, 0) == Pdu.C2H_DATA) return 0;
        if (Pdu.type(resp, 0) != Pdu.CAPSULE_RESP) return -2;
        return resp.getUnsignedShortLE(Pdu.COMMON_HEADER + 14) >>> 1;
    }

    static int cid(ByteBuf resp) {
        return resp.getUnsignedShortLE(Pdu.COMMON_HEADER + 12);
    }

    void expectSuccess(ByteBuf resp, String what) throws IOException {
        if (status(resp) != 0) throw new IOException(what + " failed: status " + status(resp));
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
