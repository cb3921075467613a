/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - internal declarations shared by the netmod's .c files.
 *
 * Only the netmod's own sources include this header (and with it the transport's
 * pme.h); the rest of MPICH sees pme_pre.h alone and calls the netmod through ch4's
 * function table (func_table.c).
 */
#ifndef PME_IMPL_H_INCLUDED
#define PME_IMPL_H_INCLUDED

#include "mpidimpl.h"
#include "pme_noinline.h"
#include "pme.h"
#include "pme_am_wire.h"
#include "pme_topo_search.h"

#include <time.h>

/* MPIDI_PME_am_request_t.flags */
#define MPIDI_PME_AMREQ_RNDV_OFFER  0x1 /* receiver: an offer waits for pme_rndv_accept */
#define MPIDI_PME_AMREQ_PACKED      0x2 /* receiver: data lands in pack_buf, unpacked later */
#define MPIDI_PME_AMREQ_ACC         0x4 /* receiver: MPIDIG accumulates when it lands */

/* Business cards exchanged through PMI: a PME address, or "!<host>: <error>". */
#define MPIDI_PME_CARD_LEN 256

/* The revision of what the netmods of a job do between them on top of PME's wire: the
 * netmod's message header, how windows are created (which collectives, which answers),
 * what a native RMA operation carries. Two builds that differ here speak the same wire
 * version and still hang each other. Raise it with every such change. It travels in a
 * usable card's byte at MPIDI_PME_CARD_REV_OFF, past the longest address: builds from
 * before it left that byte 0. */
#define MPIDI_PME_NETMOD_REV 1
#define MPIDI_PME_CARD_REV_OFF PME_ADDR_MAX

/* Largest netmod header + MPIDIG header we build on the stack. */
#define MPIDI_PME_HDR_BUF 1536

/* A send that pme_send could not take yet (PME_EAGAIN): kept in order until it can. */
typedef struct MPIDI_PME_sendq {
    struct MPIDI_PME_sendq *next;
    uint32_t peer;
    int rank;                   /* for error messages */
    MPIR_Request *sreq;         /* NULL for header-only messages */
    struct iovec iov;
    int iovcnt;
    size_t hdr_len;
    uint64_t hdr[];             /* copy of the wire header + MPIDIG header */
} MPIDI_PME_sendq_t;

/* A connect/accept handshake message waiting for MPIDI_PME_dynamic_recv. */
typedef struct MPIDI_PME_dynmsg {
    struct MPIDI_PME_dynmsg *next;
    int sub;                    /* MPIDI_PME_DYN_* */
    uint32_t tag;
    size_t len;
    char data[];
} MPIDI_PME_dynmsg_t;

/* What the netmod knows about each PME peer (indexed by pme_peer_t). */
typedef struct {
    char addr[PME_ADDR_MAX];    /* its PME address (business card) */
    int world_rank;             /* rank in this job's MPI_COMM_WORLD, or -1 */
    uint64_t gpid;              /* where it sits in ch4's address vector tables */
    int has_gpid;
    int failed;                 /* PME_EV_PEER_FAILED seen */
    int fail_status;
} MPIDI_PME_peer_t;

typedef struct {
    pme_ep_t *ep;
    int open;
    size_t max_hdr;             /* pme_ep_max_hdr */
    size_t eager_max;           /* pme_ep_eager_max */
    MPI_Aint am_hdr_max;        /* largest MPIDIG header we carry */
    unsigned peer_timeout_ms;
    unsigned rto_us;
    char iface[PME_MAX_IFACES * 16];  /* one interface, or several: "xp,xm,yp,ym" */
    const char *iface_origin;   /* how the interface was chosen (for messages) */
    char addr[PME_ADDR_MAX];    /* our address as published */
    int init_errno;             /* why init_local failed (reported by init_world) */
    char init_errmsg[512];      /* the same, one line (the other processes get what fits in a card) */

    MPIDI_PME_peer_t *peers;
    uint32_t npeers_alloc;

    /* sends waiting for room in PME's send pool, in order */
    MPIDI_PME_sendq_t *sendq_head, *sendq_tail;
    /* a peer failure that the next progress call reports */
    int pending_errno;

    /* waiting policy */
    uint64_t idle_since_ns;
    int last_progress_count;
    int last_shm_cells;         /* MPIDI_PME_shm_cells_taken() at the last activity */
    uint64_t last_frames;
    unsigned max_sleep_us;

    /* scratch: packing small non-contiguous sends */
    void *pack_scratch;

    /* connect/accept */
    MPIDI_PME_dynmsg_t *dyn_head;

    /* windows whose accumulates PME does (rma_win.c): MPIDIG's own must then keep the
     * liveness helper out (am.c) */
    int rma_acc_windows;

    /* where this node sits (pme_ep_topology), asked once the endpoint is open */
    struct pme_topology topo;
    int topo_asked;
    unsigned long long axes_colls;      /* collectives run along the torus's axes */

    /* the shared-memory doorbell (shm_wake.c) */
    unsigned long long shm_rings;       /* doorbells we rang for ranks that slept */
    unsigned long long shm_wakeups;     /* our sleeps that our doorbell ended or cut short */
} MPIDI_PME_global_t;

extern MPIDI_PME_global_t MPIDI_PME_global;

static inline uint64_t MPIDI_PME_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#define MPIDI_PME_AV(av)        ((av)->netmod.pme)
#define MPIDI_PME_AMREQ(req)    (MPIDIG_REQUEST(req, netmod_am.pme))

/* Internal functions (entry points: pme_noinline.h). Each file calls only those of
 * the files before it in doc/design/netmod.md's table (test/tools/t-layers.sh checks),
 * so that the netmod reads from the bottom up: globals.c, dynq.c, err.c, send.c, the
 * rma*.c, am.c, spawn.c, the topo_*.c, coll_axes.c, pvars.c, init*.c, progress.c. */

/* err.c */
int MPIDI_PME_make_error(int errclass, const char *func, int line, const char *summary,
                         const char *detail);
int MPIDI_PME_error_from_status(int status, int rank, const char *what);
/* hydra ends the whole job as soon as one process aborts, and the output still on its way
 * from any process (the aborting one's too) may be dropped: a job that printed nothing
 * but its header was all a user got from a failure. So a failure that may end the job
 * is said on stderr (when `say`), and the process then pauses 300 ms for the line to
 * reach mpiexec before MPICH aborts. */
void MPIDI_PME_say_then_pause(int say, const char *summary, const char *detail);
/* The same for the first peer this process loses (once per process: a job that
 * survives failures pauses only once). */
void MPIDI_PME_say_peer_failure(int status, int rank);

/* globals.c: the global state and the peer table */
int MPIDI_PME_peer_slot(uint32_t peer);
int MPIDI_PME_world_rank_of(uint32_t peer);
void MPIDI_PME_globals_free(void);

/* shm_wake.c: the doorbell MPICH's shared-memory senders ring for a rank that sleeps
 * (MPIDI_PME_shm_sent, MPICH's hook, is declared in pme_pre.h) */
int MPIDI_PME_shm_wake_init(void);
void MPIDI_PME_shm_wake_finalize(void);
int MPIDI_PME_shm_wake_unannounced(void);
void MPIDI_PME_shm_wake_announce(void);
int MPIDI_PME_shm_cells_taken(void);
void MPIDI_PME_shm_wake_disarm(void);

/* dynq.c: connect/accept messages waiting for spawn.c. Their kind travels in the
 * netmod header's handler byte (unused by MPIDI_PME_KIND_DYNPROC before 5.0's
 * intercommunicators needed a second kind). */
#define MPIDI_PME_DYN_CONNECT  0        /* dynamic_send/recv: port tag */
#define MPIDI_PME_DYN_SENDRECV 1        /* dynamic_sendrecv: tag, data led by a context id */
int MPIDI_PME_dynq_put(int sub, uint32_t tag, const void *data, size_t len);
int MPIDI_PME_dynq_take(int sub, uint32_t tag, const void *lead, size_t lead_len, void *buf,
                        size_t size, size_t * got);
void MPIDI_PME_dynq_free(void);

/* send.c: pme_send, and the queue of sends it could not take yet */
int MPIDI_PME_origin_done(MPIR_Request * sreq);
int MPIDI_PME_send_or_queue(uint32_t peer, int rank, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, MPIR_Request * sreq,
                            int data_is_scratch);
int MPIDI_PME_send_raw(uint32_t peer, int rank, const void *hdr, size_t hdr_len,
                       const void *data, size_t data_len);
int MPIDI_PME_sendq_drain(void);
void MPIDI_PME_fail_sendq_peer(uint32_t peer, int mpi_errno);

/* am.c: the target side, called by progress.c */
int MPIDI_PME_handle_msg(struct pme_event *ev);
int MPIDI_PME_handle_rts(struct pme_event *ev);
int MPIDI_PME_handle_send_done(struct pme_event *ev);
int MPIDI_PME_handle_recv_done(struct pme_event *ev);

/* topo_place.c: where the ranks of an intracommunicator sit on the torus
 * (MPIDI_PME_place_t, pme_topo_search.h), kept while this node is on one
 * (PME_TOPO_TORUS). */
#define MPIDI_PME_PLACE(comm) (MPIDI_COMM(comm, netmod.pme).place)

const struct pme_topology *MPIDI_PME_topology(void);
int MPIDI_PME_place_build(MPIR_Comm * comm);
void MPIDI_PME_place_free(MPIR_Comm * comm);

/* topo_map.c: placing a virtual topology's vertices on a communicator's ranks (the
 * search is topo_search.c's, MPIDI_PME_place_map) */
int MPIDI_PME_take_vertex(const MPIR_Comm * comm, int n, const MPIDI_PME_edge_t * e,
                          int nedges, int *vertex, int *moved, unsigned *hash);

/* pvars.c */
void MPIDI_PME_pvars_init(void);

#endif /* PME_IMPL_H_INCLUDED */
