/*
 * libjbofrdma.so: jbof's native methods (io.jbof.transport.rdma.RdmaNative) for what DiSNI's API lacks:
 * CM private data on accept and reject, the private data and status a CM event carried (kept by jbof's
 * libdisni.so; with another libdisni there is none), one wait on a completion channel and a wake-up
 * eventfd together, and the device list for error messages. Works beside any libdisni.so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jni.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "jbof_cm_extra.h"

#define JBOF(name) Java_io_jbof_transport_rdma_RdmaNative_##name

JNIEXPORT jint JNICALL JBOF(abiVersion)(JNIEnv *env, jclass c) { return 4; }

/* The device's transport as verbs reports it (enum ibv_transport_type: 0 InfiniBand and RoCE, 1 iWARP, ...). */
JNIEXPORT jint JNICALL JBOF(transportType)(JNIEnv *env, jclass c, jlong context) {
    struct ibv_context *ctx = (struct ibv_context *)(intptr_t)context;
    return ctx && ctx->device ? (jint)ctx->device->transport_type : -1;
}

JNIEXPORT jobjectArray JNICALL JBOF(deviceNames)(JNIEnv *env, jclass c) {
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    jclass str = (*env)->FindClass(env, "java/lang/String");
    jobjectArray out;
    if (!list) n = 0;
    out = (*env)->NewObjectArray(env, n, str, NULL);
    for (int i = 0; out && i < n; i++)
        (*env)->SetObjectArrayElement(env, out, i, (*env)->NewStringUTF(env, ibv_get_device_name(list[i])));
    if (list) ibv_free_device_list(list);
    return out;
}

JNIEXPORT jbyteArray JNICALL JBOF(privateData)(JNIEnv *env, jclass c, jlong id) {
    struct cm_extra *x = cm_extra_of((struct rdma_cm_id *)(intptr_t)id);
    jbyteArray out;
    if (!x) return NULL;
    out = (*env)->NewByteArray(env, x->length);
    if (out) (*env)->SetByteArrayRegion(env, out, 0, x->length, (const jbyte *)x->data);
    return out;
}

JNIEXPORT jint JNICALL JBOF(eventStatus)(JNIEnv *env, jclass c, jlong id) {
    struct cm_extra *x = cm_extra_of((struct rdma_cm_id *)(intptr_t)id);
    return x ? x->status : 0;
}

static int copy_private(JNIEnv *env, jbyteArray data, uint8_t *buf) {
    int len = data ? (*env)->GetArrayLength(env, data) : 0;
    if (len > MAX_PRIVATE_DATA) len = MAX_PRIVATE_DATA;
    if (len) (*env)->GetByteArrayRegion(env, data, 0, len, (jbyte *)buf);
    return len;
}

JNIEXPORT void JNICALL JBOF(accept)(JNIEnv *env, jclass c, jlong id, jint retry, jint rnr_retry, jbyteArray data) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    struct rdma_conn_param p;
    uint8_t buf[MAX_PRIVATE_DATA];
    if (!cm) { throw_io(env, "accept: no id", 0); return; }
    fill_conn_param(cm, &p, retry, rnr_retry);
    p.private_data_len = (uint8_t)copy_private(env, data, buf);
    p.private_data = buf;
    if (rdma_accept(cm, &p)) throw_io(env, "rdma_accept", errno);
}

/*
 * The local ACK timeout of the id's QP, 4.096 us x 2^timeout: how long a sender waits for an ACK before it
 * retransmits (go-back-N on RoCE: a packet lost at the tail of a message stalls the QP that long). rdma_cm
 * otherwise derives it from the path's packet lifetime. Before connect or accept.
 */
JNIEXPORT void JNICALL JBOF(setAckTimeout)(JNIEnv *env, jclass c, jlong id, jint timeout) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    uint8_t t = (uint8_t)timeout;
    if (!cm) { throw_io(env, "setAckTimeout: no id", 0); return; }
    if (rdma_set_option(cm, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t)) throw_io(env, "rdma_set_option(ACK_TIMEOUT)", errno);
}

JNIEXPORT void JNICALL JBOF(reject)(JNIEnv *env, jclass c, jlong id, jbyteArray data) {
    struct rdma_cm_id *cm = (struct rdma_cm_id *)(intptr_t)id;
    uint8_t buf[MAX_PRIVATE_DATA];
    int len;
    if (!cm) { throw_io(env, "reject: no id", 0); return; }
    len = copy_private(env, data, buf);
    if (rdma_reject(cm, buf, (uint8_t)len)) throw_io(env, "rdma_reject", errno);
}

JNIEXPORT jint JNICALL JBOF(eventFd)(JNIEnv *env, jclass c) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) throw_io(env, "eventfd", errno);
    return fd;
}

JNIEXPORT void JNICALL JBOF(signal)(JNIEnv *env, jclass c, jint fd) {
    uint64_t one = 1;
    ssize_t r = write(fd, &one, sizeof one);
    (void)r; /* a full counter still wakes the waiter */
}

JNIEXPORT void JNICALL JBOF(closeFd)(JNIEnv *env, jclass c, jint fd) {
    close(fd);
}

/*
 * Waits until the completion channel has an event or the eventfd is signalled, at most timeout ms
 * (-1: no bound). Takes and acknowledges every pending completion event and drains the eventfd.
 * Returns 1 when a completion event came, 2 for a wake-up, 3 for both, 0 on timeout, -errno on error.
 */
JNIEXPORT jint JNICALL JBOF(await)(JNIEnv *env, jclass c, jlong channel, jint efd, jint timeout) {
    struct ibv_comp_channel *ch = (struct ibv_comp_channel *)(intptr_t)channel;
    struct pollfd p[2];
    int n = 0, got = 0, r;
    if (ch) { p[n].fd = ch->fd; p[n].events = POLLIN; p[n].revents = 0; n++; }
    if (efd >= 0) { p[n].fd = efd; p[n].events = POLLIN; p[n].revents = 0; n++; }
    r = poll(p, n, timeout);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    if (r == 0) return 0;
    for (int i = 0; i < n; i++) {
        if (!p[i].revents) continue;
        if (ch && p[i].fd == ch->fd) {
            struct ibv_cq *cq;
            void *ctx;
            while (ibv_get_cq_event(ch, &cq, &ctx) == 0) {
                ibv_ack_cq_events(cq, 1);
                got |= 1;
            }
        } else {
            uint64_t v;
            while (read(efd, &v, sizeof v) > 0) {}
            got |= 2;
        }
    }
    return got;
}

/*
 * The response capsule by SEND with Invalidate: the host asked (keyed SGL subtype Fh) that the
 * controller invalidate its key, which saves it a local invalidation. One signaled request, posted
 * directly: DiSNI's stateful calls cannot change the key to invalidate once built.
 */
JNIEXPORT void JNICALL JBOF(postSendInvalidate)(JNIEnv *env, jclass c, jlong qp, jlong wr_id, jlong addr, jint len,
                                                 jint lkey, jint rkey) {
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad = NULL;
    int ret;
    if (!qp) { throw_io(env, "postSendInvalidate: no queue pair", 0); return; }
    sge.addr = (uint64_t)addr;
    sge.length = (uint32_t)len;
    sge.lkey = (uint32_t)lkey;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = (uint32_t)rkey;
    ret = ibv_post_send((struct ibv_qp *)(intptr_t)qp, &wr, &bad);
    if (ret) throw_io(env, "ibv_post_send (SEND with Invalidate)", ret);
}
