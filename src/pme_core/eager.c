/*
 * eager.c - eager messages: copied at the sender into a queue item (so the send
 * completes at once), sent as DATA fragments on the peer's eager credit, assembled at
 * the receiver into one receive-pool buffer and handed out whole as PME_EV_MSG.
 */
#include <arpa/inet.h>
#include <string.h>

#include "msg.h"

int pme_eager_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                   const struct iovec *iov, int iovcnt, uint64_t total, unsigned flags,
                   void *ctx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (ep->tx_used + total > ep->cfg.tx_pool_bytes && ep->tx_used)
        return PME_EAGAIN;
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_DATA, total);
    if (!m)
        return PME_ERR_NOMEM;
    m->total = (uint32_t)total;
    m->hdr_len = (uint16_t)hdr_len;
    m->cost = pme_wire_pool_cost(m->total);
    if (hdr_len)
        memcpy(m->data, hdr, hdr_len);
    size_t off = hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(m->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    ep->tx_used += total;
    ep->ctr->tx_msgs++;
    p->ctr->tx_msgs++;
    pme_link_enqueue(ep, idx, m);
    pme_link_pump(ep, idx);
    if (flags & PME_SEND_NO_EVENT)
        return PME_DONE;
    struct pme_event *e = pme_evq_push(ep, PME_EV_SEND_DONE, PME_OK, idx);
    e->ctx = ctx;
    return PME_OK;
}

/* An eager fragment in sequence: the first one allocates the message's buffer (on the
 * peer's credit), each lands at its offset, the last one makes the event. */
int pme_eager_on_data(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                      const uint8_t *sub, size_t len, uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (len < sizeof(struct pme_wire_frag)) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    const struct pme_wire_frag *fr = (const void *)sub;
    const uint8_t *payload = (const uint8_t *)(fr + 1);
    uint32_t plen = (uint32_t)(len - sizeof(*fr));
    uint32_t total = ntohl(fr->total), off = ntohl(fr->offset);
    uint16_t hdr_len = ntohs(fr->hdr_len);
    if (flags & PME_F_FIRST) {
        if (off != 0 || hdr_len > total || total > (1u << 30)) {
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
    }
    struct pme_rxbuf *b = p->asm_buf;
    if (!b || off != p->asm_off || plen > b->len - off || total != b->len) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    memcpy(b->data + off, payload, plen);
    p->asm_off += plen;
    if (flags & PME_F_LAST) {
        if (p->asm_off != b->len) {
            ep->ctr->drop_bad_header++;
            pme_rxbuf_free(ep, b);
        } else {
            struct pme_event *e = pme_evq_push(ep, PME_EV_MSG, PME_OK, idx);
            e->hdr = b->data;
            e->hdr_len = b->hdr_len;
            e->data = b->data + b->hdr_len;
            e->data_len = b->len - b->hdr_len;
            e->priv_ = b;
            ep->ctr->rx_msgs++;
            p->ctr->rx_msgs++;
        }
        p->asm_buf = NULL;
    }
    return 0;
}
