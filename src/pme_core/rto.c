/*
 * rto.c - arming the link's timers: the retransmission timeout (Appendix B, S2, with
 * the round trip measured as TCP does), delayed ACKs and keepalives. Firing them is
 * timers.c's; this file only decides when, so that sending (link_tx.c, link_ctrl.c)
 * can arm timers without depending on what firing does.
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

void pme_timer_arm_rto(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->owed_since_ns)
        p->owed_since_ns = ep->now; /* we wait for it from now on */
    p->keepalive_armed = false;
    p->rto_deadline = ep->now + (uint64_t)p->rto_us * 1000u;
    track(ep, idx, p->rto_deadline);
}

void pme_timer_arm_ack(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->ack_deadline)
        return;
    /* Long enough for a reply to carry the ACK, short against the sender's timer. */
    p->ack_deadline = ep->now + (uint64_t)ep->cfg.rto_us * 250u;
    track(ep, idx, p->ack_deadline);
}

/* The retransmission timeout before backoff: the configured minimum, or the measured
 * round trip plus four times its variation when that is longer (as TCP does), so a
 * loaded node whose peers answer late is not flooded with spurious retransmissions. */
uint32_t pme_rto_base(const struct pme_ep *ep, const struct pme_peer *p)
{
    uint64_t rto = (uint64_t)p->srtt_us + 4ull * p->rttvar_us;
    if (rto < ep->cfg.rto_us)
        rto = ep->cfg.rto_us;
    return rto > PME_RTO_CEILING_US ? PME_RTO_CEILING_US : (uint32_t)rto;
}

void pme_rtt_sample(struct pme_ep *ep, struct pme_peer *p, uint64_t rtt_ns)
{
    (void)ep;
    uint32_t rtt = (uint32_t)(rtt_ns / 1000u);
    if (!p->srtt_us) {
        p->srtt_us = rtt ? rtt : 1;
        p->rttvar_us = rtt / 2;
        return;
    }
    uint32_t dev = rtt > p->srtt_us ? rtt - p->srtt_us : p->srtt_us - rtt;
    p->rttvar_us = p->rttvar_us - p->rttvar_us / 4 + dev / 4;
    p->srtt_us = p->srtt_us - p->srtt_us / 8 + rtt / 8;
    if (!p->srtt_us)
        p->srtt_us = 1;
}

uint64_t pme_keepalive_ns(const struct pme_ep *ep)
{
    uint64_t k = (uint64_t)ep->cfg.peer_timeout_ms * 1000000ull / 4;
    return k < KEEPALIVE_MAX_NS ? k : KEEPALIVE_MAX_NS;
}

/* Choose the peer's next deadline after its state changed: the retransmission timer
 * while the peer owes us something; a keepalive while a rendezvous with it is open
 * (its answer or its data may take long, but a dead peer must not make us wait for
 * ever); none otherwise. */
void pme_timer_rearm(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_FAILED || p->tx_state == TX_NEW) {
        p->rto_deadline = 0;
        p->owed_since_ns = 0;
        return;
    }
    if (pme_peer_owes(p)) {
        if (!p->rto_deadline || p->keepalive_armed)
            pme_timer_arm_rto(ep, idx);
        return;
    }
    p->owed_since_ns = 0;
    if (p->rndv_in || p->rndv_out) {
        uint64_t d = p->last_rx_ns + pme_keepalive_ns(ep);
        if (d <= ep->now)
            d = ep->now + pme_keepalive_ns(ep);
        p->rto_deadline = d;
        p->keepalive_armed = true;
        track(ep, idx, d);
        return;
    }
    p->rto_deadline = 0;
}

