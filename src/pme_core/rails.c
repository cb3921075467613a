// SPDX-License-Identifier: BSD-3-Clause
/*
 * rails.c - which rail carries what (the Network Trunking of the PM/Ethernet thesis,
 * ch. 6, with an ordering rule instead of an ordering queue).
 *
 * In-order items (eager messages, rendezvous offers and answers) take one rail, the
 * peer's primary: they are small, and one rail keeps them in order without a
 * reordering buffer at the receiver. The primary is the rail whose NIC is nearest our
 * cores when hwloc knows (ep->near_rail), else the first one open; it changes only
 * while nothing in order is unacknowledged on it, or when it dies (failover.c moves
 * its items and the order numbers they carry keep the receiver from taking one
 * twice). Rendezvous streams are striped: the stream waits on the peer's stripe list
 * and each rail that has sent everything it had carves the next piece, so a faster or
 * less loaded rail takes more, and a rail that stalls holds back only its pieces. Each
 * frame of a piece lands at its offset, whichever rail brought it.
 *
 * A single rail carves pieces too, at most a window of frames each, so that an in-order
 * item waits behind one piece, not behind every stream queued before it. Queued whole,
 * a CTS answering the peer's offer waited for all our own streams to go: both
 * directions of an exchange of large messages then took turns instead of sharing.
 */
#include "link.h"

/* A piece is at least this many frames (fewer items to track), at most the window. */
#define PIECE_MIN_FRAMES 8u

unsigned pme_rails_alive(const struct pme_peer *p)
{
    unsigned n = 0;
    for (unsigned k = 0; k < p->nrails; k++)
        n += p->rail[k].state == RAIL_OPEN;
    return n;
}

/* The rail in-order items should take from now on: the near one once it is open,
 * else the first open, else the first not dropped. */
static unsigned preferred_rail(const struct pme_ep *ep, const struct pme_peer *p)
{
    if (ep->near_rail < p->nrails && p->rail[ep->near_rail].state == RAIL_OPEN)
        return ep->near_rail;
    for (unsigned k = 0; k < p->nrails; k++)
        if (p->rail[k].state == RAIL_OPEN)
            return k;
    for (unsigned k = 0; k < p->nrails; k++)
        if (p->rail[k].state != RAIL_DEAD)
            return k;
    return 0;
}

/* Move the primary to the preferred rail when nothing in order waits on the current
 * one (no item queued there but pieces): the receiver then cannot take a later item
 * before an earlier one. */
void pme_rails_choose_primary(const struct pme_ep *ep, struct pme_peer *p)
{
    unsigned want = preferred_rail(ep, p);
    if (want == p->primary)
        return;
    for (const struct pme_txmsg *m = p->rail[p->primary].q_head; m; m = m->next)
        if (!m->stripe)
            return;
    p->primary = (uint8_t)want;
}

void pme_stripe_add(struct pme_peer *p, struct pme_txmsg *m)
{
    m->next = NULL;
    m->carved = 0;
    m->pieces_out = 0;
    if (p->stripe_tail)
        p->stripe_tail->next = m;
    else
        p->stripe_head = m;
    p->stripe_tail = m;
}

/* A piece for a rail that has sent all it had: the next bytes of the first stripe with
 * some left, an equal share of them per open rail (so that the rails finish together),
 * between PIECE_MIN_FRAMES and a window of frames. */
struct pme_txmsg *pme_stripe_carve(struct pme_ep *ep, struct pme_peer *p, uint32_t frag)
{
    struct pme_txmsg *s = p->stripe_head;
    while (s && s->carved == s->len)
        s = s->next;
    if (!s)
        return NULL;
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_RDATA, 0);
    if (!m)
        return NULL;
    uint64_t left = s->len - s->carved;
    uint64_t frames = (left + frag - 1) / frag;
    unsigned alive = pme_rails_alive(p);
    uint64_t want = (frames + (alive ? alive : 1) - 1) / (alive ? alive : 1);
    if (want < PIECE_MIN_FRAMES)
        want = PIECE_MIN_FRAMES;
    if (want > ep->cfg.window)
        want = ep->cfg.window;
    uint64_t bytes = want * frag;
    if (bytes > left)
        bytes = left;
    m->owner = s->owner;
    m->cur = s->cur;
    m->rndv_id = s->rndv_id;
    m->base = s->carved;
    m->len = bytes;
    m->stripe = s;
    s->carved += bytes;
    s->pieces_out++;
    return m;
}

static void stripe_unlink(struct pme_peer *p, struct pme_txmsg *s)
{
    struct pme_txmsg **pp = &p->stripe_head, *prev = NULL;
    while (*pp && *pp != s) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = s->next;
    if (p->stripe_tail == s)
        p->stripe_tail = prev;
}

void pme_stripe_piece_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *piece,
                           int status)
{
    struct pme_txmsg *s = piece->stripe;
    pme_txmsg_free(ep, piece);
    if (!s || --s->pieces_out || s->carved != s->len)
        return;
    stripe_unlink(pme_peer_get(ep, idx), s);
    ep->up->item_done(ep, idx, s, status);
    pme_txmsg_free(ep, s);
}

void pme_stripes_purge(struct pme_ep *ep, pme_peer_t idx, int status)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_txmsg *s = p->stripe_head;
    p->stripe_head = p->stripe_tail = NULL;
    while (s) {
        struct pme_txmsg *next = s->next;
        ep->up->item_done(ep, idx, s, status);
        pme_txmsg_free(ep, s);
        s = next;
    }
}
