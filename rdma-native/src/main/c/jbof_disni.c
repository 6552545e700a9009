/*
 * jbof's native half of DiSNI 2.1 (libdisni.so): the JNI methods com.ibm.disni.verbs.impl.NativeDispatcher
 * declares, over libibverbs and librdmacm. One addition over DiSNI's own library: _getCmEvent keeps the
 * private data and status of connection events on the id (jbof_cm_extra.h), where libjbofrdma.so
 * (jbof_rdma.c) reads them; DiSNI's API acknowledges events before Java could see their private data.
 *
 * Handles given to Java are the native pointers themselves, as DiSNI's own library does.
 *
 * Work requests: DiSNI's Java half lays out ibv_send_wr as the 72-byte structure of older
 * libibverbs (wr_id, next, sg_list, num_sge, opcode, send_flags, imm_data, then the rdma union at 40).
 * Current rdma-core's structure is larger, so _postSend copies each request into a real
 * ibv_send_wr instead of handing Java's bytes to the provider. Receive requests, scatter/gather
 * elements and work completions have the same layout on both sides and pass through as they are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "jbof_cm_extra.h"

#define DISNI_JNI_VERSION 32
/* DiSNI 2.1's Java layout of a send work request (NatIbvSendWR). */
#define J_SEND_WR_SIZE 72
#define J_WR_ID 0
#define J_NEXT 8
#define J_SG_LIST 16
#define J_NUM_SGE 24
#define J_OPCODE 28
#define J_SEND_FLAGS 32
#define J_IMM_DATA 36
#define J_REMOTE_ADDR 40
#define J_RKEY 48
#define MAX_CHAINED_SENDS 64

#define DISNI(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

static void set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void free_extra(struct rdma_cm_id *id) {
    if (id && id->context && ((struct cm_extra *)id->context)->magic == CM_EXTRA_MAGIC) {
        free(id->context);
        id->context = NULL;
    }
}

/* ---------------------------------------------------------------- CM */

JNIEXPORT jlong JNICALL DISNI(createEventChannel)(JNIEnv *env, jobject o) {
    struct rdma_event_channel *ch = rdma_create_event_channel();
    if (!ch) {
        throw_io(env, "rdma_create_event_channel (is rdma_ucm loaded and /dev/infiniband/rdma_cm there?)", errno);
        return -1;
    }
    set_nonblocking(ch->fd);
    return (jlong)(intptr_t)ch;
}

JNIEXPORT jlong JNICALL DISNI(createId)(JNIEnv *env, jobject o, jlong channel, jshort ps) {
    struct rdma_cm_id *id = NULL;
    if (!channel) { throw_io(env, "createId: no event channel", 0); return -1; }
    if (rdma_create_id((struct rdma_event_channel *)(intptr_t)channel, &id, NULL, RDMA_PS_TCP)) {
        throw_io(env, "rdma_create_id", errno);
        return -1;
    }
    return (jlong)(intptr_t)id;
}

JNIEXPORT jlong JNICALL DISNI(createQP)(JNIEnv *env, jobject o, jlong id, jlong pd, jlong sendcq, jlong recvcq,
                                        jint qptype, jint maxsendwr, jint maxrecvwr, jint maxinline) {
    /* DiSNI 2.1 passes no SGE limit (later versions do); its Java half posts at most a few per request. */
    const int maxsge = 4;
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    struct ibv_qp_init_attr attr;
    if (!cm || !pd || !sendcq || !recvcq) { throw_io(env, "createQP: id, pd or cq missing", 0); return -1; }
    memset(&attr, 0, sizeof attr);
    attr.send_cq = (struct ibv_cq *)(intptr_t)sendcq;
    attr.recv_cq = (struct ibv_cq *)(intptr_t)recvcq;
    attr.qp_type = (enum ibv_qp_type)qptype;
    attr.cap.max_send_wr = maxsendwr;
    attr.cap.max_recv_wr = maxrecvwr;
    attr.cap.max_send_sge = maxsge;
    attr.cap.max_recv_sge = maxsge;
    attr.cap.max_inline_data = maxinline;
    attr.sq_sig_all = 0; /* completions only where a request asks for one */
    if (rdma_create_qp(cm, (struct ibv_pd *)(intptr_t)pd, &attr)) {
        char what[256];
        int err = errno;
        snprintf(what, sizeof what, "rdma_create_qp (type %d, send %d, recv %d, sge %d, inline %d, %s device)",
                 qptype, maxsendwr, maxrecvwr, maxsge, maxinline,
                 cm->verbs == ((struct ibv_pd *)(intptr_t)pd)->context ? "same" : "OTHER");
        throw_io(env, what, err);
        return -1;
    }
    return (jlong)(intptr_t)cm->qp;
}

JNIEXPORT void JNICALL DISNI(bindAddr)(JNIEnv *env, jobject o, jlong id, jlong addr) {
    if (!id) { throw_io(env, "bindAddr: no id", 0); return; }
    if (rdma_bind_addr((struct rdma_cm_id *)(intptr_t)id, (struct sockaddr *)(intptr_t)addr))
        throw_io(env, "rdma_bind_addr", errno);
}

JNIEXPORT void JNICALL DISNI(listen)(JNIEnv *env, jobject o, jlong id, jint backlog) {
    if (!id) { throw_io(env, "listen: no id", 0); return; }
    if (rdma_listen((struct rdma_cm_id *)(intptr_t)id, backlog))
        throw_io(env, "rdma_listen", errno);
}

JNIEXPORT void JNICALL DISNI(resolveAddr)(JNIEnv *env, jobject o, jlong id, jlong src, jlong dst, jint timeout) {
    if (!id) { throw_io(env, "resolveAddr: no id", 0); return; }
    if (rdma_resolve_addr((struct rdma_cm_id *)(intptr_t)id, src ? (struct sockaddr *)(intptr_t)src : NULL,
                          (struct sockaddr *)(intptr_t)dst, timeout))
        throw_io(env, "rdma_resolve_addr", errno);
}

JNIEXPORT void JNICALL DISNI(resolveRoute)(JNIEnv *env, jobject o, jlong id, jint timeout) {
    if (!id) { throw_io(env, "resolveRoute: no id", 0); return; }
    if (rdma_resolve_route((struct rdma_cm_id *)(intptr_t)id, timeout))
        throw_io(env, "rdma_resolve_route", errno);
}

/* Keeps what the event carried (not in the JBOF_PLAIN_DISNI build, which stands in for DiSNI's own library in tests) on the id, for RdmaNative.privateData/eventStatus, before the ack frees it. */
static __attribute__((unused)) void keep_event_data(struct rdma_cm_event *ev) {
    struct rdma_cm_id *id = ev->id;
    const void *data = NULL;
    int len = 0;
    if (!id) return;
    if (id->ps == RDMA_PS_UDP || id->ps == RDMA_PS_IPOIB) return;
    data = ev->param.conn.private_data;
    len = ev->param.conn.private_data_len;
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST && ev->event != RDMA_CM_EVENT_ESTABLISHED
        && ev->event != RDMA_CM_EVENT_REJECTED && ev->event != RDMA_CM_EVENT_CONNECT_RESPONSE)
        return;
    if (!id->context) {
        id->context = calloc(1, sizeof(struct cm_extra));
        if (!id->context) return;
        ((struct cm_extra *)id->context)->magic = CM_EXTRA_MAGIC;
    }
    struct cm_extra *x = id->context;
    if (x->magic != CM_EXTRA_MAGIC) return; /* not ours */
    x->status = ev->status;
    if (len > MAX_PRIVATE_DATA) len = MAX_PRIVATE_DATA;
    x->length = data ? len : 0;
    if (data && len > 0) memcpy(x->data, data, len);
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
        x->initiator_depth = ev->param.conn.initiator_depth;
        x->responder_resources = ev->param.conn.responder_resources;
    }
}

JNIEXPORT jint JNICALL DISNI(getCmEvent)(JNIEnv *env, jobject o, jlong channel, jlong listen_out, jlong id_out, jint timeout) {
    struct rdma_event_channel *ch = (struct rdma_event_channel *)(intptr_t)channel;
    struct rdma_cm_event *ev;
    struct pollfd p;
    int event;
    if (!ch) return -1;
    p.fd = ch->fd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, timeout) <= 0) return -1;
    if (rdma_get_cm_event(ch, &ev)) return -1;
    event = ev->event;
    /* A new connection's id inherits its listener's context: never share jbof's record with it. */
    if (event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->listen_id && ev->id->context == ev->listen_id->context)
        ev->id->context = NULL;
#ifndef JBOF_PLAIN_DISNI
    keep_event_data(ev);
#endif
    *(int64_t *)(intptr_t)listen_out = ev->listen_id ? (int64_t)(intptr_t)ev->listen_id : -1;
    *(int64_t *)(intptr_t)id_out = ev->id ? (int64_t)(intptr_t)ev->id : -1;
    rdma_ack_cm_event(ev);
    return event;
}

JNIEXPORT void JNICALL DISNI(connect)(JNIEnv *env, jobject o, jlong id, jint retry, jint rnr_retry, jlong pdata, jbyte plen) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    struct rdma_conn_param p;
    if (!cm) { throw_io(env, "connect: no id", 0); return; }
    fill_conn_param(cm, &p, retry, rnr_retry);
    p.private_data = (const void *)(intptr_t)pdata;
    p.private_data_len = (uint8_t)plen;
    if (rdma_connect(cm, &p)) throw_io(env, "rdma_connect", errno);
}

JNIEXPORT void JNICALL DISNI(accept)(JNIEnv *env, jobject o, jlong id, jint retry, jint rnr_retry) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    struct rdma_conn_param p;
    if (!cm) { throw_io(env, "accept: no id", 0); return; }
    fill_conn_param(cm, &p, retry, rnr_retry);
    if (rdma_accept(cm, &p)) throw_io(env, "rdma_accept", errno);
}

JNIEXPORT jint JNICALL DISNI(ackCmEvent)(JNIEnv *env, jobject o, jint event) {
    return 0; /* _getCmEvent acknowledged it already */
}

JNIEXPORT jint JNICALL DISNI(disconnect)(JNIEnv *env, jobject o, jlong id) {
    if (!id) return -1;
    return rdma_disconnect((struct rdma_cm_id *)(intptr_t)id) ? -errno : 0;
}

JNIEXPORT jint JNICALL DISNI(destroyEventChannel)(JNIEnv *env, jobject o, jlong channel) {
    if (!channel) return -1;
    rdma_destroy_event_channel((struct rdma_event_channel *)(intptr_t)channel);
    return 0;
}

JNIEXPORT jint JNICALL DISNI(destroyCmId)(JNIEnv *env, jobject o, jlong id) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    if (!cm) return -1;
    free_extra(cm);
    return rdma_destroy_id(cm) ? -errno : 0;
}

JNIEXPORT jint JNICALL DISNI(destroyQP)(JNIEnv *env, jobject o, jlong id) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    if (!cm || !cm->qp) return -1;
    rdma_destroy_qp(cm);
    return 0;
}

JNIEXPORT jint JNICALL DISNI(getSrcAddr)(JNIEnv *env, jobject o, jlong id, jlong addr) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    if (!cm) return -1;
    memcpy((void *)(intptr_t)addr, rdma_get_local_addr(cm), sizeof(struct sockaddr_in));
    return 0;
}

JNIEXPORT jint JNICALL DISNI(getDstAddr)(JNIEnv *env, jobject o, jlong id, jlong addr) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    if (!cm) return -1;
    memcpy((void *)(intptr_t)addr, rdma_get_peer_addr(cm), sizeof(struct sockaddr_in));
    return 0;
}

JNIEXPORT jint JNICALL DISNI(destroyEp)(JNIEnv *env, jobject o, jlong id) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    if (!cm) return -1;
    free_extra(cm);
    rdma_destroy_ep(cm);
    return 0;
}

/* ---------------------------------------------------------------- verbs */

JNIEXPORT jlong JNICALL DISNI(allocPd)(JNIEnv *env, jobject o, jlong ctx) {
    struct ibv_pd *pd;
    if (!ctx) { throw_io(env, "allocPd: no device context", 0); return -1; }
    pd = ibv_alloc_pd((struct ibv_context *)(intptr_t)ctx);
    if (!pd) { throw_io(env, "ibv_alloc_pd", errno); return -1; }
    return (jlong)(intptr_t)pd;
}

JNIEXPORT jlong JNICALL DISNI(createCompChannel)(JNIEnv *env, jobject o, jlong ctx) {
    struct ibv_comp_channel *ch;
    if (!ctx) { throw_io(env, "createCompChannel: no device context", 0); return -1; }
    ch = ibv_create_comp_channel((struct ibv_context *)(intptr_t)ctx);
    if (!ch) { throw_io(env, "ibv_create_comp_channel", errno); return -1; }
    set_nonblocking(ch->fd);
    return (jlong)(intptr_t)ch;
}

JNIEXPORT jlong JNICALL DISNI(createCQ)(JNIEnv *env, jobject o, jlong ctx, jlong channel, jint ncqe, jint vector) {
    struct ibv_cq *cq;
    if (!ctx || !channel) { throw_io(env, "createCQ: no context or channel", 0); return -1; }
    cq = ibv_create_cq((struct ibv_context *)(intptr_t)ctx, ncqe, NULL, (struct ibv_comp_channel *)(intptr_t)channel, vector);
    if (!cq) { throw_io(env, "ibv_create_cq", errno); return -1; }
    return (jlong)(intptr_t)cq;
}

JNIEXPORT jint JNICALL DISNI(modifyQP)(JNIEnv *env, jobject o, jlong qp, jlong addr) {
    /* DiSNI's own library ignores the attributes as well; the RDMA CM moves QPs through their states. */
    throw_io(env, "modifyQP is not supported: the RDMA CM drives QP state (use disconnect)", EOPNOTSUPP);
    return -1;
}

JNIEXPORT jlong JNICALL DISNI(regMr)(JNIEnv *env, jobject o, jlong pd, jlong addr, jint len, jint access,
                                     jlong lkey_out, jlong rkey_out, jlong handle_out) {
    struct ibv_mr *mr;
    if (!pd) { throw_io(env, "regMr: no protection domain", 0); return -1; }
    mr = ibv_reg_mr((struct ibv_pd *)(intptr_t)pd, (void *)(intptr_t)addr, (size_t)(uint32_t)len, access);
    if (!mr) { throw_io(env, "ibv_reg_mr", errno); return -1; }
    *(int32_t *)(intptr_t)lkey_out = (int32_t)mr->lkey;
    *(int32_t *)(intptr_t)rkey_out = (int32_t)mr->rkey;
    *(int32_t *)(intptr_t)handle_out = (int32_t)mr->handle;
    return (jlong)(intptr_t)mr;
}

JNIEXPORT jint JNICALL DISNI(queryOdpSupport)(JNIEnv *env, jobject o, jlong ctx) {
    return -1; /* on-demand paging is not used: buffers are registered up front */
}

JNIEXPORT jint JNICALL DISNI(expPrefetchMr)(JNIEnv *env, jobject o, jlong mr, jlong addr, jint len) {
    return -1;
}

JNIEXPORT void JNICALL DISNI(deregMr)(JNIEnv *env, jobject o, jlong mr) {
    int ret;
    if (!mr) { throw_io(env, "deregMr: no region", 0); return; }
    ret = ibv_dereg_mr((struct ibv_mr *)(intptr_t)mr);
    if (ret) throw_io(env, "ibv_dereg_mr", ret);
}

static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

JNIEXPORT void JNICALL DISNI(postSend)(JNIEnv *env, jobject o, jlong qp, jlong list) {
    struct ibv_send_wr wrs[MAX_CHAINED_SENDS];
    struct ibv_send_wr *bad = NULL;
    const uint8_t *j = (const uint8_t *)(intptr_t)list;
    int n = 0, ret;
    if (!qp) { throw_io(env, "postSend: no queue pair", 0); return; }
    while (j) {
        struct ibv_send_wr *w;
        if (n == MAX_CHAINED_SENDS) { throw_io(env, "postSend: more than 64 chained requests", E2BIG); return; }
        w = &wrs[n];
        memset(w, 0, sizeof *w);
        w->wr_id = rd64(j + J_WR_ID);
        w->sg_list = (struct ibv_sge *)(intptr_t)rd64(j + J_SG_LIST);
        w->num_sge = (int)rd32(j + J_NUM_SGE);
        w->opcode = (enum ibv_wr_opcode)rd32(j + J_OPCODE);
        w->send_flags = rd32(j + J_SEND_FLAGS);
        w->imm_data = rd32(j + J_IMM_DATA); /* also invalidate_rkey, for IBV_WR_SEND_WITH_INV */
        w->wr.rdma.remote_addr = rd64(j + J_REMOTE_ADDR);
        w->wr.rdma.rkey = rd32(j + J_RKEY);
        if (n > 0) wrs[n - 1].next = w;
        n++;
        j = (const uint8_t *)(intptr_t)rd64(j + J_NEXT);
    }
    if (n == 0) return;
    ret = ibv_post_send((struct ibv_qp *)(intptr_t)qp, wrs, &bad);
    if (ret) throw_io(env, "ibv_post_send", ret);
}

JNIEXPORT void JNICALL DISNI(postRecv)(JNIEnv *env, jobject o, jlong qp, jlong list) {
    struct ibv_recv_wr *bad = NULL;
    int ret;
    if (!qp) { throw_io(env, "postRecv: no queue pair", 0); return; }
    ret = ibv_post_recv((struct ibv_qp *)(intptr_t)qp, (struct ibv_recv_wr *)(intptr_t)list, &bad);
    if (ret) throw_io(env, "ibv_post_recv", ret);
}

JNIEXPORT jint JNICALL DISNI(getCqEvent)(JNIEnv *env, jobject o, jlong channel, jint timeout) {
    struct ibv_comp_channel *ch = (struct ibv_comp_channel *)(intptr_t)channel;
    struct ibv_cq *cq;
    void *ctx;
    struct pollfd p;
    if (!ch) { throw_io(env, "getCqEvent: no channel", 0); return -1; }
    p.fd = ch->fd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, timeout) <= 0) return -1;
    return ibv_get_cq_event(ch, &cq, &ctx);
}

JNIEXPORT jint JNICALL DISNI(pollCQ)(JNIEnv *env, jobject o, jlong cq, jint ne, jlong wcs) {
    if (!cq) { throw_io(env, "pollCQ: no completion queue", 0); return -1; }
    return ibv_poll_cq((struct ibv_cq *)(intptr_t)cq, ne, (struct ibv_wc *)(intptr_t)wcs);
}

JNIEXPORT jint JNICALL DISNI(reqNotifyCQ)(JNIEnv *env, jobject o, jlong cq, jint solicited) {
    if (!cq) { throw_io(env, "reqNotifyCQ: no completion queue", 0); return -1; }
    return ibv_req_notify_cq((struct ibv_cq *)(intptr_t)cq, solicited);
}

JNIEXPORT jint JNICALL DISNI(ackCqEvent)(JNIEnv *env, jobject o, jlong cq, jint n) {
    if (!cq) return -1;
    ibv_ack_cq_events((struct ibv_cq *)(intptr_t)cq, (unsigned int)n);
    return 0;
}

JNIEXPORT jint JNICALL DISNI(destroyCompChannel)(JNIEnv *env, jobject o, jlong channel) {
    if (!channel) return -1;
    return ibv_destroy_comp_channel((struct ibv_comp_channel *)(intptr_t)channel);
}

JNIEXPORT jint JNICALL DISNI(deallocPd)(JNIEnv *env, jobject o, jlong pd) {
    if (!pd) return -1;
    return ibv_dealloc_pd((struct ibv_pd *)(intptr_t)pd);
}

JNIEXPORT jint JNICALL DISNI(destroyCQ)(JNIEnv *env, jobject o, jlong cq) {
    if (!cq) return -1;
    return ibv_destroy_cq((struct ibv_cq *)(intptr_t)cq);
}

JNIEXPORT jlong JNICALL DISNI(getContext)(JNIEnv *env, jobject o, jlong id) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    if (!cm) { throw_io(env, "getContext: no id", 0); return -1; }
    return cm->verbs ? (jlong)(intptr_t)cm->verbs : -1;
}

JNIEXPORT jint JNICALL DISNI(getQpNum)(JNIEnv *env, jobject o, jlong qp) {
    if (!qp) { throw_io(env, "getQpNum: no queue pair", 0); return -1; }
    return (jint)((struct ibv_qp *)(intptr_t)qp)->qp_num;
}

JNIEXPORT jint JNICALL DISNI(getContextFd)(JNIEnv *env, jobject o, jlong ctx) {
    if (!ctx) { throw_io(env, "getContextFd: no context", 0); return -1; }
    return ((struct ibv_context *)(intptr_t)ctx)->cmd_fd;
}

JNIEXPORT jint JNICALL DISNI(getContextNumCompVectors)(JNIEnv *env, jobject o, jlong ctx) {
    if (!ctx) { throw_io(env, "getContextNumCompVectors: no context", 0); return -1; }
    return ((struct ibv_context *)(intptr_t)ctx)->num_comp_vectors;
}

JNIEXPORT jint JNICALL DISNI(getPdHandle)(JNIEnv *env, jobject o, jlong pd) {
    if (!pd) { throw_io(env, "getPdHandle: no protection domain", 0); return -1; }
    return (jint)((struct ibv_pd *)(intptr_t)pd)->handle;
}

JNIEXPORT jint JNICALL DISNI(getSockAddrInSize)(JNIEnv *env, jobject o) { return sizeof(struct sockaddr_in); }
JNIEXPORT jint JNICALL DISNI(getIbvRecvWRSize)(JNIEnv *env, jobject o) { return sizeof(struct ibv_recv_wr); }
/* The Java layout _postSend reads, not sizeof(struct ibv_send_wr): see the top of this file. */
JNIEXPORT jint JNICALL DISNI(getIbvSendWRSize)(JNIEnv *env, jobject o) { return J_SEND_WR_SIZE; }
JNIEXPORT jint JNICALL DISNI(getIbvSgeSize)(JNIEnv *env, jobject o) { return sizeof(struct ibv_sge); }
JNIEXPORT jint JNICALL DISNI(getIbvWCSize)(JNIEnv *env, jobject o) { return sizeof(struct ibv_wc); }
JNIEXPORT jint JNICALL DISNI(getRemoteAddressOffset)(JNIEnv *env, jobject o) { return J_REMOTE_ADDR; }
JNIEXPORT jint JNICALL DISNI(getRKeyOffset)(JNIEnv *env, jobject o) { return J_RKEY; }
JNIEXPORT jint JNICALL DISNI(getVersion)(JNIEnv *env, jobject o) { return DISNI_JNI_VERSION; }

