// SPDX-License-Identifier: BSD-3-Clause
/*
 * rto.c - arming the link's timers: each rail's retransmission timeout (Appendix B, S2,
 * with the round trip measured as TCP does) and delayed ACK, and the peer's keepalive
 * and credit request. Firing them is timers.c's; this file only decides when, so that
 * sending (link_tx.c, link_ctrl.c) can arm timers without depending on what firing does.
 *
 * Only peers with a deadline are on the endpoint's timer list, so an endpoint with
 * thousands of quiet peers does no per-peer work in progress.
 */
#include "link.h"

#define KEEPALIVE_MAX_NS 1000000000ull

/* The peer has a deadline: put it on the timer list. */
static void track(struct pme_ep *ep, pme_peer_t idx, uint64_t deadline)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->active) {
        p->active = true;
        pme_idxvec_push(&ep->active, idx);
    }
    if (deadline < ep->next_timer_ns || !ep->next_timer_ns)
        ep->next_timer_ns = deadline;
}

uint64_t pme_peer_next_deadline(const struct pme_peer *p)
{
    uint64_t d = p->peer_deadline;
    for (unsigned k = 0; k < p->nrails; k++) {
        const struct pme_rail *r = &p->rail[k];
        if (r->rto_deadline && (!d || r->rto_deadline < d))
            d = r->rto_deadline;
        if (r->ack_deadline && (!d || r->ack_deadline < d))
            d = r->ack_deadline;
    }
    return d;
}

void pme_timer_arm_rto(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    if (!p->owed_since_ns)
        p->owed_since_ns = ep->now; /* we wait for it from now on */
    if (!r->owed_since_ns)
        r->owed_since_ns = ep->now;
    r->rto_deadline = ep->now + (uint64_t)r->rto_us * 1000u;
    track(ep, idx, r->rto_deadline);
}

/* The peer's own deadline: a keepalive, or asking for credit or a PONG again. */
void pme_timer_arm_peer(struct pme_ep *ep, pme_peer_t idx, uint64_t deadline)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->owed_since_ns && (p->credit_stalled || p->ping_out))
        p->owed_since_ns = ep->now; /* we wait for it from now on */
    p->peer_deadline = deadline;
    track(ep, idx, deadline);
}

void pme_timer_arm_ack(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_rail *r = &pme_peer_get(ep, idx)->rail[k];
    if (r->ack_deadline)
        return;
    /* Long enough for a reply to carry the ACK, short against the sender's timer. */
    r->ack_deadline = ep->now + (uint64_t)ep->cfg.rto_us * 250u;
    track(ep, idx, r->ack_deadline);
}

/* The retransmission timeout before backoff: the configured minimum, or the measured
 * round trip plus four times its variation when that is longer (as TCP does), so a
 * loaded node whose peers answer late is not flooded with spurious retransmissions. */
uint32_t pme_rto_base(const struct pme_ep *ep, const struct pme_rail *r)
{
    uint64_t rto = (uint64_t)r->srtt_us + 4ull * r->rttvar_us;
    if (rto < ep->cfg.rto_us)
        rto = ep->cfg.rto_us;
    return rto > PME_RTO_CEILING_US ? PME_RTO_CEILING_US : (uint32_t)rto;
}

void pme_rtt_sample(struct pme_rail *r, uint64_t rtt_ns)
{
    uint32_t rtt = (uint32_t)(rtt_ns / 1000u);
    if (!r->srtt_us) {
        r->srtt_us = rtt ? rtt : 1;
        r->rttvar_us = rtt / 2;
        return;
    }
    uint32_t dev = rtt > r->srtt_us ? rtt - r->srtt_us : r->srtt_us - rtt;
    r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + dev / 4;
    r->srtt_us = r->srtt_us - r->srtt_us / 8 + rtt / 8;
    if (!r->srtt_us)
        r->srtt_us = 1;
}

uint64_t pme_keepalive_ns(const struct pme_ep *ep)
{
    uint64_t k = (uint64_t)ep->cfg.peer_timeout_ms * 1000000ull / 4;
    return k < KEEPALIVE_MAX_NS ? k : KEEPALIVE_MAX_NS;
}

/* Choose the peer's next deadlines after its state changed: each rail's retransmission
 * timer while the peer owes us something on it; the peer's timer while it owes credit
 * or a PONG, or a keepalive while a rendezvous with it is open (its answer or its data
 * may take long, but a dead peer must not make us wait for ever); none otherwise. */
void pme_timer_rearm(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_FAILED || p->tx_state == TX_NEW) {
        for (unsigned k = 0; k < p->nrails; k++)
            p->rail[k].rto_deadline = p->rail[k].owed_since_ns = 0;
        p->peer_deadline = 0;
        p->owed_since_ns = 0;
        return;
    }
    for (unsigned k = 0; k < p->nrails; k++) {
        struct pme_rail *r = &p->rail[k];
        if (r->state != RAIL_DEAD && pme_rail_owes(r)) {
            if (!r->rto_deadline)
                pme_timer_arm_rto(ep, idx, k);
        } else {
            r->rto_deadline = 0;
            r->owed_since_ns = 0;
        }
    }
    if (pme_peer_owes(p)) {
        if (!p->owed_since_ns)
            p->owed_since_ns = ep->now;
        if ((p->credit_stalled || p->ping_out) && (!p->peer_deadline || p->keepalive_armed)) {
            p->keepalive_armed = false;
            pme_timer_arm_peer(ep, idx, ep->now + (uint64_t)p->peer_rto_us * 1000u);
        }
        return;
    }
    p->owed_since_ns = 0;
    if (p->rndv_in || p->rndv_out) {
        uint64_t d = p->last_rx_ns + pme_keepalive_ns(ep);
        if (d <= ep->now)
            d = ep->now + pme_keepalive_ns(ep);
        p->keepalive_armed = true;
        pme_timer_arm_peer(ep, idx, d);
        return;
    }
    p->peer_deadline = 0;
}
