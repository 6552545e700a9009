package io.jbof.transport.rdma;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCReqNotify;
import com.ibm.disni.verbs.impl.NatObject;
import java.io.IOException;
import java.util.LinkedList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verbs side of one NVMe queue on RDMA: an RC queue pair on a CM id, one completion queue for
 * both directions on the owning event loop's completion channel, and DiSNI's stateful verb calls
 * built once (a poll over a fixed array of work completions, a notify request, and the caller's
 * pre-built send and receive requests), so nothing is allocated per completion or per post.
 */
public final class VerbsQueuePair implements RdmaEventLoop.CompletionSource {
    private static final Logger log = LoggerFactory.getLogger(VerbsQueuePair.class);
    public static final int WC_SUCCESS = 0;
    static final int WC_FLUSH_ERR = 5;
    // enum ibv_wc_opcode
    static final int WC_SEND = 0, WC_RDMA_WRITE = 1, WC_RDMA_READ = 2, WC_RECV = 128;
    public static final int SIGNALED = IbvSendWR.IBV_SEND_SIGNALED;
    private static final int POLL_BATCH = 16;

    /** Gets every completion of the queue pair, on its loop. */
    public interface Completions {
        void onCompletion(IbvWC wc);
    }

    final RdmaCmId id;
    final IbvQP qp;
    final RdmaEventLoop loop;
    private final IbvCQ cq;
    private final IbvWC[] wcs = new IbvWC[POLL_BATCH];
    private final SVCPollCq poll;
    private final SVCReqNotify notify;
    private final Completions completions;
    private boolean destroyed;

    /** Creates the CQ and QP; call on {@code loop}. */
    public VerbsQueuePair(
            RdmaCmId id, IbvPd pd, RdmaEventLoop loop, int sendWrs, int recvWrs, int maxSge, Completions completions)
            throws IOException {
        this.id = id;
        this.loop = loop;
        this.completions = completions;
        IbvContext ctx = pd.getContext();
        this.cq = ctx.createCQ(loop.channel(ctx), sendWrs + recvWrs, 0);
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(sendWrs);
        attr.cap().setMax_recv_wr(recvWrs);
        attr.cap().setMax_send_sge(maxSge);
        attr.cap().setMax_recv_sge(maxSge);
        attr.cap().setMax_inline_data(0);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(cq);
        attr.setRecv_cq(cq);
        try {
            this.qp = id.createQP(pd, attr);
        } catch (IOException e) {
            cq.destroyCQ();
            throw e;
        }
        for (int i = 0; i < wcs.length; i++) wcs[i] = new IbvWC();
        this.poll = cq.poll(wcs, wcs.length);
        this.notify = cq.reqNotification(false);
        loop.add(this);
    }

    /** A send request built once: {@code opcode} over one local segment; change it through the mods. */
    public SVCPostSend sendCall(int opcode, long wrId, long addr, int length, int lkey, int flags) throws IOException {
        LinkedList<IbvSge> sges = segment(addr, length, lkey);
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        wr.setOpcode(opcode);
        wr.setSend_flags(flags);
        return qp.postSend(List.of(wr), null);
    }

    /** A receive request built once for one buffer; post it again with {@code execute()} after each use. */
    public SVCPostRecv recvCall(long wrId, long addr, int length, int lkey) throws IOException {
        LinkedList<IbvSge> sges = segment(addr, length, lkey);
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        return qp.postRecv(List.of(wr), null);
    }

    private static LinkedList<IbvSge> segment(long addr, int length, int lkey) {
        IbvSge sge = new IbvSge();
        sge.setAddr(addr);
        sge.setLength(length);
        sge.setLkey(lkey);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        return sges;
    }

    /** The native ibv_qp, for jbof's own posts (RdmaNative). */
    public long qpHandle() {
        return ((NatObject) qp).getObjId();
    }

    @Override
    public int poll() throws IOException {
        if (destroyed) return 0;
        int total = 0;
        for (; ; ) {
            int n = poll.execute().getPolls();
            for (int i = 0; i < n; i++) completions.onCompletion(wcs[i]);
            total += n;
            if (n < wcs.length || destroyed) return total;
        }
    }

    @Override
    public void arm() throws IOException {
        if (!destroyed) notify.execute();
    }

    /** Moves the QP to error (outstanding requests flush) and tells the peer. */
    public void disconnect() {
        try {
            id.disconnect();
        } catch (IOException | RuntimeException e) {
            log.debug("rdma_disconnect: {}", e.toString());
        }
    }

    /** Destroys QP, CQ and id; on the loop, after the last completion was handled. */
    public void destroy() {
        if (destroyed) return;
        destroyed = true;
        loop.remove(this);
        try {
            poll.free();
            notify.free();
            id.destroyQP();
            cq.destroyCQ();
        } catch (IOException | RuntimeException e) {
            log.debug("destroying a queue pair: {}", e.toString());
        }
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            log.debug("destroying a CM id: {}", e.toString());
        }
    }
}
