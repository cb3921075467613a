/*
 * link_tx.c - the sending half of Go-Back-N for PM.
 *
 * Each peer has one queue of sequenced items (eager messages, rendezvous offers and
 * answers, rendezvous data streams). Frame i of an item is always rebuilt the same way
 * from the item itself, so nothing is kept per frame: after a LOSE, STOP or timeout
 * the cursor simply moves back to the first unacknowledged frame (Appendix B, S2).
 * Items leave the queue when their last frame is acknowledged.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

static void count_tx(struct pme_ep *ep, struct pme_peer *p, const struct pme_dev_frame *f)
{
    size_t bytes = 0;
    for (int i = 0; i < f->iovcnt; i++)
        bytes += f->iov[i].iov_len;
    ep->ctr->tx_frames++;
    ep->ctr->tx_bytes += bytes;
    p->ctr->tx_frames++;
    p->ctr->tx_bytes += bytes;
}

/* ---- queue items ---- */

struct pme_txmsg *pme_txmsg_new(struct pme_ep *ep, int type, size_t data_bytes)
{
    struct pme_txmsg *m = pme_cache_alloc(&ep->cache, sizeof(*m) + data_bytes);
    if (m) {
        memset(m, 0, sizeof(*m));
        m->type = (uint8_t)type;
    }
    return m;
}

void pme_txmsg_free(struct pme_ep *ep, struct pme_txmsg *m)
{
    pme_cache_free(&ep->cache, m);
}

/* ---- building sequenced frames ---- */

static uint32_t frag_bytes(const struct pme_peer *p, int type)
{
    size_t room = p->max_frame - sizeof(struct pme_wire_hdr);
    switch (type) {
    case PME_T_DATA: return (uint32_t)(room - sizeof(struct pme_wire_frag));
    case PME_T_RDATA: return (uint32_t)(room - sizeof(struct pme_wire_rdata));
    case PME_T_RMA: return pme_wire_rma_room(p->max_frame);
    default: return (uint32_t)room;
    }
}

/* Fix an item's place in the sequence space the first time it goes out. */
static void start_msg(struct pme_peer *p, struct pme_txmsg *m)
{
    m->started = 1;
    m->first_seq = p->snd_nxt;
    m->frag = frag_bytes(p, m->type);
    switch (m->type) {
    case PME_T_DATA:
        m->nframes = m->total ? (m->total + m->frag - 1) / m->frag : 1;
        break;
    case PME_T_RDATA:
        m->nframes = (uint32_t)((m->len + m->frag - 1) / m->frag);
        break;
    case PME_T_RMA:
        m->nframes = m->len ? (uint32_t)((m->len + m->frag - 1) / m->frag) : 1;
        break;
    default:
        m->nframes = 1;
    }
}

static uint8_t *bounce_buf(struct pme_ep *ep, int slot)
{
    if (!ep->bounce[slot])
        ep->bounce[slot] = malloc(65536);
    return ep->bounce[slot];
}

/* Point frame f's payload (iov[1..]) at plen bytes of cur from off: straight at the
 * caller's buffers, or, for an iovec too fragmented for the device's gather list,
 * through slot's bounce buffer. */
static int gather(struct pme_ep *ep, int slot, struct pme_dev_frame *f,
                  struct pme_iov_cursor *cur, uint64_t off, size_t plen)
{
    pme_iov_cursor_seek(cur, off);
    int n = pme_iov_cursor_slice(cur, plen, &f->iov[1], PME_DEV_MAX_IOV - 1);
    if (n < 0) {
        uint8_t *b = bounce_buf(ep, slot);
        if (!b)
            return PME_ERR_NOMEM;
        size_t done = 0;
        while (done < plen) {
            struct iovec piece;
            pme_iov_cursor_slice(cur, plen - done, &piece, 1);
            memcpy(b + done, piece.iov_base, piece.iov_len);
            done += piece.iov_len;
        }
        f->iov[1].iov_base = b;
        f->iov[1].iov_len = plen;
        n = 1;
    }
    f->iovcnt = 1 + n;
    return PME_OK;
}

/* Build frame `fi` of item m into batch slot `slot`. */
static int build_frame(struct pme_ep *ep, struct pme_peer *p, struct pme_txmsg *m,
                       uint32_t fi, int slot, uint16_t flags)
{
    struct pme_dev_frame *f = &ep->batch[slot];
    uint8_t *buf = ep->batch_hdr[slot];
    uint8_t *sub = buf + PME_ETH_HLEN + sizeof(struct pme_wire_hdr);
    size_t sublen = 0, plen = 0;
    uint32_t seq = m->first_seq + fi;
    f->iovcnt = 1;
    if (fi == 0)
        flags |= PME_F_FIRST;
    if (fi + 1 == m->nframes)
        flags |= PME_F_LAST;

    switch (m->type) {
    case PME_T_DATA: {
        uint32_t off = fi * m->frag;
        plen = m->total - off < m->frag ? m->total - off : m->frag;
        struct pme_wire_frag fr = {htonl(m->total), htonl(off), htons(m->hdr_len), 0};
        memcpy(sub, &fr, sizeof(fr));
        sublen = sizeof(fr);
        if (plen) {
            f->iov[1].iov_base = m->data + off;
            f->iov[1].iov_len = plen;
            f->iovcnt = 2;
        }
        break;
    }
    case PME_T_RTS: {
        struct pme_wire_rts r = {htonl(m->send_id), htons(m->hdr_len), 0, htobe64(m->len)};
        memcpy(sub, &r, sizeof(r));
        sublen = sizeof(r);
        plen = m->hdr_len;
        if (plen) {
            f->iov[1].iov_base = m->data;
            f->iov[1].iov_len = plen;
            f->iovcnt = 2;
        }
        break;
    }
    case PME_T_CTS: {
        struct pme_wire_cts c = {htonl(m->send_id), htonl(m->rndv_id), htobe64(m->accepted)};
        memcpy(sub, &c, sizeof(c));
        sublen = sizeof(c);
        break;
    }
    case PME_T_RDATA: {
        struct pme_iov_cursor *cur = m->cur;
        uint64_t off = (uint64_t)fi * m->frag;
        plen = m->len - off < m->frag ? (size_t)(m->len - off) : m->frag;
        struct pme_wire_rdata rd = {htonl(m->rndv_id), 0, htobe64(off)};
        memcpy(sub, &rd, sizeof(rd));
        sublen = sizeof(rd);
        if (gather(ep, slot, f, cur, off, plen))
            return PME_ERR_NOMEM;
        if (flags & PME_F_LAST)
            flags |= PME_F_ACK_REQ; /* the sender's completion waits on this ACK */
        break;
    }
    case PME_T_RMA: {
        /* The first frame's sub-header, its offset advanced past the frames before. */
        struct pme_wire_rma r;
        memcpy(&r, m->data, sizeof(r));
        uint64_t off = (uint64_t)fi * m->frag;
        plen = m->len - off < m->frag ? (size_t)(m->len - off) : m->frag;
        r.offset = htobe64(be64toh(r.offset) + off);
        memcpy(sub, &r, sizeof(r));
        sublen = sizeof(r);
        if (plen && gather(ep, slot, f, m->cur, off, plen))
            return PME_ERR_NOMEM;
        if ((flags & PME_F_LAST) && !pme_wire_rma_is_answer(r.op))
            flags |= PME_F_ACK_REQ; /* a request: the origin's completion waits on it */
        break;
    }
    default: /* NOP */
        break;
    }
    struct pme_wire_hdr *wh = pme_wire_start(buf, &ep->dself[p->dev], p->mac, p->node,
                                             p->ep_id, m->type, sublen + plen);
    wh->seq = htonl(seq);
    wh->flags = htons(flags);
    wh->aux = htons(m->aux);
    pme_link_fill_rx_state(ep, p, wh);
    f->iov[0].iov_base = buf;
    f->iov[0].iov_len = PME_ETH_HLEN + sizeof(*wh) + sublen;
    pme_wire_seal(&ep->keys, &ep->self, pme_link_next_nonce(ep), f);
    ep->batch_seq[slot] = seq;
    return PME_OK;
}

/* Send the batch; frames the device did not take are rewound and go again later. */
void pme_link_flush(struct pme_ep *ep)
{
    if (!ep->nbatch)
        return;
    struct pme_peer *p = pme_peer_get(ep, ep->batch_peer);
    struct pme_dev *dev = ep->devs[p->dev];
    int n = dev->ops->send(dev, ep->batch, ep->nbatch);
    if (n < 0) {
        /* The device refused (interface went down...). The frames count as lost:
         * Go-Back-N resends them, and the peer timeout ends it if it lasts. */
        ep->ctr->tx_errors++;
        n = ep->nbatch;
    }
    for (int i = 0; i < n; i++)
        count_tx(ep, p, &ep->batch[i]);
    if (n < ep->nbatch) {
        /* Frames never sent are not retransmissions when they go later. */
        ep->tx_blocked = true;
        if (pme_seq_after(p->snd_max, ep->batch_seq[n]) &&
            !pme_seq_after(ep->batch_snd_max, ep->batch_seq[n]))
            p->snd_max = ep->batch_seq[n];
        if (p->rtt_timing && !pme_seq_before(p->rtt_seq, ep->batch_seq[n]))
            p->rtt_timing = false;
        pme_link_rewind(ep, p, ep->batch_seq[n]);
    }
    ep->nbatch = 0;
}

/* Move the cursor so that the next frame sent is `seq` (back after a loss, forward
 * after a late ACK). */
void pme_link_rewind(struct pme_ep *ep, struct pme_peer *p, uint32_t seq)
{
    (void)ep;
    p->snd_nxt = seq;
    struct pme_txmsg *m = p->q_head;
    while (m && m->started && !pme_seq_in(seq, m->first_seq, m->first_seq + m->nframes))
        m = m->next;
    if (m && m->started) {
        p->cur = m;
        p->cur_frame = seq - m->first_seq;
        return;
    }
    /* seq is where no frame has been sent yet: the first unstarted item. */
    while (m && m->started)
        m = m->next;
    p->cur = m;
    p->cur_frame = 0;
}

void pme_link_pump(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_NEW) {
        if (p->q_head)
            pme_link_hello(ep, idx);
        return;
    }
    if (p->tx_state != TX_OPEN || ep->tx_blocked)
        return;
    if (ep->nbatch && ep->batch_peer != idx)
        pme_link_flush(ep);
    if (!ep->nbatch)
        ep->batch_snd_max = p->snd_max;
    ep->batch_peer = idx;
    while (p->cur) {
        if (p->stopped && !p->probe)
            break;
        if (p->snd_nxt - p->snd_una >= ep->cfg.window && !p->probe) {
            ep->ctr->window_stalls++;
            break;
        }
        struct pme_txmsg *m = p->cur;
        if (!m->started) {
            if (m->type == PME_T_DATA) {
                if (m->cost > p->credit_grant) {
                    /* It can never fit this peer's credit: the message layer changes
                     * its form (it failed to when the grant became known). */
                    ep->up->credit_known(ep, idx);
                    if (p->cur == m)
                        break;
                    continue;
                }
                if (pme_credit_room(p->credit_limit, p->credit_used) < m->cost) {
                    if (!p->credit_stalled) {
                        p->credit_stalled = true;
                        ep->ctr->credit_stalls++;
                        p->ctr->credit_stalls++;
                        pme_timer_arm_rto(ep, idx);
                    }
                    break;
                }
                p->credit_used += m->cost;
            }
            start_msg(p, m);
        }
        uint16_t flags = 0;
        if (p->probe || p->snd_nxt + 1 - p->snd_una >= ep->cfg.window)
            flags |= PME_F_ACK_REQ;
        p->probe = false;
        if (build_frame(ep, p, m, p->cur_frame, ep->nbatch, flags))
            break;
        if (pme_seq_before(p->snd_nxt, p->snd_max)) {
            ep->ctr->retransmits++;
            p->ctr->retransmits++;
            p->rtt_timing = false; /* Karn: an ACK after a resend times nothing */
        } else if (!p->rtt_timing && (flags & PME_F_ACK_REQ)) {
            /* Time only frames the receiver answers at once: a delayed or piggybacked
             * ACK measures the receiver's program, not the round trip. */
            p->rtt_timing = true;
            p->rtt_seq = p->snd_nxt;
            p->rtt_sent_ns = ep->now;
        }
        ep->nbatch++;
        p->snd_nxt++;
        if (pme_seq_after(p->snd_nxt, p->snd_max))
            p->snd_max = p->snd_nxt;
        if (++p->cur_frame == m->nframes) {
            p->cur = m->next;
            p->cur_frame = 0;
        }
        if (ep->nbatch == PME_TX_BATCH) {
            pme_link_flush(ep);
            ep->batch_snd_max = p->snd_max;
        }
        if (ep->tx_blocked)
            break;
    }
    pme_link_flush(ep);
    if (pme_peer_has_inflight(p) && (!p->rto_deadline || p->keepalive_armed))
        pme_timer_arm_rto(ep, idx);
}

void pme_link_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    m->next = NULL;
    if (p->q_tail)
        p->q_tail->next = m;
    else
        p->q_head = m;
    p->q_tail = m;
    if (!p->cur) {
        p->cur = m;
        p->cur_frame = 0;
    }
}

/* Free an item whose frames are all acknowledged, completing what it carried. */
static void retire(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m)
{
    ep->up->item_done(ep, idx, m, PME_OK);
    pme_txmsg_free(ep, m);
}

/* The peer failed: every queued item is done with its status. */
void pme_link_purge(struct pme_ep *ep, pme_peer_t idx, int status)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_txmsg *m = p->q_head;
    p->q_head = p->q_tail = p->cur = NULL;
    while (m) {
        struct pme_txmsg *next = m->next;
        ep->up->item_done(ep, idx, m, status);
        pme_txmsg_free(ep, m);
        m = next;
    }
}

/* ACK(k): every frame up to k arrived in order. */
void pme_link_ack(struct pme_ep *ep, pme_peer_t idx, uint32_t ack)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint32_t una = ack + 1;
    if (!pme_seq_after(una, p->snd_una) || pme_seq_after(una, p->snd_max))
        return;
    p->snd_una = una;
    if (p->rtt_timing && pme_seq_after(una, p->rtt_seq)) {
        p->rtt_timing = false;
        pme_rtt_sample(ep, p, ep->now - p->rtt_sent_ns);
    }
    while (p->q_head && p->q_head->started &&
           !pme_seq_after(p->q_head->first_seq + p->q_head->nframes, una)) {
        struct pme_txmsg *m = p->q_head;
        p->q_head = m->next;
        if (!p->q_head)
            p->q_tail = NULL;
        if (p->cur == m) {
            p->cur = m->next;
            p->cur_frame = 0;
        }
        retire(ep, idx, m);
    }
    if (pme_seq_before(p->snd_nxt, una))
        pme_link_rewind(ep, p, una);
    if (p->cur)
        pme_peer_mark_dirty(ep, idx); /* the window opened: send more after this batch */
    /* Progress: the backoff starts over and the timer restarts from now. */
    p->rto_us = pme_rto_base(ep, p);
    p->rto_deadline = 0;
    pme_timer_rearm(ep, idx);
}

/* The device has room again (or we try): resume every peer with work. */
void pme_link_resume(struct pme_ep *ep)
{
    ep->tx_blocked = false;
    for (uint32_t i = 0; i < ep->npeers && !ep->tx_blocked; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (p->cur && p->tx_state == TX_OPEN)
            pme_link_pump(ep, i);
    }
}
