// SPDX-License-Identifier: BSD-3-Clause
/*
 * failover.c - a rail that died. A rail whose interface went down while the peer owed
 * us an answer on it for PME_LINK_DOWN_MS, or that went unanswered for
 * PME_RAIL_TIMEOUT_MS while the peer answered on another, is dropped: one warning per
 * endpoint and rail says so on stderr, and what was queued on it goes to the rails that
 * remain. What the peer acknowledged stays done; the rest goes again from its first
 * unacknowledged frame (a piece of a stream) or whole (an item that must arrive in
 * order, whose order number keeps the receiver from taking it twice). Only the last
 * rail's death fails the peer (timers.c). A dropped rail stays dropped until the peer
 * comes back as a new incarnation; frames that still come in on it are taken.
 */
#include <stdio.h>

#include "dev_eth.h"
#include "link.h"

bool pme_rail_link_up(struct pme_ep *ep, const struct pme_rail *r, char *state, size_t len)
{
    struct pme_dev *d = ep->devs[r->dev];
    if (d->ops == &pme_dev_loop_ops) {
        bool up = !pme_dev_loop_is_cut(d);
        snprintf(state, len, "%s", up ? "up" : "cut");
        return up;
    }
    if (r->dev >= ep->nifname) {
        snprintf(state, len, "up");
        return true;
    }
    return pme_eth_link_up(ep->ifname[r->dev], state, len);
}

/* The interface's name for messages ("rail 1" when it has none: the loop device). */
static const char *rail_name(const struct pme_ep *ep, unsigned dev, char *buf, size_t len)
{
    if (dev < ep->nifname)
        return ep->ifname[dev];
    snprintf(buf, len, "device %u", dev);
    return buf;
}

/* Give a piece back what its rail did not get acknowledged: it goes again, from its
 * first unacknowledged frame. Returns false when nothing is left of it. */
static bool trim_piece(const struct pme_rail *r, struct pme_txmsg *m)
{
    if (!m->started)
        return true;
    uint32_t done = pme_seq_before(r->snd_una, m->first_seq) ? 0 : r->snd_una - m->first_seq;
    if (done >= m->nframes)
        return false;
    uint64_t bytes = (uint64_t)done * m->frag;
    m->base += bytes;
    m->len -= bytes;
    m->started = 0;
    return true;
}

/* The next rail alive after `from` (round robin), for pieces. */
static unsigned next_alive(const struct pme_peer *p, unsigned from)
{
    for (unsigned i = 1; i <= p->nrails; i++) {
        unsigned k = (from + i) % p->nrails;
        if (p->rail[k].state == RAIL_OPEN)
            return k;
    }
    return p->primary;
}

/* Move everything queued on rail k to the rails that remain: items in order to the
 * (new) primary, behind anything it has (only pieces: in-order items live on one rail
 * at a time), pieces spread over the others. */
static void move_items(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p, unsigned k)
{
    struct pme_rail *r = &p->rail[k];
    struct pme_txmsg *m = r->q_head;
    r->q_head = r->q_tail = r->cur = NULL;
    unsigned spread = k;
    while (m) {
        struct pme_txmsg *next = m->next;
        if (m->stripe) {
            if (trim_piece(r, m)) {
                spread = next_alive(p, spread);
                pme_rail_enqueue(p, spread, m);
            } else {
                pme_stripe_piece_done(ep, idx, m, PME_OK);
            }
        } else {
            m->started = 0; /* whole again: the receiver skips what it took */
            pme_rail_enqueue(p, p->primary, m);
        }
        m = next;
    }
    r->snd_una = r->snd_nxt = r->snd_max;
    r->resend_lo = r->resend_hi; /* what a LOSE named went with its items */
}

void pme_rail_drop(struct pme_ep *ep, pme_peer_t idx, unsigned k, const char *why)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    if (r->state == RAIL_DEAD)
        return;
    r->state = RAIL_DEAD;
    r->rto_deadline = r->owed_since_ns = 0;
    r->stopped = r->probe = r->rtt_timing = false;
    if (p->primary == k)
        p->primary = (uint8_t)next_alive(p, k);
    move_items(ep, idx, p, k);
    ep->ctr->rails_dropped++;
    unsigned left = pme_rails_alive(p);
    if (!(ep->rails_warned & (1u << k))) {
        char name[24];
        ep->rails_warned |= 1u << k;
        fprintf(stderr,
                "pme: warning: node %u dropped rail %u (%s) to node %u: %s; traffic goes on "
                "over the %u other rail%s (rails that fail later are counted in pme_info -c, "
                "rails_dropped, not reported again)\n",
                ep->self.node, k, rail_name(ep, r->dev, name, sizeof(name)), p->node, why,
                left, left == 1 ? "" : "s");
        fflush(stderr);
    }
    pme_timer_rearm(ep, idx);
    pme_peer_mark_dirty(ep, idx);
}
