/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - MPI over PME's raw-Ethernet transport (pme_core).
 *
 * The per-object state the netmod keeps inside MPICH's own objects (requests,
 * communicators, address vector entries, ...). ch4 includes this header from
 * mpidpre.h, that is into nearly every file of MPICH, so it stays small and depends
 * on nothing but <stdint.h>: in particular it must not include pme.h, or every change
 * to the transport's header would recompile all of MPICH.
 */
#ifndef PME_PRE_H_INCLUDED
#define PME_PRE_H_INCLUDED

#include <stdint.h>

/* State of an MPIDIG (active message) request while PME moves its data. */
typedef struct {
    void *pack_buf;             /* owned bounce buffer for non-contiguous data, or NULL */
    uint32_t rndv;              /* receiver: the PME rendezvous offer being answered */
    uint32_t peer;              /* receiver: the peer that made the offer */
    uint64_t total;             /* receiver: bytes offered */
    uint8_t handler_id;         /* sender: whose origin callback completes the send */
    uint8_t flags;              /* MPIDI_PME_AMREQ_* (pme_impl.h) */
} MPIDI_PME_am_request_t;

/* Native (non-AM) request state: the netmod has none, everything goes through MPIDIG. */
typedef struct {
    int unused;
} MPIDI_PME_request_t;

/* A communicator: where its ranks sit on the torus (topo_place.c), or NULL. */
struct MPIDI_PME_place;
typedef struct {
    struct MPIDI_PME_place *place;
} MPIDI_PME_comm_t;

typedef struct {
    int unused;
} MPIDI_PME_dt_t;

typedef struct {
    int unused;
} MPIDI_PME_op_t;

/* A window: the netmod's one-sided state of it (MPIDI_PME_rwin_t, rma_win.c), or NULL
 * when MPIDIG does all of its one-sided communication. */
typedef struct {
    void *rma;
} MPIDI_PME_win_t;

typedef struct {
    int unused;
} MPIDI_PME_part_t;

/* Called by MPICH's shared-memory eager queue (its iqueue, patched by maint/build-mpich):
 * once a cell is in the queue of the node's rank local_rank (rings that rank's doorbell
 * if it sleeps on the network device), and once this rank has taken a cell from its
 * own (a progress pass that did is not idle). See shm_wake.c. */
void MPIDI_PME_shm_sent(int local_rank);
void MPIDI_PME_shm_received(void);

/* An address vector entry: the PME peer handle (pme_peer_t) of that process. */
typedef struct {
    uint32_t peer;
} MPIDI_PME_addr_t;

#endif /* PME_PRE_H_INCLUDED */
