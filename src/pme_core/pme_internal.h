/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pme_internal.h - the data of pme_core: the endpoint and what hangs off it. Not
 * installed.
 *
 * pme_core is layered; each layer calls only its own layer and the layers below it, and
 * reaches a layer above only through the callbacks that layer registered (struct
 * pme_upcalls, link.h; the device's receive callback). doc/design/core.md places every
 * file (test/tools/t-layers.sh checks the calls against it):
 *
 *   6 api.c api_rma.c ep.c config.c   the endpoint and the public API (pme.h)
 *     place.c
 *   5 progress.c wait.c helper.c      progress passes, waiting, the liveness helper,
 *     counters.c                      the published counters
 *   4 msg.c eager.c rndv*.c pool.c    messages: eager, rendezvous, the receive pool,
 *     events.c rma_*.c (not rma_acc)  events handed to the caller; one-sided requests
 *   3 peers.c link_*.c rto.c          peers and their reliable channel: Go-Back-N,
 *     timers.c rails.c failover.c     control frames, credit, timers, liveness, rails
 *   2 dev*.c node_routes.c iflocal.c  devices: ring, pcap, loop, kernel; routes, NICs
 *   1 wire.c                          frame layout, seal and check (MAC or CRC)
 *   0 gmac.c crc32c.c slots.c cache.c iovcur.c ranges.c claim.c iflist.c errors.c
 *     rma_acc.c                       leaves
 *
 * Everything below is data that several layers read; who owns (writes) each part is
 * said where it is declared. Memory follows PM (Table 4.6 of the PM/Ethernet thesis):
 * receive buffering is one budget per endpoint, not per peer, and per-peer state is a
 * small fixed struct.
 */
#ifndef PME_INTERNAL_H
#define PME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "cache.h"
#include "clock.h"
#include "dev.h"
#include "held.h"
#include "idxvec.h"
#include "iovcur.h"
#include "pme.h"
#include "ranges.h"
#include "pme_wire.h"
#include "node_routes.h"
#include "seq.h"
#include "slots.h"
#include "wire.h"

#define PME_TX_BATCH 32
#define PME_RX_BATCH 64
#define PME_MAX_PEERS (1u << 16)
/* Room for the Ethernet header, the PME header and the largest sub-header. */
#define PME_HDRS_BYTES (PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + 32)

/* Per-peer counters: the subset of struct pme_counters that is about one peer. */
#define PME_PEER_COUNTER_NAMES(X) \
    X(tx_frames) X(tx_bytes) X(rx_frames) X(rx_bytes) X(tx_msgs) X(rx_msgs) \
    X(retransmits) X(rto_fired) X(lose_tx) X(lose_rx) X(stop_tx) X(stop_rx) \
    X(go_tx) X(go_rx) X(credit_stalls) X(drop_out_of_order) X(drop_duplicate) \
    X(drop_no_buffer)
struct pme_peer_counters {
#define PME_DECLARE_FIELD(name) uint64_t name;
    PME_PEER_COUNTER_NAMES(PME_DECLARE_FIELD)
#undef PME_DECLARE_FIELD
};

/* ---- layer 4 (messages) owns these ---- */

/* A receive-pool buffer: an eager message being assembled or delivered, or an RTS's
 * user header. Costs pme_wire_pool_cost(len) of the endpoint's receive budget. */
struct pme_rxbuf {
    pme_peer_t peer;
    uint32_t epoch;         /* the peer's rx_epoch when allocated; stale ones give no credit */
    uint32_t cost;
    uint32_t len;
    uint16_t hdr_len;
    uint8_t on_credit;      /* charged to the peer's credit (eager), not to free space */
    uint8_t bundle;         /* eager: a bundle of messages (PME_DATA_BUNDLE) */
    /* Events pointing into it (the messages of a bundle share one buffer): it returns
     * to the pool, and its cost to the peer's credit, when the last is released. */
    uint32_t refs;
    /* Callers read headers and payloads through typed pointers: keep them aligned as
     * malloc would (the header of a message is padded to 8 bytes by its sender). */
    _Alignas(16) uint8_t data[];
};

/* A rendezvous send, from pme_send until its data is acknowledged. */
enum { SREQ_WAIT_CTS = 1, SREQ_SENDING = 2 };
struct pme_sendreq {
    uint8_t state;
    uint8_t no_event;       /* an eager message sent by rendezvous: already completed */
    uint16_t hdr_len;
    pme_peer_t peer;
    uint32_t id;            /* slot handle, echoed by CTS */
    void *ctx;
    uint64_t total;
    void *owned;            /* a queue item to free on completion (eager copy), or NULL */
    size_t owned_bytes;     /* its share of the send pool */
    struct pme_iov_cursor cur;
    struct iovec *iov;      /* copy of the caller's iovec (points into this block) */
    uint8_t *hdr;           /* copy of the user header (points into this block) */
};

/* A rendezvous receive, from the RTS until its data has landed. */
enum { RNDV_OFFERED = 1, RNDV_ACCEPTED = 2 };
struct pme_rndv {
    uint8_t state;
    pme_peer_t peer;
    uint32_t peer_epoch;
    uint32_t id;
    uint32_t send_id;
    int status;             /* non-zero when the peer failed before it landed */
    uint64_t total, expected, received;
    void *ctx;
    struct pme_rxbuf *hdrbuf;
    struct pme_iov_cursor cur;
    struct iovec *iov;
    struct pme_ranges landed; /* the bytes that have landed (any order, once each) */
};

/* One-sided communication (rma_*.c). A holder of a window's lock. Its lock is released
 * only once the answers to its gets, which read the window as they go, are acknowledged:
 * an unlock that comes before marks it releasing. */
struct pme_rholder {
    pme_peer_t peer;        /* PME_PEER_SELF: our own caller */
    uint8_t type;           /* PME_RMA_LOCK_SHARED or _EXCL */
    bool releasing;
    uint32_t readers;       /* its gets' answers streaming from the window */
};

/* A window this endpoint exposes, with its lock. */
struct pme_rlock_wait;
struct pme_rwin {
    uint8_t *base;
    uint64_t size;
    uint32_t key;           /* its slot handle in ep->rwins */
    bool withdrawn;         /* being withdrawn: requests find no window */
    uint32_t readers;       /* answers streaming from it, not yet acknowledged */
    uint32_t shared;        /* holders of its lock, shared */
    bool exclusive;         /* ... or one holder, exclusive */
    struct pme_rholder *holders;
    uint32_t nholders, holders_cap;
    struct pme_rlock_wait *wait_head, *wait_tail; /* lock requests in order of arrival */
};

/* An origin's request that waits for its answer (GET, FETCH, CAS, LOCK, or an operation
 * that takes the lock): where the answer goes. */
struct pme_rreq {
    pme_peer_t peer;
    uint8_t op;             /* PME_RMA_* of the request */
    uint32_t id;            /* slot handle in ep->rreqs, the request's req_id */
    uint8_t *dst;           /* GET, FETCH, CAS: where the answer's bytes land */
    uint64_t len, received;
    bool sent;              /* left the peer's held requests (counted in rma_asking) */
};

/* ---- layer 3 (the link) owns these ---- */

/* One sequenced item of a rail's send queue. Frame i of an item is rebuilt from the
 * item alone whenever it goes (again), so an item never points at anything that may go
 * away before its last frame is acknowledged: an RTS keeps its own copy of the offer,
 * because the offer's request can complete (a CTS that discards it) while the RTS is
 * still unacknowledged. RDATA reads the sender's buffers through `cur`, which its
 * owner keeps alive until the item is done (pme_upcalls.item_done).
 *
 * A rendezvous stream is striped, over one rail or several: its item (the "stripe")
 * waits on the peer's stripe list and the rails carve pieces of it, RDATA items of
 * their own whose `stripe` points back at it and whose `base` is their first byte; the
 * stripe is done when every byte was carved and every piece acknowledged. Items that
 * must arrive in order (DATA, RTS, CTS) take one rail at a time and carry the peer's
 * `order` number, so that a receiver takes each once even when a dead rail's items go
 * again over another. */
struct pme_txmsg {
    struct pme_txmsg *next;
    uint8_t type;           /* PME_T_DATA, RTS, CTS, RDATA, NOP */
    uint8_t started;        /* first_seq/nframes are fixed */
    uint8_t charged;        /* DATA: its cost is in credit_used (stays so if it moves) */
    uint8_t may_gather;     /* small messages or one-sided operations of ours that may
                             * wait for others to join them (link_tx.c, gathering) */
    uint16_t hdr_len;       /* DATA, RTS: bytes of user header at the start of data */
    uint16_t aux;           /* CTS: PME_CTS_DISCARD; DATA: PME_DATA_BUNDLE; RMA:
                             * PME_RMA_BUNDLE */
    uint16_t nrec;          /* DATA, RMA: messages or records in it when a bundle */
    uint16_t rma_counts;    /* RMA bundle: records complete when it is acknowledged */
    uint16_t rma_answers;   /* RMA bundle: records that are our answers */
    uint32_t room;          /* DATA: bytes data[] holds when more messages may join it
                             * (eager.c), 0 when it holds exactly `total`; RMA bundle:
                             * the bytes data[] holds */
    uint32_t first_seq;
    uint32_t nframes;
    uint32_t frag;          /* payload bytes per frame */
    uint32_t cost;          /* DATA: credit it takes */
    uint32_t total;         /* DATA: bytes of hdr||data; RMA bundle: its bytes */
    uint32_t order;         /* DATA, RTS, CTS: the peer's in-order number (never 0) */
    void *owner;            /* RDATA: the message layer's request */
    struct pme_iov_cursor *cur; /* RDATA: where its bytes come from */
    uint64_t len;           /* RDATA: bytes to stream; RTS: bytes offered */
    uint64_t base;          /* RDATA piece: offset of its first byte in the stream */
    uint64_t carved;        /* stripe: bytes handed to pieces so far */
    uint32_t pieces_out;    /* stripe: pieces not yet acknowledged */
    struct pme_txmsg *stripe; /* RDATA piece: the stripe it was carved from */
    uint32_t send_id, rndv_id; /* RTS: send_id; CTS, RDATA: rndv_id; CTS: send_id */
    uint64_t accepted;      /* CTS */
    uint8_t data[];         /* DATA: hdr||data; RTS: the user header */
};

enum { TX_NEW = 0, TX_HELLO = 1, TX_OPEN = 2, TX_FAILED = 3 };
/* A rail's sending direction: RAIL_NEW, RAIL_HELLO and RAIL_OPEN as for the peer; a
 * rail dropped because its link went down or it stopped answering is RAIL_DEAD. */
enum { RAIL_NEW = 0, RAIL_HELLO = 1, RAIL_OPEN = 2, RAIL_DEAD = 3 };

/* One rail toward a peer: our device k and the peer's NIC k, with a Go-Back-N channel
 * of its own (sequence numbers, window, timers, ACK/LOSE/STOP/GO) in each direction, so
 * that a loss on one rail stalls none of the others. A peer reached over one interface
 * (a single NIC, a route on a mesh) has one rail. */
struct pme_rail {
    uint8_t mac[6];         /* the Ethernet destination of frames on it (next hop) */
    uint8_t dev;            /* the endpoint's device it leaves by (ep->devs) */
    uint8_t state;          /* RAIL_*: our sending direction */
    bool rx_open;           /* the peer's HELLO on this rail arrived: rcv_nxt is valid */
    bool stopped;           /* the peer sent STOP on it */
    bool we_stopped;        /* we sent STOP on it and owe a GO */
    bool lose_sent;         /* this gap was answered with Go-Back-N (a LOSE without a
                             * range): once, and nothing is held until it fills */
    bool name_gap;          /* the peer asked for an ACK while a gap was open: name the
                             * first gap again after the batch (its LOSE may be lost) */
    bool ack_now;
    bool probe;             /* next frame asks for an immediate ACK */
    bool rtt_timing;
    /* send direction */
    uint32_t snd_una, snd_nxt, snd_max;
    uint32_t resend_lo, resend_hi; /* frames a LOSE named to resend alone (lo == hi: none) */
    uint32_t cur_frame;
    uint32_t rto_us;        /* current timeout, doubled by each expiry */
    uint32_t srtt_us, rttvar_us; /* smoothed round trip and its variation (0: none yet) */
    uint32_t rtt_seq;       /* the frame being timed, if rtt_timing */
    struct pme_txmsg *q_head, *q_tail, *cur;
    uint64_t rtt_sent_ns;
    uint64_t rto_deadline;
    uint64_t owed_since_ns; /* when it began to owe us an answer on this rail (0: none) */
    uint64_t last_rx_ns;    /* when its last valid frame on this rail arrived */
    /* receive direction */
    uint32_t rcv_nxt;
    uint32_t unacked;
    uint64_t ack_deadline;
    struct pme_held held;   /* frames after a gap, kept until it fills (held.h) */
    struct pme_replay replay;  /* the peer's nonces seen on this rail (this incarnation) */
};

struct pme_peer {
    /* who it is and how to reach it */
    uint32_t node;
    uint16_t ep_id;
    bool routed;            /* rail 0 comes from the route file, not the address */
    uint8_t takes;          /* the PME_FEAT_* its HELLO or HELLO_ACK announced (they
                             * all lie in the low byte) */
    uint16_t max_frame;     /* bytes after the Ethernet header both sides take */
    uint8_t nrails;         /* rails allocated (the endpoint's, 1 on a mesh) */
    uint8_t peer_rails;     /* rails the peer has (its address or HELLO; 0: not known) */
    uint8_t primary;        /* the rail in-order items take (the first one alive) */
    /* link state */
    uint8_t tx_state;       /* TX_*: the peer's handshake (rail 0) and its failure */
    bool rx_open;           /* the peer's HELLO arrived: its direction is open */
    /* one byte of flags: the state of a peer must stay small (t_scale) */
    bool active : 1;        /* on the endpoint's timer list */
    bool dirty : 1;         /* on the endpoint's list to pump after a receive batch */
    bool credit_stalled : 1;
    bool keepalive_armed : 1; /* peer_deadline is a keepalive, not a credit request */
    bool suspect : 1;       /* on the endpoint's suspect list: verdict after a drain */
    bool ping_out : 1;      /* a PING to it awaits its PONG */
    bool gathering : 1;     /* on the endpoint's gathering list: small messages to it
                             * wait for its acknowledgement (link_tx.c) */
    uint8_t chal_gen;       /* moves on with each incarnation of it we adopt: our
                             * challenge to it (hello_wait.c) is then a new one */
    int16_t rma_status;     /* the first of our one-sided operations to it that failed
                             * since the caller asked (a PME_ERR_*) */
    uint32_t retired_incarnation; /* the incarnation of it a newer one replaced: never
                             * taken back (0: none) */
    uint64_t ping_token;
    int fail_status;
    uint32_t peer_rto_us;   /* the peer timer's interval, doubled while unanswered */
    /* send direction */
    uint32_t credit_limit, credit_used, credit_grant;
    uint32_t tx_order;      /* the last order number given to an in-order item */
    struct pme_txmsg *stripe_head, *stripe_tail; /* rendezvous streams the rails carve */
    uint64_t peer_deadline; /* keepalive or credit request (rails keep their own) */
    uint64_t last_rx_ns;    /* when the last valid frame from it arrived */
    uint64_t owed_since_ns; /* when it began to owe us an answer (0: owes nothing) */
    /* receive direction */
    uint32_t peer_incarnation; /* its incarnation, once it answered our challenge */
    bool known;             /* peer_incarnation is valid (link_hello.c: believed) */
    bool rma_skip;          /* the first frame of its current one-sided request was
                             * refused: so are the others */
    uint16_t rma_asking;    /* our one-sided requests it has yet to answer, sent */
    struct pme_replay kreplay; /* the nonces of its kernel's frames (PME_F_KERNEL) */
    uint32_t rx_epoch;
    uint32_t rx_order;      /* the order number of the next in-order item we take */
    uint32_t rx_grant;      /* what we reserved for it in our pool */
    uint32_t credit_granted, credit_consumed, credit_sent;
    /* written by layer 4 (messages), read by the timers */
    uint32_t rndv_out;      /* our rendezvous sends to it not yet complete */
    uint32_t rndv_in;       /* its rendezvous sends we accepted, not yet landed */
    uint32_t rma_pending;   /* our one-sided operations to it not complete */
    uint32_t rma_answers;   /* our answers to its requests, not yet acknowledged */
    struct pme_txmsg *rma_held; /* the last of our requests not sent yet, its next the
                             * first (a ring): they wait while it owes PME_RMA_MAX_ASKING
                             * answers (rma_origin.c) */
    struct pme_rxbuf *asm_buf; /* the eager message being assembled from it */
    uint32_t asm_off;
    uint32_t asm_order;     /* the order number of the message in asm_buf */
    struct pme_peer_counters *ctr;
    /* the rails: rail0 here, and with several an array of their own (rail[0..nrails)) */
    struct pme_rail *rail;
    struct pme_rail rail0;
};

struct pme_evq {
    struct pme_event *ev;
    uint32_t head, tail, mask;
};

struct pme_upcalls;
struct pme_hello_wait;
struct pme_counters_shm;
struct pme_shm_state;
struct pme_helper;

/* ---- the endpoint (layer 6 creates it; its parts belong to the layers named) ---- */
struct pme_ep {
    struct pme_config cfg;
    char *cfg_device, *cfg_iface;
    /* One device per data interface (layer 2); dev is devs[0], whose MAC is in the
     * endpoint's address. dself[i] is self with devs[i]'s MAC: frames leave a device
     * with its own source address, and frames for us arrive addressed to it. */
    struct pme_dev *dev;
    struct pme_dev *devs[PME_MAX_DEVS];
    unsigned ndev;
    struct pme_wire_self dself[PME_MAX_DEVS];
    struct pme_rx_ctx { struct pme_ep *ep; uint8_t dev; } rx_ctx[PME_MAX_DEVS];
    int wait_fd;                /* with several devices, an epoll set of their descriptors
                                 * (-1 if one has none: then nobody sleeps) */
    char ifname[PME_MAX_DEVS][PME_IFNAME_LEN]; /* devs' interfaces (none: loop) */
    unsigned nifname;
    struct pme_routes routes;   /* this node's route file, if there is one */
    /* Rails: on a switched network (no route file) device k is rail k toward every
     * peer that has a NIC k too; on a mesh an endpoint has one rail, the routed one. */
    unsigned nrails;
    uint8_t near_rail;          /* the rail whose NIC is nearest our cores (hwloc) */
    char near_cpus[PME_MAX_DEVS][32]; /* each device's NIC locality, for messages */
    uint32_t rails_warned;      /* rails (bit k) we already warned about dropping */
    struct pme_wire_self self;  /* who we are on the wire */
    struct pme_wire_keys keys;
    uint64_t nonce;             /* the last nonce we sent (layer 1 stamps, layer 3 counts) */
    unsigned mtu;
    size_t max_hdr;             /* the largest user header (pme_ep_max_hdr) */
    uint64_t now;
    const struct pme_upcalls *up; /* layer 4's entry points for layer 3 */

    /* layer 3: peers, in chunks of 256 never moved, so pointers stay valid */
    struct pme_peer **chunks;
    uint32_t npeers, nchunks;
    uint32_t *hash;         /* open addressing: peer index + 1, 0 empty */
    uint32_t hash_mask;
    pme_peer_t last_peer;   /* the peer the last lookup found */
    struct pme_idxvec active, dirty, suspects;
    uint64_t next_timer_ns;
    /* layer 3: small messages gathering into a bundle while coalesce_after frames of
     * their peer wait for an acknowledgement (link_tx.c): the peers that may hold one,
     * since when (0: none), whether the helper must hear of it when the caller leaves,
     * whether it has (its alarm is set: helper.c), and whether a pass sends them anyway
     * (pme_link_send_gathered) */
    struct pme_idxvec gathering;
    uint64_t gathering_since_ns;
    bool gathering_tell_helper;
    bool gathering_helper_alarm;
    bool gathering_release;
    /* layer 3: the transmit batch */
    struct pme_dev_frame batch[PME_TX_BATCH];
    uint8_t batch_hdr[PME_TX_BATCH][PME_HDRS_BYTES];
    uint32_t batch_seq[PME_TX_BATCH];
    uint8_t *bounce[PME_TX_BATCH];
    int nbatch;
    pme_peer_t batch_peer;
    uint8_t batch_rail;
    uint32_t batch_snd_max; /* the rail's snd_max before the batch: what was sent before */
    uint32_t blocked_devs;  /* devices that were full (bit k: ep->devs[k]): wait for their
                             * POLLOUT; the others go on sending */
    uint32_t stopped_peers; /* peers we sent STOP and owe a GO */
    size_t held_room;       /* bytes still free for frames held after gaps (PME_HOLD) */
    uint64_t version_nak_ns;
    /* layer 3: the handshake (hello_wait.c): our challenges derive from chal_base; the
     * HELLOs of incarnations that have not answered one yet wait in hello_wait */
    uint64_t chal_base;
    struct pme_hello_wait *hello_wait;
    uint32_t nhello_wait, hello_wait_cap;

    /* layer 4 */
    struct pme_evq evq;
    struct pme_slots sendreqs, rndvs;
    struct pme_cache cache;     /* eager send copies and receive buffers */
    size_t rx_used, rx_reserved, tx_used;
    /* layer 4: one-sided communication */
    struct pme_slots rwins;     /* windows we expose, by key */
    struct pme_slots rreqs;     /* our requests waiting for their answer */
    uint32_t rma_self_pending;  /* our own lock requests on our windows, not granted */

    /* layer 5: adaptive waiting */
    unsigned ncores;            /* cores of the node the job may use (wait.c) */
    int wake_fd;                /* the caller's other wake-up source, or -1 (wait.c) */
    uint64_t load_sampled_ns;
    uint64_t run_delay_ns; /* this thread's run-queue delay at load_sampled_ns */
    uint64_t stats_sampled_ns;
    uint64_t devs_rechecked_ns;  /* progress.c: when the devices last looked again */
    bool oversubscribed;
    /* layer 5: the liveness helper (helper.c), and the lock every public entry takes
     * while a helper exists (eplock.h) */
    struct pme_helper *helper;
    int api_lock;           /* 1 while the caller or the helper is inside */
    int helper_held;        /* the caller touches exposed memory: the helper stays out */
    uint64_t api_exits;     /* how often the caller left the API (the helper compares) */

    /* counters (every layer increments; counters.c publishes) */
    struct pme_counters *ctr;
    struct pme_counters_shm *shm;
    struct pme_shm_state *shm_state;
    char err[512];
};

/* ---- leaves every layer may use ---- */

#define PME_PEER_CHUNK 256u
static inline struct pme_peer *pme_peer_get(struct pme_ep *ep, pme_peer_t idx)
{
    if (idx >= ep->npeers)
        return NULL;
    return &ep->chunks[idx / PME_PEER_CHUNK][idx % PME_PEER_CHUNK];
}

/* One descriptor that polls readable when any device has frames: the device's own, or
 * the epoll set of them all; -1 if a device has none. */
static inline int pme_ep_wait_fd(struct pme_ep *ep)
{
    return ep->ndev > 1 ? ep->wait_fd : ep->dev->ops->fd(ep->dev);
}

static inline struct pme_rail *pme_rail_get(struct pme_peer *p, unsigned k)
{
    return &p->rail[k];
}

static inline bool pme_rail_has_inflight(const struct pme_rail *r)
{
    return r->snd_nxt != r->snd_una;
}

/* Frames sent to the peer and not yet acknowledged, on any rail. */
static inline bool pme_peer_has_inflight(const struct pme_peer *p)
{
    for (unsigned k = 0; k < p->nrails; k++)
        if (pme_rail_has_inflight(&p->rail[k]))
            return true;
    return false;
}

/* Items queued to the peer that are not yet acknowledged (pme_ep_flush waits for none). */
static inline bool pme_peer_has_queued(const struct pme_peer *p)
{
    if (p->stripe_head)
        return true;
    for (unsigned k = 0; k < p->nrails; k++)
        if (p->rail[k].q_head)
            return true;
    return false;
}

/* errors.c: the endpoint's last detailed error (cause and fix). */
void pme_ep_set_error(struct pme_ep *ep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int pme_getrandom(void *buf, size_t len);

#endif
