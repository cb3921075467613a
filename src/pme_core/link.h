/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.h - layer 3: peers and the reliable channel to each (Go-Back-N of PM/Ethernet's
 * Appendix B, with ACK, LOSE, STOP and GO; eager credit; retransmission and liveness).
 *
 * The link carries items (struct pme_txmsg) in order and exactly once. It knows how to
 * frame each item type but not what messages mean: in-sequence frames go up through
 * the upcalls the message layer registered, and so do finished items and peers that
 * open, fail or restart.
 */
#ifndef PME_LINK_H
#define PME_LINK_H

#include <stdio.h>
#include <string.h>

#include "pme_internal.h"

/* What layer 4 (messages) does for the link. */
struct pme_upcalls {
    /* An in-sequence frame of DATA, RTS, CTS or RDATA from peer idx (sub: the bytes
     * after the PME header, len of them). 0: taken; PME_RX_NO_BUFFER: no room now (the
     * link answers STOP and the peer sends it again after GO). */
    int (*deliver)(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                   const uint8_t *sub, size_t len, uint16_t flags);
    /* Every frame of m was acknowledged (PME_OK), or the peer failed (its status); the
     * link frees m afterwards. */
    void (*item_done)(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m, int status);
    /* The peer opened its direction toward us: reserve its eager credit; returns it. */
    uint32_t (*peer_open)(struct pme_ep *ep, pme_peer_t idx);
    /* We learnt the credit the peer grants us (its HELLO_ACK): items queued meanwhile
     * that can never fit it must change form. */
    void (*credit_known)(struct pme_ep *ep, pme_peer_t idx);
    /* The peer failed (or restarted, or closed): end what was in flight with it with
     * status, release what it held, and tell the caller when `report`. */
    void (*peer_failed)(struct pme_ep *ep, pme_peer_t idx, int status, bool report);
};
#define PME_RX_NO_BUFFER 1

/* No retransmission waits more than a second, however often it was backed off. */
#define PME_RTO_CEILING_US 1000000u

/* peers.c: the peer table, keyed by (node, endpoint id), and address strings */
/* Whether the peer can be reached (with a route file: a route over one of our
 * interfaces, within the hop limit); else PME_ERR_UNREACHABLE and the endpoint's error
 * says why. */
int pme_peer_check_path(struct pme_ep *ep, const struct pme_peer *p);
int pme_peer_lookup(struct pme_ep *ep, uint32_t node, uint16_t ep_id, bool create,
                    pme_peer_t *idx);
void pme_peer_mark_dirty(struct pme_ep *ep, pme_peer_t idx);
/* The peer's NICs, one MAC per rail (its address or its HELLO said), unless a route
 * file gives the way. */
void pme_peer_set_macs(struct pme_ep *ep, pme_peer_t idx, const uint8_t (*macs)[6],
                       unsigned n);
/* "pme<version>:<node>/<endpoint>@<mac>[,<mac>...]": one MAC per rail */
#define PME_ADDR_MACS PME_MAX_DEVS
int pme_addr_format(const struct pme_wire_self *self, const uint8_t (*macs)[6], unsigned n,
                    char *buf, size_t len);
int pme_addr_parse(const char *addr, unsigned *version, uint32_t *node, uint16_t *ep_id,
                   uint8_t (*macs)[6], unsigned *nmacs);
void pme_peers_free(struct pme_ep *ep);

/* rails.c: which rail takes what, and the stripes of rendezvous streams (below sending) */
/* Move in-order items to the preferred rail when nothing in order waits on the
 * current primary. */
void pme_rails_choose_primary(const struct pme_ep *ep, struct pme_peer *p);
/* Rails of the peer we send on (open, not dropped). */
unsigned pme_rails_alive(const struct pme_peer *p);
/* A rendezvous stream waits on the peer's stripe list, over one rail or several. */
void pme_stripe_add(struct pme_peer *p, struct pme_txmsg *m);
/* The next piece of the first stripe with bytes left, for a rail with nothing to send;
 * NULL when none. */
struct pme_txmsg *pme_stripe_carve(struct pme_ep *ep, struct pme_peer *p, uint32_t frag);
/* A piece is acknowledged (or given up: PME_ERR_*): its stripe completes with the last. */
void pme_stripe_piece_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *piece,
                           int status);
/* The peer failed: every stripe is done with status. */
void pme_stripes_purge(struct pme_ep *ep, pme_peer_t idx, int status);

/* Queue items live in the endpoint's cache (link and message layers make them). */
static inline struct pme_txmsg *pme_txmsg_new(struct pme_ep *ep, int type, size_t data_bytes)
{
    struct pme_txmsg *m = pme_cache_alloc(&ep->cache, sizeof(*m) + data_bytes);
    if (m) {
        memset(m, 0, sizeof(*m));
        m->type = (uint8_t)type;
    }
    return m;
}

static inline void pme_txmsg_free(struct pme_ep *ep, struct pme_txmsg *m)
{
    pme_cache_free(&ep->cache, m);
}

/* link_tx.c: the sending half */
void pme_link_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m);
/* Append m to rail k's queue as it is (a moved item keeps its order number). */
void pme_rail_enqueue(struct pme_peer *p, unsigned k, struct pme_txmsg *m);
/* The peer's queue of in-order items (its primary rail's) and its tail, for the
 * message layer to change the form of items not yet started. */
struct pme_txmsg **pme_link_ordered_queue(struct pme_ep *ep, pme_peer_t idx,
                                          struct pme_txmsg ***tail, struct pme_txmsg ***cur);
void pme_link_pump(struct pme_ep *ep, pme_peer_t idx);
/* Bytes of hdr||data one DATA frame to the peer carries. */
uint32_t pme_link_data_room(const struct pme_peer *p);
void pme_link_flush(struct pme_ep *ep);
void pme_link_ack(struct pme_ep *ep, pme_peer_t idx, unsigned k, uint32_t ack);
void pme_link_rewind(struct pme_rail *r, uint32_t seq);
/* LOSE named frames [first, end) of rail k: resend those alone, before anything new. */
void pme_link_resend(struct pme_ep *ep, pme_peer_t idx, unsigned k, uint32_t first,
                     uint32_t end);
/* Send the frames rail k has to resend alone, now (if its device has room). */
void pme_link_pump_resends(struct pme_ep *ep, pme_peer_t idx, unsigned k);
void pme_link_resume(struct pme_ep *ep);
void pme_link_purge(struct pme_ep *ep, pme_peer_t idx, int status);

/* A frame of a peer that the link admitted (link_rx.c), as its handlers see it. */
struct pme_link_in {
    const uint8_t *frame;
    const struct pme_wire_hdr *wh;
    size_t len;             /* bytes after the PME header */
    uint16_t flags;
    pme_peer_t idx;
    struct pme_peer *p;
    uint8_t dev;            /* the device it came in by */
    uint8_t k;              /* the rail it names (hdr.rail) */
    bool known;             /* it is of the incarnation we believe in (link_hello.c) */
    struct pme_rail *r;     /* that rail of the peer */
};

/* hello_wait.c: what the handshake remembers beside the peers (below the rest of it) */
/* The HELLO of an incarnation of peer idx that has not answered our challenge yet, and
 * what our challenge to it said. */
struct pme_hello_wait {
    pme_peer_t idx;
    uint32_t inc;           /* the incarnation whose HELLO waits (0: none) */
    uint32_t first_seq;     /* that HELLO's */
    uint64_t echo;          /* its chal: what we echo, and echo again once we believe */
    uint32_t tx_first;      /* where our direction toward it will start, as our challenge
                             * announced while our direction was another incarnation's */
    bool tx_first_set;
    uint64_t sent_ns;       /* when we last challenged */
};
/* The entry of peer idx; with create, a new one (NULL: out of memory). The pointer is
 * good until the next call. */
struct pme_hello_wait *pme_hello_wait_find(struct pme_ep *ep, pme_peer_t idx, bool create);
void pme_hello_wait_drop(struct pme_ep *ep, pme_peer_t idx);
void pme_hello_wait_free(struct pme_ep *ep);
/* Our challenge to peer idx: never 0, new for each of its incarnations we adopt, and
 * unlike any of another endpoint's. */
uint64_t pme_link_chal(struct pme_ep *ep, pme_peer_t idx);

/* link_ctrl.c: control frames, and sending the handshake */
/* A control frame on the peer's primary rail, or on rail k. */
int pme_link_ctrl(struct pme_ep *ep, pme_peer_t idx, int type, const void *sub,
                  size_t sublen);
int pme_link_ctrl_rail(struct pme_ep *ep, pme_peer_t idx, unsigned k, int type,
                       const void *sub, size_t sublen);
/* Open our direction on rail k (rail 0: toward the peer at all), or ask again. */
void pme_link_hello(struct pme_ep *ep, pme_peer_t idx, unsigned k);
/* Our direction on rail 0 starts at first: a HELLO announcing it is out (a challenge),
 * and an answer to it opens the direction. */
void pme_link_hello_sent(struct pme_ep *ep, pme_peer_t idx, uint32_t first);
/* The HELLO sub-header with our rails' MACs after it; returns its length. */
size_t pme_link_hello_body(struct pme_ep *ep, uint8_t *buf, uint32_t first_seq, uint64_t chal,
                           uint64_t echo);
/* A fresh first sequence number for one of our directions on rail k. */
uint32_t pme_link_isn(struct pme_ep *ep, unsigned k);
void pme_link_fill_rx_state(struct pme_ep *ep, struct pme_peer *p, unsigned k,
                            struct pme_wire_hdr *wh);
void pme_link_send_go_if_room(struct pme_ep *ep);
void pme_link_bye_all(struct pme_ep *ep);
uint64_t pme_link_next_nonce(struct pme_ep *ep);

/* link_hello.c: the handshake received: HELLO and HELLO_ACK on every rail, and which
 * incarnation of a peer to believe */
void pme_link_on_hello(struct pme_ep *ep, struct pme_link_in *r);

/* link_rx.c: the receiving half (pme_link_rx is the devices' receive callback) */
void pme_link_rx(void *rx_ctx, const uint8_t *frame, size_t len); /* &ep->rx_ctx[dev] */
void pme_link_after_batch(struct pme_ep *ep);
/* link_tx.c: small messages gathering into a bundle (PME_COALESCE_AFTER). Whether a new
 * small message to p would have to wait (so that it should make room for others), and
 * sending now whatever gathers, before a sleep or when the caller or the helper asks. */
bool pme_link_small_waits(const struct pme_ep *ep, const struct pme_peer *p);
void pme_link_send_gathered(struct pme_ep *ep);

/* Something is owed by the peer on rail r: frames to acknowledge, its handshake, GO. */
static inline bool pme_rail_owes(const struct pme_rail *r)
{
    return r->state == RAIL_HELLO || pme_rail_has_inflight(r) || r->stopped;
}

/* Something is owed by the peer: on a rail, or credit, or the answer to a liveness
 * probe. */
static inline bool pme_peer_owes(const struct pme_peer *p)
{
    if (p->tx_state == TX_HELLO || p->credit_stalled || p->ping_out)
        return true;
    for (unsigned k = 0; k < p->nrails; k++)
        if (p->rail[k].state != RAIL_DEAD && pme_rail_owes(&p->rail[k]))
            return true;
    return false;
}

/* rto.c: arming timers (below sending) */
void pme_timer_arm_rto(struct pme_ep *ep, pme_peer_t idx, unsigned k);
void pme_timer_arm_peer(struct pme_ep *ep, pme_peer_t idx, uint64_t deadline);
void pme_timer_arm_ack(struct pme_ep *ep, pme_peer_t idx, unsigned k);
void pme_timer_rearm(struct pme_ep *ep, pme_peer_t idx);
uint32_t pme_rto_base(const struct pme_ep *ep, const struct pme_rail *r);
void pme_rtt_sample(struct pme_rail *r, uint64_t rtt_ns);
uint64_t pme_keepalive_ns(const struct pme_ep *ep);
/* The earliest deadline the peer has (0: none). */
uint64_t pme_peer_next_deadline(const struct pme_peer *p);

/* failover.c: a rail that died: dropped with a warning, its items moved to the others */
/* Whether rail k's interface has its link (the loop device: not cut); state says how it
 * is when not. */
bool pme_rail_link_up(struct pme_ep *ep, const struct pme_rail *r, char *state, size_t len);
/* Drop rail k of the peer (it must not be its last alive): why says what happened. */
void pme_rail_drop(struct pme_ep *ep, pme_peer_t idx, unsigned k, const char *why);

/* timers.c: firing them (above sending): retransmission, keepalives, liveness, failure */
void pme_timers_run(struct pme_ep *ep);
void pme_timers_ack_before_sleep(struct pme_ep *ep);
void pme_timers_confirm_suspects(struct pme_ep *ep);
void pme_peer_fail(struct pme_ep *ep, pme_peer_t idx, int status);
void pme_peer_close(struct pme_ep *ep, pme_peer_t idx, int status, bool report);
void pme_peer_revive(struct pme_ep *ep, pme_peer_t idx);
void pme_link_dump(struct pme_ep *ep, FILE *f);

#endif
