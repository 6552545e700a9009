/* Shared by libdisni.so and libjbofrdma.so: what jbof's libdisni.so keeps per RDMA CM id (in rdma_cm_id.context)
 * for libjbofrdma.so to read, and helpers both use. */
#ifndef JBOF_CM_EXTRA_H
#define JBOF_CM_EXTRA_H
#include <stdint.h>

#define MAX_PRIVATE_DATA 256
/* Marks a context as jbof's record: another libdisni leaves contexts NULL, an application may use them. */
#define CM_EXTRA_MAGIC 0x6a626f66u

/* What jbof keeps per CM id (in rdma_cm_id.context): the last event's private data and status. */
struct cm_extra {
    uint32_t magic;
    int status;
    int length;
    uint8_t initiator_depth;
    uint8_t responder_resources;
    uint8_t data[MAX_PRIVATE_DATA];
};

#include <errno.h>
#include <jni.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static inline void throw_io(JNIEnv *env, const char *what, int err) {
    char msg[512];
    if (err)
        snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
    else
        snprintf(msg, sizeof msg, "%s", what);
    jclass cls = (*env)->FindClass(env, "java/io/IOException");
    if (cls) (*env)->ThrowNew(env, cls, msg);
}

static inline struct cm_extra *cm_extra_of(struct rdma_cm_id *cm) {
    struct cm_extra *x = cm ? cm->context : NULL;
    return x && x->magic == CM_EXTRA_MAGIC ? x : NULL;
}

/* Connection parameters: the device's limits, on accept never more than the connect request offered. */
static inline void fill_conn_param(struct rdma_cm_id *cm, struct rdma_conn_param *p, int retry, int rnr_retry) {
    struct ibv_device_attr attr;
    struct cm_extra *x = cm_extra_of(cm);
    memset(p, 0, sizeof *p);
    memset(&attr, 0, sizeof attr);
    if (cm->verbs) ibv_query_device(cm->verbs, &attr);
    p->initiator_depth = attr.max_qp_init_rd_atom;
    p->responder_resources = attr.max_qp_rd_atom;
    if (x) {
        if (x->initiator_depth && p->responder_resources > x->initiator_depth) p->responder_resources = x->initiator_depth;
        if (x->responder_resources && p->initiator_depth > x->responder_resources) p->initiator_depth = x->responder_resources;
    }
    p->retry_count = (uint8_t)retry;
    p->rnr_retry_count = (uint8_t)rnr_retry;
    p->flow_control = 1;
}

#endif
