// SPDX-License-Identifier: BSD-3-Clause
/*
 * msg.c - what the message layer does for the link (its upcalls), and the choice
 * between the eager and the rendezvous protocol for a send.
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include "msg.h"
#include "rma.h"

int pme_msg_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                 const struct iovec *iov, int iovcnt, unsigned flags, void *ctx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p || iovcnt < 0 || (iovcnt && !iov) || (hdr_len && !hdr) ||
        hdr_len > ep->max_hdr)
        return PME_ERR_INVAL;
    if (p->tx_state == TX_FAILED)
        return p->fail_status;
    ep->now = pme_now_ns();
    uint64_t data_len = pme_iov_total(iov, iovcnt);
    uint64_t total = hdr_len + data_len;
    /* Eager up to the threshold, unless the peer is known to grant less credit than the
     * message would take (it could never go). */
    bool too_big_for_peer = p->tx_state == TX_OPEN &&
                            pme_wire_pool_cost((uint32_t)total) > p->credit_grant;
    if (total <= ep->cfg.eager_max && !too_big_for_peer)
        return pme_eager_send(ep, idx, hdr, hdr_len, iov, iovcnt, total, flags, ctx);
    return pme_rndv_send(ep, idx, hdr, hdr_len, iov, iovcnt, data_len, ctx);
}

/* ---- upcalls ---- */

static int deliver(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                   const uint8_t *sub, size_t len, uint16_t flags)
{
    switch (wh->type) {
    case PME_T_DATA:
        return pme_eager_on_data(ep, idx, wh, sub, len, flags);
    case PME_T_RTS:
        return pme_rndv_on_rts(ep, idx, sub, len);
    case PME_T_CTS:
        pme_rndv_on_cts(ep, idx, sub, len, ntohs(wh->aux));
        return 0;
    case PME_T_RDATA:
        pme_rndv_on_rdata(ep, idx, sub, len);
        return 0;
    case PME_T_RMA:
        if (ntohs(wh->aux) == PME_RMA_BUNDLE)
            return pme_rma_on_bundle(ep, idx, sub, len, flags);
        return len && pme_wire_rma_is_answer(sub[0]) ? pme_rma_on_answer(ep, idx, sub, len)
                                                   : pme_rma_on_request(ep, idx, sub, len, flags);
    default:
        ep->ctr->drop_bad_header++;
        return 0;
    }
}

static void item_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m, int status)
{
    switch (m->type) {
    case PME_T_DATA:
        ep->tx_used -= m->total; /* the eager copy leaves the send pool */
        break;
    case PME_T_RDATA:
        pme_rndv_sent(ep, m, status);
        break;
    case PME_T_RMA:
        pme_rma_request_done(ep, idx, m, status);
        pme_rma_answer_done(ep, idx, m);
        break;
    default:
        break;
    }
}

static uint32_t peer_open(struct pme_ep *ep, pme_peer_t idx)
{
    (void)idx;
    return pme_pool_grant(ep);
}

/* Eager messages queued before the peer's grant was known that can never fit it go by
 * rendezvous instead, from the copy already made (the sender counted them complete). */
static void credit_known(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_txmsg **tail, **cur;
    for (struct pme_txmsg **pp = pme_link_ordered_queue(ep, idx, &tail, &cur); *pp;
         pp = &(*pp)->next) {
        struct pme_txmsg *m = *pp, *rts;
        /* (A bundle is never larger than the grant it was made under.) */
        if (m->type != PME_T_DATA || m->started || m->nrec || m->cost <= p->credit_grant ||
            pme_rndv_convert(ep, idx, m, &rts) != PME_OK)
            continue;
        rts->next = m->next;
        rts->order = m->order; /* it takes the message's place in the order */
        *pp = rts;
        if (*tail == m)
            *tail = rts;
        if (*cur == m)
            *cur = rts;
        m->next = NULL;
    }
    pme_rma_peer_known(ep, idx);
}

static void peer_failed(struct pme_ep *ep, pme_peer_t idx, int status, bool report)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    pme_rndv_fail_peer(ep, idx, status);
    pme_rma_origin_fail_peer(ep, idx, status);
    pme_rma_target_fail_peer(ep, idx);
    if (p->asm_buf) {
        pme_rxbuf_free(ep, p->asm_buf);
        p->asm_buf = NULL;
    }
    pme_pool_release_peer(ep, p);
    if (report)
        pme_evq_push(ep, PME_EV_PEER_FAILED, status, idx);
}

const struct pme_upcalls pme_msg_upcalls = {
    .deliver = deliver,
    .item_done = item_done,
    .peer_open = peer_open,
    .credit_known = credit_known,
    .peer_failed = peer_failed,
};
