/* What jbof's libdisni.so keeps per RDMA CM id (in rdma_cm_id.context) for libjbofrdma.so to read. */
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

#endif
