// SPDX-License-Identifier: BSD-3-Clause
/*
 * link_hello.c - the handshake as it is received: HELLO and HELLO_ACK on every rail,
 * and which incarnation of a peer to believe.
 *
 * Each direction of a connection opens with a HELLO (the sender's first sequence number,
 * frame size, rails and their NICs) answered by a HELLO_ACK (the receiver's initial
 * credit). A peer is a process: when it restarts, a new incarnation says HELLO and what
 * we had with the old one is gone. But a HELLO proves nothing by itself: one recorded in
 * an earlier run under the same secret, or of an incarnation since replaced, is as
 * authentic as the day it was sent. Believed, it would fail a live connection, clear its
 * replay windows and let the old run's frames (or this run's, recorded) be delivered.
 *
 * So an incarnation we have not met is believed only once it answered a challenge of
 * ours (pme_wire.h): until then its HELLO waits (hello_wait.c) and changes nothing; we
 * answer it with a HELLO of ours carrying our challenge and echoing its own. Whoever
 * echoes our challenge in an authenticated HELLO or HELLO_ACK is alive now, and is
 * adopted: the incarnation it replaces is failed and never taken back. Until then its
 * other frames are dropped (link_rx.c admits only HELLOs of incarnations not believed),
 * and nothing it says, its NICs included, is taken.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "counters_layout.h"
#include "link.h"

/* A peer must take frames big enough for a header and some payload (fragment sizes are
 * computed from it), and name at least the NIC of rail 0. */
static bool hello_ok(const struct pme_link_in *r, const struct pme_wire_hello *h)
{
    return r->len >= sizeof(*h) + 6 && ntohs(h->max_frame) >= PME_WIRE_MIN_FRAME;
}

/* What a HELLO or HELLO_ACK says of the peer's NICs: how many rails it has, and their
 * MACs, from the list the MAC covers (never from the Ethernet source, which anybody
 * may write on a frame recorded elsewhere). */
static void learn_rails(struct pme_ep *ep, struct pme_link_in *r, const struct pme_wire_hello *h)
{
    unsigned n = h->nrails ? h->nrails : 1;
    unsigned listed = (unsigned)((r->len - sizeof(*h)) / 6);
    r->p->peer_rails = (uint8_t)(n < PME_WIRE_MAX_RAILS ? n : PME_WIRE_MAX_RAILS);
    if (listed > n)
        listed = n;
    pme_peer_set_macs(ep, r->idx, (const uint8_t (*)[6])(const void *)(h + 1), listed);
}

/* Rails both ends have: ours (the peer's allocation) and as many as it said. */
static unsigned usable_rails(const struct pme_peer *p)
{
    unsigned n = p->peer_rails ? p->peer_rails : 1;
    return n < p->nrails ? n : p->nrails;
}

/* Open our direction on every rail beyond the first that both ends have and whose MAC
 * we know (rail 0 opened: the peer knows us). */
static void open_rails(struct pme_ep *ep, struct pme_link_in *r)
{
    static const uint8_t no_mac[6];
    struct pme_peer *p = r->p;
    for (unsigned k = 1; k < usable_rails(p); k++)
        if (p->rail[k].state == RAIL_NEW && memcmp(p->rail[k].mac, no_mac, 6))
            pme_link_hello(ep, r->idx, k);
}

/* Start receiving from the incarnation we believe in, on rail 0, from first. */
static void open_rx(struct pme_ep *ep, struct pme_link_in *r, const struct pme_wire_hello *h,
                    uint32_t first)
{
    struct pme_peer *p = r->p;
    struct pme_rail *r0 = &p->rail[0];
    p->rx_epoch++;
    p->rx_order = 1;
    r0->rcv_nxt = first;
    r0->rx_open = p->rx_open = true;
    r0->lose_sent = r0->we_stopped = false;
    pme_held_clear(&r0->held, ep->cfg.window, &ep->held_room);
    p->rx_grant = ep->up->peer_open(ep, r->idx);
    p->credit_granted = p->credit_consumed + p->rx_grant;
    uint16_t mf = ntohs(h->max_frame);
    if (mf < p->max_frame)
        p->max_frame = mf;
    learn_rails(ep, r, h);
}

/* Answer a HELLO on its rail, echoing its challenge. */
static void answer_hello(struct pme_ep *ep, pme_peer_t idx, unsigned k, uint64_t chal)
{
    uint8_t body[sizeof(struct pme_wire_hello) + 6 * PME_WIRE_MAX_RAILS];
    size_t len = pme_link_hello_body(ep, body, 0, 0, chal);
    pme_link_ctrl_rail(ep, idx, k, PME_T_HELLO_ACK, body, len);
}

/* ---- an incarnation we have not met ---- */

/* Ask the HELLO's sender to prove itself: a HELLO of ours, with our challenge and the
 * echo of its own. While our direction is open to (or failed with) another incarnation,
 * that direction is left alone: the HELLO announces where one toward the new
 * incarnation will start, should it answer. */
static void challenge(struct pme_ep *ep, pme_peer_t idx, struct pme_hello_wait *w)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_NEW || p->tx_state == TX_HELLO) {
        pme_link_hello(ep, idx, 0);
        return;
    }
    if (!w->tx_first_set) {
        w->tx_first = pme_link_isn(ep, 0);
        w->tx_first_set = true;
    }
    uint8_t body[sizeof(struct pme_wire_hello) + 6 * PME_WIRE_MAX_RAILS];
    size_t len = pme_link_hello_body(ep, body, w->tx_first, pme_link_chal(ep, idx), w->echo);
    pme_link_ctrl_rail(ep, idx, 0, PME_T_HELLO, body, len);
}

/* A HELLO of an incarnation that has not answered our challenge: remember it, and
 * challenge it (once a retransmission timeout: its sender repeats its HELLO until it is
 * answered, and a replayer must not make us send a frame per frame). Nothing else
 * changes; the counter tells how often it happened. */
static void wait_for_proof(struct pme_ep *ep, struct pme_link_in *r, const struct pme_wire_hello *h)
{
    uint32_t inc = ntohl(r->wh->incarnation);
    struct pme_hello_wait *w = pme_hello_wait_find(ep, r->idx, true);
    ep->ctr->hello_challenged++;
    if (!w)
        return; /* out of memory: its HELLO comes again */
    bool again = w->inc == inc && w->sent_ns && ep->now - w->sent_ns < 1000ull * ep->cfg.rto_us;
    w->inc = inc;
    w->echo = be64toh(h->chal);
    w->first_seq = ntohl(h->first_seq);
    /* Our challenge must reach it: to the NIC its HELLO lists (authenticated) when we
     * know of none for it yet; what we believe later replaces it. */
    static const uint8_t no_mac[6];
    struct pme_rail *r0 = &r->p->rail[0];
    if (!r->p->routed && !memcmp(r0->mac, no_mac, 6)) {
        memcpy(r0->mac, h + 1, 6);
        r0->dev = 0;
    }
    if (again)
        return;
    w->sent_ns = ep->now;
    challenge(ep, r->idx, w);
}

/* Believe incarnation inc of the peer from now on: what we had with the one it replaces
 * is gone (failed: its process was replaced), and that one is never taken back. Our
 * direction toward it starts where the HELLO of ours it answered said. Returns what
 * waited of its own HELLO, if anything (*waited). */
static void adopt(struct pme_ep *ep, struct pme_link_in *r, struct pme_hello_wait *waited)
{
    struct pme_peer *p = r->p;
    uint32_t inc = ntohl(r->wh->incarnation);
    struct pme_hello_wait *w = pme_hello_wait_find(ep, r->idx, false);
    bool have_first = p->tx_state == TX_HELLO || (w && w->tx_first_set);
    uint32_t first = p->tx_state == TX_HELLO ? p->rail[0].snd_una : w ? w->tx_first : 0;
    *waited = w && w->inc == inc ? *w : (struct pme_hello_wait){0};
    pme_hello_wait_drop(ep, r->idx);
    if (p->known) {
        p->retired_incarnation = p->peer_incarnation;
        if (p->tx_state != TX_FAILED && (p->rx_open || p->tx_state != TX_NEW))
            pme_peer_fail(ep, r->idx, PME_ERR_PEER_DEAD);
    }
    if (p->tx_state == TX_FAILED) {
        pme_peer_revive(ep, r->idx); /* a restarted process: a fresh start */
        if (have_first)
            pme_link_hello_sent(ep, r->idx, first);
    }
    p->peer_incarnation = inc;
    p->known = true;
    p->chal_gen++; /* echoes of our challenges so far answer nothing any more */
    for (unsigned k = 0; k < p->nrails; k++)
        memset(&p->rail[k].replay, 0, sizeof(p->rail[k].replay));
    memset(&p->kreplay, 0, sizeof(p->kreplay));
    if (ep->keys.auth == PME_AUTH_MAC)
        pme_replay_mark(&r->r->replay, be64toh(r->wh->nonce));
    r->known = true;
}

/* ---- an incarnation we believe in ---- */

static void on_hello_believed(struct pme_ep *ep, struct pme_link_in *r,
                              const struct pme_wire_hello *h)
{
    struct pme_peer *p = r->p;
    if (p->tx_state == TX_FAILED)
        return; /* we declared it failed: it stays so until a new incarnation comes */
    if (!p->rx_open)
        open_rx(ep, r, h, ntohl(h->first_seq));
    /* else a repeated HELLO: our HELLO_ACK was lost */
    answer_hello(ep, r->idx, 0, be64toh(h->chal));
    /* Open our direction too: answers (CTS, replies) need not wait a round trip. */
    if (p->tx_state == TX_NEW)
        pme_link_hello(ep, r->idx, 0);
}

static void on_hello_ack_believed(struct pme_ep *ep, struct pme_link_in *r,
                                  const struct pme_wire_hello *h)
{
    struct pme_peer *p = r->p;
    if (p->tx_state != TX_HELLO || p->rail[0].state != RAIL_HELLO)
        return;
    uint16_t mf = ntohs(h->max_frame);
    if (mf < p->max_frame)
        p->max_frame = mf;
    learn_rails(ep, r, h);
    p->credit_limit = ntohl(r->wh->credit);
    p->credit_used = 0;
    p->credit_grant = p->credit_limit;
    p->tx_state = TX_OPEN;
    r->r->state = RAIL_OPEN;
    r->r->rto_us = ep->cfg.rto_us;
    r->r->rto_deadline = 0;
    r->r->owed_since_ns = 0;
    ep->up->credit_known(ep, r->idx);
    open_rails(ep, r);
    pme_timer_rearm(ep, r->idx);
    pme_peer_mark_dirty(ep, r->idx);
}

/* A HELLO or HELLO_ACK on a rail beyond the first: that rail of a connection rail 0
 * opened with the incarnation we believe in. */
static void on_rail_hello(struct pme_ep *ep, struct pme_link_in *r, const struct pme_wire_hello *h)
{
    struct pme_peer *p = r->p;
    if (!r->known || !p->rx_open || r->k >= usable_rails(p)) {
        ep->ctr->drop_stale++;
        return;
    }
    if (r->wh->type == PME_T_HELLO) {
        if (!r->r->rx_open) {
            r->r->rcv_nxt = ntohl(h->first_seq);
            r->r->rx_open = true;
            r->r->lose_sent = r->r->we_stopped = false;
            pme_held_clear(&r->r->held, ep->cfg.window, &ep->held_room);
        }
        answer_hello(ep, r->idx, r->k, be64toh(h->chal));
        if (p->tx_state == TX_OPEN && r->r->state == RAIL_NEW)
            pme_link_hello(ep, r->idx, r->k);
        return;
    }
    if (r->r->state != RAIL_HELLO)
        return;
    r->r->state = RAIL_OPEN;
    r->r->rto_us = ep->cfg.rto_us;
    r->r->rto_deadline = 0;
    r->r->owed_since_ns = 0;
    pme_timer_rearm(ep, r->idx);
    pme_peer_mark_dirty(ep, r->idx); /* it can take pieces of streams now */
}

void pme_link_on_hello(struct pme_ep *ep, struct pme_link_in *r)
{
    struct pme_peer *p = r->p;
    const struct pme_wire_hello *h = (const void *)(r->wh + 1);
    if (r->len < sizeof(*h) || !hello_ok(r, h)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    if (r->k) {
        on_rail_hello(ep, r, h);
        return;
    }
    struct pme_hello_wait waited = {0};
    if (!r->known) {
        uint64_t echo = be64toh(h->echo);
        if (ntohl(r->wh->incarnation) == p->retired_incarnation) {
            ep->ctr->drop_stale++; /* replaced once: never again */
            return;
        }
        if (!echo || echo != pme_link_chal(ep, r->idx)) {
            if (r->wh->type == PME_T_HELLO)
                wait_for_proof(ep, r, h);
            else
                ep->ctr->drop_stale++; /* an answer to no challenge of ours */
            return;
        }
        adopt(ep, r, &waited);
    }
    _Static_assert((PME_FEAT_RMA | PME_FEAT_BUNDLE | PME_FEAT_RMA_BUNDLE) <= UINT8_MAX,
                   "pme_peer.takes holds the features in the low byte");
    p->takes = (uint8_t)(ntohl(h->features) &
                         (PME_FEAT_RMA | PME_FEAT_BUNDLE | PME_FEAT_RMA_BUNDLE));
    if (r->wh->type == PME_T_HELLO) {
        on_hello_believed(ep, r, h);
        return;
    }
    /* A HELLO_ACK that proved its sender: its own HELLO, waiting, is answered now. */
    if (waited.inc && p->tx_state != TX_FAILED) {
        open_rx(ep, r, h, waited.first_seq);
        answer_hello(ep, r->idx, 0, waited.echo);
    }
    on_hello_ack_believed(ep, r, h);
}
