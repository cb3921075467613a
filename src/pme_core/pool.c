// SPDX-License-Identifier: BSD-3-Clause
/*
 * pool.c - the endpoint's receive budget and the eager credit drawn from it.
 *
 * The receive pool is one budget per endpoint (rx_pool_bytes). Each peer that opens a
 * connection is granted credit_bytes of it, reserved for that peer's eager messages, as
 * far as the unreserved part allows: the per-connection tokens of the GigE-mesh MPI. A
 * message that arrives on credit moves its cost from the peer's reservation to "used";
 * releasing it moves the cost back to the reservation and raises the peer's credit limit,
 * which travels back piggybacked or in a CREDIT frame. Rendezvous offers (their user
 * headers) take unreserved space; when there is none the receiver answers STOP, and GO
 * once a release makes room (Appendix B of the PM/Ethernet thesis).
 */
#include <stdlib.h>

#include "msg.h"

static size_t rx_free(const struct pme_ep *ep)
{
    size_t taken = ep->rx_used + ep->rx_reserved;
    return taken < ep->cfg.rx_pool_bytes ? ep->cfg.rx_pool_bytes - taken : 0;
}

/* Reserve a new peer's eager credit: the configured amount, or its share of the pool
 * when the caller said how many peers to expect, but never the last quarter of the
 * pool, which stays free for rendezvous offers and for peers that get no credit (they
 * send everything by rendezvous: slower, never stuck). */
uint32_t pme_pool_grant(struct pme_ep *ep)
{
    size_t want = ep->cfg.credit_bytes;
    size_t reserve = ep->cfg.rx_pool_bytes / 4;
    if (ep->cfg.expected_peers) {
        size_t share = (ep->cfg.rx_pool_bytes - reserve) / ep->cfg.expected_peers;
        if (share < want)
            want = share;
    }
    size_t room = rx_free(ep);
    room = room > reserve ? room - reserve : 0;
    size_t g = want < room ? want : room;
    g &= ~(size_t)(PME_WIRE_POOL_UNIT - 1);
    ep->rx_reserved += g;
    return (uint32_t)g;
}

/* Give back what a peer still holds reserved (it failed or restarted). */
void pme_pool_release_peer(struct pme_ep *ep, struct pme_peer *p)
{
    int64_t held = pme_credit_room(p->credit_granted, p->credit_consumed);
    if (held > 0)
        ep->rx_reserved -= (size_t)held;
    p->credit_granted = p->credit_consumed;
}

struct pme_rxbuf *pme_rxbuf_alloc(struct pme_ep *ep, pme_peer_t idx, uint32_t len,
                                  bool on_credit)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint32_t cost = pme_wire_pool_cost(len);
    if (on_credit) {
        /* A sender that keeps to its credit always fits; one that does not is
         * treated like an offer and may only use free space. */
        if (pme_credit_room(p->credit_granted, p->credit_consumed) < cost)
            on_credit = false;
    }
    if (!on_credit && rx_free(ep) < cost)
        return NULL;
    struct pme_rxbuf *b = pme_cache_alloc(&ep->cache, sizeof(*b) + len);
    if (!b)
        return NULL;
    b->peer = idx;
    b->epoch = p->rx_epoch;
    b->cost = cost;
    b->len = len;
    b->hdr_len = 0;
    b->on_credit = on_credit;
    b->bundle = 0;
    b->refs = 1;
    if (on_credit) {
        p->credit_consumed += cost;
        ep->rx_reserved -= cost;
    }
    ep->rx_used += cost;
    return b;
}

void pme_rxbuf_release(struct pme_ep *ep, struct pme_rxbuf *b)
{
    if (--b->refs == 0)
        pme_rxbuf_free(ep, b);
}

void pme_rxbuf_free(struct pme_ep *ep, struct pme_rxbuf *b)
{
    ep->rx_used -= b->cost;
    struct pme_peer *p = pme_peer_get(ep, b->peer);
    if (b->on_credit && p && p->rx_open && b->epoch == p->rx_epoch &&
        p->tx_state != TX_FAILED) {
        /* The peer's reservation refills, and so does its credit limit. */
        p->credit_granted += b->cost;
        ep->rx_reserved += b->cost;
        pme_peer_mark_dirty(ep, b->peer);
    }
    pme_cache_free(&ep->cache, b);
    pme_link_send_go_if_room(ep);
}
