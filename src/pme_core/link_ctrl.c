// SPDX-License-Identifier: BSD-3-Clause
/*
 * link_ctrl.c - unsequenced control frames (ACK, LOSE, STOP, GO, CREDIT, CREDIT_REQ,
 * HELLO and HELLO_ACK, PING and PONG, BYE) and the state that rides on every frame.
 * What a HELLO or HELLO_ACK received means is link_hello.c's.
 *
 * Every frame we send carries our view of the reverse direction of its rail when we
 * have one (PME_F_ACK_VALID: the rail's cumulative ACK and the eager credit limit we
 * grant), so a busy exchange needs few pure ACKs. ACK, LOSE, STOP and GO go on the
 * rail they are about; what is about the peer (CREDIT, PING, BYE) on its primary.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "counters_layout.h"
#include "link.h"

uint64_t pme_link_next_nonce(struct pme_ep *ep)
{
    return ++ep->nonce;
}

/* What rides on every frame we send on rail k: the cumulative ACK of the peer's frames
 * on that rail, and the eager credit we grant it. */
void pme_link_fill_rx_state(struct pme_ep *ep, struct pme_peer *p, unsigned k,
                            struct pme_wire_hdr *wh)
{
    struct pme_rail *r = &p->rail[k];
    wh->job_id = htonl(ep->keys.job_id);
    if (!r->rx_open)
        return;
    wh->flags |= htons(PME_F_ACK_VALID);
    wh->ack = htonl(r->rcv_nxt - 1);
    wh->credit = htonl(p->credit_granted);
    r->unacked = 0;
    r->ack_deadline = 0;
    r->ack_now = false;
    p->credit_sent = p->credit_granted;
}

static void count_ctrl(struct pme_ep *ep, struct pme_peer *p, int type)
{
    switch (type) {
    case PME_T_ACK: ep->ctr->ack_tx++; break;
    case PME_T_LOSE: ep->ctr->lose_tx++; p->ctr->lose_tx++; break;
    case PME_T_STOP: ep->ctr->stop_tx++; p->ctr->stop_tx++; break;
    case PME_T_GO: ep->ctr->go_tx++; p->ctr->go_tx++; break;
    case PME_T_CREDIT: ep->ctr->credit_tx++; break;
    default: break;
    }
}

/* The largest control sub-header: a HELLO and the MACs of every rail. */
#define CTRL_SUB_MAX (sizeof(struct pme_wire_hello) + 6 * PME_WIRE_MAX_RAILS)

int pme_link_ctrl_rail(struct pme_ep *ep, pme_peer_t idx, unsigned k, int type,
                       const void *sub, size_t sublen)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    uint8_t buf[PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + CTRL_SUB_MAX];
    if (sublen > CTRL_SUB_MAX)
        return PME_ERR_INVAL;
    struct pme_wire_hdr *wh = pme_wire_start(buf, &ep->dself[r->dev], r->mac, p->node,
                                             p->ep_id, type, sublen);
    wh->rail = (uint8_t)k;
    pme_link_fill_rx_state(ep, p, k, wh);
    if (sublen)
        memcpy(wh + 1, sub, sublen);
    struct pme_dev_frame f = {.iov = {{buf, PME_ETH_HLEN + sizeof(*wh) + sublen}}, .iovcnt = 1};
    pme_wire_seal(&ep->keys, &ep->self, pme_link_next_nonce(ep), &f);
    struct pme_dev *dev = ep->devs[r->dev];
    int n = dev->ops->send(dev, &f, 1);
    if (n == 1) {
        ep->shm->ifs[r->dev].tx_frames++;
        ep->ctr->tx_frames++;
        ep->ctr->tx_bytes += f.iov[0].iov_len;
        p->ctr->tx_frames++;
        p->ctr->tx_bytes += f.iov[0].iov_len;
    }
    count_ctrl(ep, p, type);
    return n == 1 ? PME_OK : PME_EAGAIN;
}

int pme_link_ctrl(struct pme_ep *ep, pme_peer_t idx, int type, const void *sub, size_t sublen)
{
    return pme_link_ctrl_rail(ep, idx, pme_peer_get(ep, idx)->primary, type, sub, sublen);
}

size_t pme_link_hello_body(struct pme_ep *ep, uint8_t *buf, uint32_t first_seq, uint64_t chal,
                           uint64_t echo)
{
    struct pme_wire_hello h = {
        .chal = htobe64(chal),
        .echo = htobe64(echo),
        .first_seq = htonl(first_seq),
        .max_frame = htons((uint16_t)ep->mtu),
        .nrails = (uint8_t)ep->nrails,
        .features = htonl(PME_FEAT_RMA | PME_FEAT_BUNDLE | PME_FEAT_RMA_BUNDLE), /* always */
    };
    memcpy(buf, &h, sizeof(h));
    for (unsigned k = 0; k < ep->nrails; k++)
        memcpy(buf + sizeof(h) + 6 * k, ep->devs[k]->mac, 6);
    return sizeof(h) + 6 * ep->nrails;
}

uint32_t pme_link_isn(struct pme_ep *ep, unsigned k)
{
    uint32_t isn;
    if (pme_getrandom(&isn, sizeof(isn)))
        isn = (uint32_t)ep->now ^ ep->self.incarnation ^ k;
    return isn;
}

/* Our direction on rail k starts at isn: nothing sent yet, a HELLO owed an answer. */
static void rail_start(struct pme_ep *ep, struct pme_rail *r, uint32_t isn)
{
    r->snd_una = r->snd_nxt = r->snd_max = isn;
    r->resend_lo = r->resend_hi = isn;
    r->state = RAIL_HELLO;
    r->rto_us = ep->cfg.rto_us;
}

/* Open our direction on rail k (rail 0 opens the connection), or ask again. A HELLO on
 * rail 0 carries our challenge, and the echo of the one a HELLO still waiting for proof
 * carried (link_hello.c). */
void pme_link_hello(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    if (k == 0 && p->tx_state == TX_NEW)
        p->tx_state = TX_HELLO;
    if (r->state == RAIL_NEW)
        rail_start(ep, r, pme_link_isn(ep, k));
    const struct pme_hello_wait *w = k ? NULL : pme_hello_wait_find(ep, idx, false);
    uint8_t body[CTRL_SUB_MAX];
    size_t len = pme_link_hello_body(ep, body, r->snd_una, pme_link_chal(ep, idx),
                                     w && w->inc ? w->echo : 0);
    pme_link_ctrl_rail(ep, idx, k, PME_T_HELLO, body, len);
    pme_timer_arm_rto(ep, idx, k);
}

void pme_link_hello_sent(struct pme_ep *ep, pme_peer_t idx, uint32_t first)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    p->tx_state = TX_HELLO;
    rail_start(ep, &p->rail[0], first);
    pme_timer_arm_rto(ep, idx, 0);
}

/* Room again in the pool: let every stopped sender go (Appendix B's GO). */
void pme_link_send_go_if_room(struct pme_ep *ep)
{
    if (!ep->stopped_peers)
        return;
    size_t taken = ep->rx_used + ep->rx_reserved;
    size_t want = ep->cfg.rx_pool_bytes / 4 < 65536 ? ep->cfg.rx_pool_bytes / 4 : 65536;
    if (taken + want > ep->cfg.rx_pool_bytes)
        return;
    for (uint32_t i = 0; i < ep->npeers && ep->stopped_peers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        for (unsigned k = 0; k < p->nrails; k++) {
            if (p->rail[k].we_stopped) {
                p->rail[k].we_stopped = false;
                ep->stopped_peers--;
                pme_link_ctrl_rail(ep, i, k, PME_T_GO, NULL, 0);
            }
        }
    }
}

/* The endpoint closes: every peer that may still wait on us learns at once that this
 * incarnation is gone, instead of timing out. */
void pme_link_bye_all(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (p->tx_state != TX_FAILED && (p->rx_open || p->tx_state != TX_NEW))
            pme_link_ctrl(ep, i, PME_T_BYE, NULL, 0);
    }
}
