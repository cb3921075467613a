// SPDX-License-Identifier: BSD-3-Clause
/*
 * eager.c - eager messages: copied at the sender into a queue item (so the send
 * completes at once), sent as DATA fragments on the peer's eager credit, assembled at
 * the receiver into one receive-pool buffer and handed out whole as PME_EV_MSG.
 *
 * Small messages are coalesced, never delayed for it: a message leaves in the call that
 * sends it whenever the link takes it. Only one that must wait anyway (the link cannot
 * take it: no credit, a full device, STOP, items queued before it) or that comes while
 * PME_COALESCE_AFTER frames to the peer wait for an acknowledgement (link_tx.c) gets
 * room for others, and the small messages that meet it at the tail of the queue travel
 * with it as one bundle (pme_wire.h, PME_DATA_BUNDLE): one frame, one order number and
 * one credit charge for many messages, which alone paid each its own headers, system
 * calls and acknowledgement.
 */
#include <arpa/inet.h>
#include <string.h>

#include "bundle.h"
#include "msg.h"

/* A bundle's bytes when its first message (of len bytes) becomes its first record. */
#define FIRST_REC_END(len) (PME_BUNDLE_HDR + PME_BUNDLE_REC + (len))

static void copy_msg(uint8_t *dst, const void *hdr, size_t hdr_len, const struct iovec *iov,
                     int iovcnt)
{
    if (hdr_len)
        memcpy(dst, hdr, hdr_len);
    size_t off = hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(dst + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
}

/* The largest bundle a message to the peer may be part of, or 0 when it goes alone:
 * coalescing is off or the peer cannot take bundles. */
static uint32_t bundle_limit(const struct pme_ep *ep, const struct pme_peer *p)
{
    if (!ep->cfg.coalesce_bytes || p->tx_state != TX_OPEN || !(p->takes & PME_FEAT_BUNDLE))
        return 0;
    uint32_t lim = pme_link_data_room(p);
    if (ep->cfg.coalesce_bytes < lim)
        lim = (uint32_t)ep->cfg.coalesce_bytes;
    return lim;
}

/* Append the message to the last item of the peer's in-order queue when that is a
 * small DATA item that waits (nobody has started or charged it yet) with room for
 * others, and the bundle stays within lim, the item's room and the peer's grant; false
 * when it must have an item of its own. */
static bool bundle_append(struct pme_ep *ep, struct pme_peer *p, uint32_t lim,
                          const void *hdr, size_t hdr_len, const struct iovec *iov,
                          int iovcnt, uint32_t total)
{
    struct pme_txmsg *m = p->rail[p->primary].q_tail;
    if (!m || m->type != PME_T_DATA || m->started || m->charged || !m->room ||
        m->nrec == UINT16_MAX)
        return false;
    uint32_t end = m->nrec ? m->total : FIRST_REC_END(m->total);
    uint32_t at = pme_wire_rec_after(end);
    uint64_t after = (uint64_t)at + PME_BUNDLE_REC + total;
    if (after > m->room || after > lim || pme_wire_pool_cost((uint32_t)after) > p->credit_grant)
        return false;
    uint32_t before = m->total;
    if (!m->nrec) {
        /* Its message becomes the bundle's first record. */
        memmove(m->data + FIRST_REC_END(0), m->data, m->total);
        pme_bundle_put_rec(m->data + PME_BUNDLE_HDR, m->total, m->hdr_len);
        m->hdr_len = 0;
        m->aux = PME_DATA_BUNDLE;
        m->nrec = 1;
        ep->ctr->tx_bundles++;
        ep->ctr->tx_bundled++;
    }
    memset(m->data + end, 0, at - end); /* no stale bytes of the cache on the wire */
    pme_bundle_put_rec(m->data + at, total, (uint16_t)hdr_len);
    copy_msg(m->data + at + PME_BUNDLE_REC, hdr, hdr_len, iov, iovcnt);
    m->nrec++;
    pme_bundle_put_count(m->data, m->nrec);
    m->total = (uint32_t)after;
    m->cost = pme_wire_pool_cost(m->total);
    ep->tx_used += m->total - before;
    ep->ctr->tx_bundled++;
    return true;
}

int pme_eager_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                   const struct iovec *iov, int iovcnt, uint64_t total, unsigned flags,
                   void *ctx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (ep->tx_used + total > ep->cfg.tx_pool_bytes && ep->tx_used)
        return PME_EAGAIN;
    uint32_t lim = bundle_limit(ep, p);
    bool joined = lim && bundle_append(ep, p, lim, hdr, hdr_len, iov, iovcnt, (uint32_t)total);
    if (!joined) {
        /* An item of its own: with room for more when it will wait, so that the small
         * messages after it can join it. */
        uint32_t room = 0;
        if (lim && pme_wire_rec_after(FIRST_REC_END((uint32_t)total)) + PME_BUNDLE_REC <= lim &&
            pme_link_small_waits(ep, p))
            room = lim;
        struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_DATA, room ? room : total);
        if (!m)
            return PME_ERR_NOMEM;
        m->total = (uint32_t)total;
        m->hdr_len = (uint16_t)hdr_len;
        m->cost = pme_wire_pool_cost(m->total);
        m->room = room;
        m->may_gather = room != 0;
        copy_msg(m->data, hdr, hdr_len, iov, iovcnt);
        ep->tx_used += total;
        pme_link_enqueue(ep, idx, m);
    }
    ep->ctr->tx_msgs++;
    p->ctr->tx_msgs++;
    /* Now, if the link takes it (a bundle it joined too, if that may go now). */
    pme_link_pump(ep, idx);
    if (flags & PME_SEND_NO_EVENT)
        return PME_DONE;
    struct pme_event *e = pme_evq_push(ep, PME_EV_SEND_DONE, PME_OK, idx);
    e->ctx = ctx;
    return PME_OK;
}

/* ---- receiving ---- */

static void push_msg(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p,
                     struct pme_rxbuf *b, uint8_t *at, uint16_t hdr_len, uint32_t len)
{
    struct pme_event *e = pme_evq_push(ep, PME_EV_MSG, PME_OK, idx);
    e->hdr = at;
    e->hdr_len = hdr_len;
    e->data = at + hdr_len;
    e->data_len = len - hdr_len;
    e->priv_ = b;
    ep->ctr->rx_msgs++;
    p->ctr->rx_msgs++;
}

/* A bundle assembled: every record checked first, then one event each, in order,
 * sharing the buffer, which returns to the pool with the last release. */
static void deliver_bundle(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p,
                           struct pme_rxbuf *b)
{
    unsigned n = pme_bundle_count(b->data, b->len);
    if (!n) {
        ep->ctr->drop_bad_header++;
        pme_rxbuf_free(ep, b);
        return;
    }
    b->refs = n;
    uint32_t at = PME_BUNDLE_HDR;
    for (unsigned i = 0; i < n; i++) {
        uint32_t len;
        uint16_t hdr_len;
        uint32_t next = pme_bundle_rec(b->data, at, &len, &hdr_len);
        push_msg(ep, idx, p, b, b->data + at + PME_BUNDLE_REC, hdr_len, len);
        at = next;
    }
    ep->ctr->rx_bundles++;
}

/* An eager fragment in sequence: the first one allocates the message's buffer (on the
 * peer's credit), each lands at its offset, the last one makes the event (or, for a
 * bundle, the events). */
int pme_eager_on_data(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                      const uint8_t *sub, size_t len, uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint16_t aux = ntohs(wh->aux);
    if (len < sizeof(struct pme_wire_frag) || (aux && aux != PME_DATA_BUNDLE)) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    const struct pme_wire_frag *fr = (const void *)sub;
    const uint8_t *payload = (const uint8_t *)(fr + 1);
    uint32_t plen = (uint32_t)(len - sizeof(*fr));
    uint32_t total = ntohl(fr->total), off = ntohl(fr->offset);
    uint16_t hdr_len = ntohs(fr->hdr_len);
    if (flags & PME_F_FIRST) {
        if (off != 0 || hdr_len > total || total > (1u << 30) || (aux && hdr_len)) {
            ep->ctr->drop_bad_header++;
            return 0;
        }
        uint32_t order = ntohl(wh->order);
        if (p->asm_buf && order && order == p->asm_order && p->asm_buf->len == total) {
            /* The same message from its start again (the rail it came on died midway):
             * assembled again in the buffer it already has. */
            p->asm_off = 0;
        } else {
            if (p->asm_buf) /* a sender that never finished its last message */
                pme_rxbuf_free(ep, p->asm_buf);
            p->asm_buf = pme_rxbuf_alloc(ep, idx, total, true);
            if (!p->asm_buf)
                return PME_RX_NO_BUFFER;
            p->asm_buf->hdr_len = hdr_len;
            p->asm_off = 0;
            p->asm_order = order;
        }
        p->asm_buf->bundle = aux == PME_DATA_BUNDLE;
    }
    struct pme_rxbuf *b = p->asm_buf;
    if (!b || off != p->asm_off || plen > b->len - off || total != b->len ||
        b->bundle != (aux == PME_DATA_BUNDLE)) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    memcpy(b->data + off, payload, plen);
    p->asm_off += plen;
    if (flags & PME_F_LAST) {
        p->asm_buf = NULL;
        if (p->asm_off != b->len) {
            ep->ctr->drop_bad_header++;
            pme_rxbuf_free(ep, b);
        } else if (b->bundle) {
            deliver_bundle(ep, idx, p, b);
        } else {
            push_msg(ep, idx, p, b, b->data, b->hdr_len, b->len);
        }
    }
    return 0;
}
