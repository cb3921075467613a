/*
 * link_ctrl.c - unsequenced control frames (ACK, LOSE, STOP, GO, CREDIT, CREDIT_REQ,
 * HELLO and HELLO_ACK, PING and PONG, BYE) and the state that rides on every frame.
 *
 * Every frame we send carries our view of the reverse direction when we have one
 * (PME_F_ACK_VALID: the cumulative ACK and the eager credit limit we grant), so a busy
 * exchange needs few pure ACKs.
 */
#include <arpa/inet.h>
#include <string.h>

#include "link.h"

uint64_t pme_link_next_nonce(struct pme_ep *ep)
{
    return ++ep->nonce;
}

void pme_link_fill_rx_state(struct pme_ep *ep, struct pme_peer *p, struct pme_wire_hdr *wh)
{
    wh->job_id = htonl(ep->keys.job_id);
    if (!p->rx_open)
        return;
    wh->flags |= htons(PME_F_ACK_VALID);
    wh->ack = htonl(p->rcv_nxt - 1);
    wh->credit = htonl(p->credit_granted);
    p->unacked = 0;
    p->ack_deadline = 0;
    p->ack_now = false;
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

int pme_link_ctrl(struct pme_ep *ep, pme_peer_t idx, int type, const void *sub, size_t sublen)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint8_t buf[PME_HDRS_BYTES];
    if (sublen > PME_HDRS_BYTES - PME_ETH_HLEN - sizeof(struct pme_wire_hdr))
        return PME_ERR_INVAL;
    struct pme_wire_hdr *wh = pme_wire_start(buf, &ep->dself[p->dev], p->mac, p->node,
                                             p->ep_id, type, sublen);
    pme_link_fill_rx_state(ep, p, wh);
    if (sublen)
        memcpy(wh + 1, sub, sublen);
    struct pme_dev_frame f = {.iov = {{buf, PME_ETH_HLEN + sizeof(*wh) + sublen}}, .iovcnt = 1};
    pme_wire_seal(&ep->keys, &ep->self, pme_link_next_nonce(ep), &f);
    struct pme_dev *dev = ep->devs[p->dev];
    int n = dev->ops->send(dev, &f, 1);
    if (n == 1) {
        ep->ctr->tx_frames++;
        ep->ctr->tx_bytes += f.iov[0].iov_len;
        p->ctr->tx_frames++;
        p->ctr->tx_bytes += f.iov[0].iov_len;
    }
    count_ctrl(ep, p, type);
    return n == 1 ? PME_OK : PME_EAGAIN;
}

/* Open our direction toward the peer (again, if the last HELLO went unanswered). */
void pme_link_hello(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_NEW) {
        uint32_t isn;
        if (pme_getrandom(&isn, sizeof(isn)))
            isn = (uint32_t)ep->now ^ ep->self.incarnation;
        p->snd_una = p->snd_nxt = p->snd_max = isn;
        p->tx_state = TX_HELLO;
        p->hello_tries = 0;
        p->rto_us = ep->cfg.rto_us;
    }
    struct pme_wire_hello h = {
        .first_seq = htonl(p->snd_una),
        .max_frame = htons((uint16_t)ep->mtu),
        .nrails = 1,
        .features = htonl(PME_FEAT_RMA),
    };
    p->hello_tries++;
    pme_link_ctrl(ep, idx, PME_T_HELLO, &h, sizeof(h));
    pme_timer_arm_rto(ep, idx);
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
        if (p->we_stopped) {
            p->we_stopped = false;
            ep->stopped_peers--;
            pme_link_ctrl(ep, i, PME_T_GO, NULL, 0);
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
