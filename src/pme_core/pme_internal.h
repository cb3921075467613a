/*
 * pme_internal.h - state shared by the files of pme_core. Not installed.
 *
 * Memory follows PM (Table 4.6 of the PM/Ethernet thesis): receive buffering is one
 * budget per endpoint, not per peer, and per-peer state is a small fixed struct.
 */
#ifndef PME_INTERNAL_H
#define PME_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "cache.h"
#include "clock.h"
#include "dev.h"
#include "pme.h"
#include "pme_wire.h"
#include "seq.h"
#include "slots.h"

#define PME_HDRS_BYTES (PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + 16)
#define PME_TX_BATCH 32
#define PME_RX_BATCH 64
#define PME_MAX_PEERS (1u << 16)

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

/* An iovec walked front to back with a remembered position (rewinds start over). */
struct pme_iov_cursor {
    const struct iovec *iov;
    int iovcnt;
    int idx;            /* entry holding position pos */
    size_t in;          /* offset of pos inside iov[idx] */
    uint64_t pos;
};

/* A receive-pool buffer: an eager message being assembled or delivered, or an RTS's
 * user header. Costs pme_wire_pool_cost(len) of the endpoint's receive budget. */
struct pme_rxbuf {
    pme_peer_t peer;
    uint32_t epoch;         /* the peer's rx_epoch when allocated; stale ones give no credit */
    uint32_t cost;
    uint32_t len;
    uint16_t hdr_len;
    uint8_t on_credit;      /* charged to the peer's credit (eager), not to free space */
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
    void *owned;            /* a buffer to free on completion (eager copy), or NULL */
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
};

/* One sequenced item of a peer's send queue. Frame i of an item is rebuilt from the
 * item alone whenever it goes (again), so an item never points at anything that may go
 * away before its last frame is acknowledged: an RTS keeps its own copy of the offer,
 * because the offer's request can complete (a CTS that discards it) while the RTS is
 * still unacknowledged. Only RDATA points at its request, which lives until RDATA's
 * frames are all acknowledged or the peer fails. */
struct pme_txmsg {
    struct pme_txmsg *next;
    uint8_t type;           /* PME_T_DATA, RTS, CTS, RDATA, NOP */
    uint8_t started;        /* first_seq/nframes are fixed */
    uint16_t hdr_len;       /* DATA, RTS: bytes of user header at the start of data */
    uint16_t aux;           /* CTS: PME_CTS_DISCARD */
    uint32_t first_seq;
    uint32_t nframes;
    uint32_t frag;          /* payload bytes per frame */
    uint32_t cost;          /* DATA: credit it takes */
    uint32_t total;         /* DATA: bytes of hdr||data */
    struct pme_sendreq *req;/* RDATA */
    uint64_t len;           /* RDATA: bytes to stream; RTS: bytes offered */
    uint32_t send_id, rndv_id; /* RTS: send_id; CTS: both */
    uint64_t accepted;      /* CTS */
    uint8_t data[];         /* DATA: hdr||data; RTS: the user header */
};

enum { TX_NEW = 0, TX_HELLO = 1, TX_OPEN = 2, TX_FAILED = 3 };

struct pme_peer {
    uint8_t mac[6];
    uint16_t ep_id;
    uint8_t tx_state;
    bool rx_open;           /* the peer's HELLO arrived: rcv_nxt is valid */
    bool stopped;           /* the peer sent STOP */
    bool we_stopped;        /* we sent STOP and owe a GO */
    bool lose_sent;         /* one LOSE per gap */
    bool ack_now;
    bool active;            /* on the endpoint's timer list */
    bool dirty;             /* on the endpoint's list to pump after a receive batch */
    bool credit_stalled;
    bool probe;             /* next frame asks for an immediate ACK */
    bool keepalive_armed;   /* rto_deadline is a keepalive, not a retransmission */
    uint16_t max_frame;     /* bytes after the Ethernet header both sides take */
    int fail_status;
    /* send direction */
    uint32_t snd_una, snd_nxt, snd_max;
    uint32_t credit_limit, credit_used, credit_grant;
    struct pme_txmsg *q_head, *q_tail, *cur;
    uint32_t cur_frame;
    uint32_t rto_us;        /* current timeout, doubled by each expiry */
    uint32_t srtt_us, rttvar_us; /* smoothed round trip and its variation (0: none yet) */
    uint32_t rtt_seq;       /* the frame being timed, if rtt_timing */
    bool rtt_timing;
    uint64_t rtt_sent_ns;
    uint64_t rto_deadline;
    uint64_t last_rx_ns;    /* when the last valid frame from it arrived */
    uint64_t owed_since_ns; /* when it began to owe us an answer (0: owes nothing) */
    bool suspect;           /* on the endpoint's suspect list: verdict after a drain */
    uint32_t hello_tries;
    uint32_t rndv_out;      /* our rendezvous sends to it not yet complete */
    uint32_t rndv_in;       /* its rendezvous sends we accepted, not yet landed */
    /* receive direction */
    uint32_t peer_incarnation;
    uint32_t rx_epoch;
    uint32_t rcv_nxt;
    uint32_t rx_grant;      /* what we reserved for it in our pool */
    uint32_t credit_granted, credit_consumed, credit_sent;
    uint32_t unacked;
    uint64_t ack_deadline;
    struct pme_rxbuf *asm_buf;
    uint32_t asm_off;
    struct pme_peer_counters *ctr;
};

struct pme_evq {
    struct pme_event *ev;
    uint32_t head, tail, mask;
};

/* A growable vector of peer indices (timer list, dirty list). */
struct pme_idxvec {
    uint32_t *v;
    uint32_t n, cap;
};

struct pme_counters_shm;
struct pme_shm_state;

struct pme_ep {
    struct pme_config cfg;
    char *cfg_device, *cfg_iface;
    struct pme_dev *dev;
    uint8_t mac[6];
    uint16_t ep_id;
    uint16_t ethertype_be;
    unsigned mtu;
    uint32_t incarnation;
    uint64_t now;

    /* peers: chunks of 256, never moved, so pointers stay valid */
    struct pme_peer **chunks;
    uint32_t npeers, nchunks;
    uint32_t *hash;         /* open addressing: peer index + 1, 0 empty */
    uint32_t hash_mask;
    pme_peer_t last_peer;   /* the peer the last lookup found */

    struct pme_idxvec active, dirty, suspects;
    uint64_t next_timer_ns;

    struct pme_evq evq;
    struct pme_slots sendreqs, rndvs;
    struct pme_cache cache;     /* eager send copies and receive buffers */

    /* budgets */
    size_t rx_used, rx_reserved, tx_used;

    /* transmit batch */
    struct pme_dev_frame batch[PME_TX_BATCH];
    uint8_t batch_hdr[PME_TX_BATCH][64];
    uint32_t batch_seq[PME_TX_BATCH];
    uint8_t *bounce[PME_TX_BATCH];
    int nbatch;
    pme_peer_t batch_peer;
    uint32_t batch_snd_max; /* the peer's snd_max before the batch: what was sent before */
    bool tx_blocked;        /* the device was full: wait for POLLOUT */
    uint32_t stopped_peers; /* peers we sent STOP and owe a GO */

    /* adaptive wait */
    unsigned ncores;
    uint64_t load_sampled_ns;
    uint64_t run_delay_ns; /* this thread's run-queue delay at load_sampled_ns */
    uint64_t stats_sampled_ns;
    bool oversubscribed;

    struct pme_counters *ctr;
    struct pme_counters_shm *shm;
    struct pme_shm_state *shm_state;
    uint64_t version_nak_ns;
    char err[256];
};

/* ep.c */
#define PME_PEER_CHUNK 256u
static inline struct pme_peer *pme_peer_get(struct pme_ep *ep, pme_peer_t idx)
{
    if (idx >= ep->npeers)
        return NULL;
    return &ep->chunks[idx / PME_PEER_CHUNK][idx % PME_PEER_CHUNK];
}
int pme_peer_lookup(struct pme_ep *ep, const uint8_t mac[6], uint16_t ep_id, bool create,
                    pme_peer_t *idx);
void pme_ep_set_error(struct pme_ep *ep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pme_idxvec_push(struct pme_idxvec *v, uint32_t x);
int getrandom_u32(uint32_t *out);
void pme_peer_mark_dirty(struct pme_ep *ep, pme_peer_t idx);

/* tx.c: the sending half of Go-Back-N */
struct pme_txmsg *pme_txmsg_new(struct pme_ep *ep, int type, size_t data_bytes);
void pme_txmsg_free(struct pme_ep *ep, struct pme_txmsg *m);
void pme_tx_pump(struct pme_ep *ep, pme_peer_t idx);
void pme_tx_ack(struct pme_ep *ep, pme_peer_t idx, uint32_t ack);
void pme_tx_rewind(struct pme_ep *ep, struct pme_peer *p, uint32_t seq);
void pme_tx_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m);
void pme_tx_flush(struct pme_ep *ep);
int pme_tx_ctrl(struct pme_ep *ep, pme_peer_t idx, int type, const void *sub,
                size_t sublen);
void pme_tx_hello(struct pme_ep *ep, pme_peer_t idx);
void pme_tx_fill_rx_state(struct pme_ep *ep, struct pme_peer *p, struct pme_wire_hdr *wh);

/* rx.c */
void pme_rx_frame(void *arg, const uint8_t *frame, size_t len);
void pme_rx_after_batch(struct pme_ep *ep);
void pme_rx_send_go_if_room(struct pme_ep *ep);

/* rndv.c; pme_rndv_offer returns PME_RX_NO_BUFFER when the pool is full */
#define PME_RX_NO_BUFFER 1
int pme_rndv_offer(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rts *rts,
                   const uint8_t *hdr, size_t hdr_len);
void pme_rndv_on_cts(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_cts *cts,
                     uint16_t aux);
void pme_rndv_on_rdata(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rdata *rd,
                       const uint8_t *payload, size_t len);
void pme_sendreq_complete(struct pme_ep *ep, struct pme_sendreq *req, int status);
void pme_rndv_fail_peer(struct pme_ep *ep, pme_peer_t idx, int status);
void pme_rndv_free_all(struct pme_ep *ep);

/* pool.c: the endpoint's receive and send budgets */
struct pme_rxbuf *pme_rxbuf_alloc(struct pme_ep *ep, pme_peer_t idx, uint32_t len,
                                  bool on_credit);
void pme_rxbuf_free(struct pme_ep *ep, struct pme_rxbuf *b);
uint32_t pme_pool_grant(struct pme_ep *ep);
void pme_pool_release_peer(struct pme_ep *ep, struct pme_peer *p);

/* events.c */
struct pme_event *pme_evq_push(struct pme_ep *ep, int type, int status, pme_peer_t peer);
void pme_evq_free(struct pme_evq *q);

/* timers.c */
void pme_timer_arm_rto(struct pme_ep *ep, pme_peer_t idx);
void pme_timer_arm_ack(struct pme_ep *ep, pme_peer_t idx);
void pme_timer_rearm(struct pme_ep *ep, pme_peer_t idx);
uint32_t pme_rto_base(const struct pme_ep *ep, const struct pme_peer *p);
void pme_rtt_sample(struct pme_ep *ep, struct pme_peer *p, uint64_t rtt_ns);
void pme_timers_run(struct pme_ep *ep);
void pme_timers_confirm_suspects(struct pme_ep *ep);
void pme_peer_fail(struct pme_ep *ep, pme_peer_t idx, int status);
void pme_peer_revive(struct pme_ep *ep, pme_peer_t idx);

/* iovcur.c */
void pme_iov_cursor_init(struct pme_iov_cursor *c, const struct iovec *iov, int iovcnt);
void pme_iov_cursor_seek(struct pme_iov_cursor *c, uint64_t pos);
/* Describe len bytes from the cursor in out (at most max entries) and advance; returns
 * entries used, or -1 (cursor unchanged) if more than max are needed. */
int pme_iov_cursor_slice(struct pme_iov_cursor *c, size_t len, struct iovec *out, int max);
/* Copy len bytes from src into the iovec at the cursor; returns bytes copied. */
size_t pme_iov_cursor_copy_in(struct pme_iov_cursor *c, const uint8_t *src, size_t len);
uint64_t pme_iov_total(const struct iovec *iov, int iovcnt);

/* wait.c */
void pme_wait_init(struct pme_ep *ep);

/* counters.c */
int pme_counters_open(struct pme_ep *ep);
void pme_counters_publish(struct pme_ep *ep);
void pme_counters_sync(struct pme_ep *ep);
void pme_counters_close(struct pme_ep *ep);
struct pme_peer_counters *pme_counters_peer_slot(struct pme_ep *ep, pme_peer_t idx);

static inline bool pme_peer_has_inflight(const struct pme_peer *p)
{
    return p->snd_nxt != p->snd_una;
}

#endif
