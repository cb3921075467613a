/*
 * tx.c - the sending half of Go-Back-N for PM, and pme_send.
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

#include "crc32c.h"
#include "pme_internal.h"

/* Put our view of the reverse direction (cumulative ACK, credit limit) into a frame. */
void pme_tx_fill_rx_state(struct pme_ep *ep, struct pme_peer *p, struct pme_wire_hdr *wh)
{
    (void)ep;
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

/* Ethernet header and PME header; returns a pointer to the PME header. */
static struct pme_wire_hdr *put_hdrs(struct pme_ep *ep, struct pme_peer *p, uint8_t *buf,
                                     int type, uint32_t seq, uint16_t flags, size_t len)
{
    memcpy(buf, p->mac, 6);
    memcpy(buf + 6, ep->mac, 6);
    memcpy(buf + 12, &ep->ethertype_be, 2);
    struct pme_wire_hdr *wh = (struct pme_wire_hdr *)(buf + PME_ETH_HLEN);
    memset(wh, 0, sizeof(*wh));
    wh->dst_ep = htons(p->ep_id);
    wh->version = PME_WIRE_VERSION;
    wh->type = (uint8_t)type;
    wh->src_ep = htons(ep->ep_id);
    wh->len = htons((uint16_t)len);
    wh->job_key = htonl(ep->cfg.job_key);
    wh->seq = htonl(seq);
    wh->flags = htons(flags);
    pme_tx_fill_rx_state(ep, p, wh);
    return wh;
}

/* CRC32C over the header's covered part and every byte after it in the frame. */
static void seal(struct pme_ep *ep, struct pme_dev_frame *f, struct pme_wire_hdr *wh)
{
    if (!ep->cfg.checksum) {
        wh->flags |= htons(PME_F_NO_CRC);
        return;
    }
    uint32_t crc = pme_crc32c(0, wh, PME_WIRE_CRC_COVERED_HDR);
    /* iov[0] holds Ethernet + PME header + sub-header. */
    size_t hdrs = PME_ETH_HLEN + sizeof(*wh);
    crc = pme_crc32c(crc, (uint8_t *)f->iov[0].iov_base + hdrs, f->iov[0].iov_len - hdrs);
    for (int i = 1; i < f->iovcnt; i++)
        crc = pme_crc32c(crc, f->iov[i].iov_base, f->iov[i].iov_len);
    wh->crc = htonl(crc);
}

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

int pme_tx_ctrl(struct pme_ep *ep, pme_peer_t idx, int type, const void *sub, size_t sublen)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint8_t buf[PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + 64];
    struct pme_dev_frame f;
    if (sublen > 64)
        return PME_ERR_INVAL;
    struct pme_wire_hdr *wh = put_hdrs(ep, p, buf, type, 0, 0, sublen);
    if (sublen)
        memcpy(wh + 1, sub, sublen);
    f.iov[0].iov_base = buf;
    f.iov[0].iov_len = PME_ETH_HLEN + sizeof(*wh) + sublen;
    f.iovcnt = 1;
    seal(ep, &f, wh);
    int n = ep->dev->ops->send(ep->dev, &f, 1);
    if (n == 1)
        count_tx(ep, p, &f);
    switch (type) {
    case PME_T_ACK: ep->ctr->ack_tx++; break;
    case PME_T_LOSE: ep->ctr->lose_tx++; p->ctr->lose_tx++; break;
    case PME_T_STOP: ep->ctr->stop_tx++; p->ctr->stop_tx++; break;
    case PME_T_GO: ep->ctr->go_tx++; p->ctr->go_tx++; break;
    case PME_T_CREDIT: ep->ctr->credit_tx++; break;
    default: break;
    }
    return n == 1 ? PME_OK : PME_EAGAIN;
}

void pme_tx_hello(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_NEW) {
        uint32_t isn;
        if (getrandom_u32(&isn))
            isn = (uint32_t)ep->now ^ ep->incarnation;
        p->snd_una = p->snd_nxt = p->snd_max = isn;
        p->tx_state = TX_HELLO;
        p->hello_tries = 0;
        p->rto_us = ep->cfg.rto_us;
    }
    struct pme_wire_hello h = {
        .incarnation = htonl(ep->incarnation),
        .first_seq = htonl(p->snd_una),
        .max_frame = htons((uint16_t)ep->mtu),
    };
    p->hello_tries++;
    pme_tx_ctrl(ep, idx, PME_T_HELLO, &h, sizeof(h));
    pme_timer_arm_rto(ep, idx);
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
        struct pme_sendreq *req = m->req;
        uint64_t off = (uint64_t)fi * m->frag;
        plen = m->len - off < m->frag ? (size_t)(m->len - off) : m->frag;
        struct pme_wire_rdata rd = {htonl(m->rndv_id), 0, htobe64(off)};
        memcpy(sub, &rd, sizeof(rd));
        sublen = sizeof(rd);
        /* Gather straight from the caller's buffer; a very fragmented iovec that does
         * not fit the device's gather list goes through a bounce buffer. */
        pme_iov_cursor_seek(&req->cur, off);
        int n = pme_iov_cursor_slice(&req->cur, plen, &f->iov[1], PME_DEV_MAX_IOV - 1);
        if (n < 0) {
            uint8_t *b = bounce_buf(ep, slot);
            if (!b)
                return PME_ERR_NOMEM;
            size_t done = 0;
            while (done < plen) {
                struct iovec piece;
                pme_iov_cursor_slice(&req->cur, plen - done, &piece, 1);
                memcpy(b + done, piece.iov_base, piece.iov_len);
                done += piece.iov_len;
            }
            f->iov[1].iov_base = b;
            f->iov[1].iov_len = plen;
            n = 1;
        }
        f->iovcnt = 1 + n;
        if (flags & PME_F_LAST)
            flags |= PME_F_ACK_REQ; /* the sender's completion waits on this ACK */
        break;
    }
    default: /* NOP */
        break;
    }
    struct pme_wire_hdr *wh = put_hdrs(ep, p, buf, m->type, seq, flags, sublen + plen);
    wh->aux = htons(m->aux);
    f->iov[0].iov_base = buf;
    f->iov[0].iov_len = PME_ETH_HLEN + sizeof(*wh) + sublen;
    seal(ep, f, wh);
    ep->batch_seq[slot] = seq;
    return PME_OK;
}

/* Send the batch; frames the device did not take are rewound and go again later. */
void pme_tx_flush(struct pme_ep *ep)
{
    if (!ep->nbatch)
        return;
    struct pme_peer *p = pme_peer_get(ep, ep->batch_peer);
    int n = ep->dev->ops->send(ep->dev, ep->batch, ep->nbatch);
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
        pme_tx_rewind(ep, p, ep->batch_seq[n]);
    }
    ep->nbatch = 0;
}

/* Move the cursor so that the next frame sent is `seq` (back after a loss, forward
 * after a late ACK). */
void pme_tx_rewind(struct pme_ep *ep, struct pme_peer *p, uint32_t seq)
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

/* The offer of a rendezvous send, holding its own copy of what it offers. */
static struct pme_txmsg *rts_new(struct pme_ep *ep, const struct pme_sendreq *req)
{
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_RTS, req->hdr_len);
    if (m) {
        m->send_id = req->id;
        m->hdr_len = req->hdr_len;
        m->len = req->total;
        memcpy(m->data, req->hdr, req->hdr_len);
    }
    return m;
}

/* An eager message larger than all the credit this peer will ever grant: offer it
 * by rendezvous from our copy instead (the sender already counted it complete). */
static void convert_to_rndv(struct pme_ep *ep, struct pme_peer *p, pme_peer_t idx,
                            struct pme_txmsg *m)
{
    struct pme_sendreq *req = calloc(1, sizeof(*req) + sizeof(struct iovec));
    uint32_t id = req ? pme_slots_put(&ep->sendreqs, req) : 0;
    if (!id) {
        free(req);
        return; /* try again at the next pump */
    }
    req->state = SREQ_WAIT_CTS;
    req->no_event = 1;
    req->peer = idx;
    req->id = id;
    req->hdr_len = m->hdr_len;
    req->hdr = m->data;
    req->total = m->total - m->hdr_len;
    req->iov = (struct iovec *)(req + 1);
    req->iov[0].iov_base = m->data + m->hdr_len;
    req->iov[0].iov_len = req->total;
    pme_iov_cursor_init(&req->cur, req->iov, 1);
    req->owned = m;
    req->owned_bytes = m->total;
    struct pme_txmsg *rts = rts_new(ep, req);
    if (!rts) {
        pme_slots_del(&ep->sendreqs, id);
        free(req);
        return;
    }
    p->rndv_out++;
    /* Put the offer where m was. */
    rts->next = m->next;
    if (p->q_head == m) {
        p->q_head = rts;
    } else {
        struct pme_txmsg *prev = p->q_head;
        while (prev->next != m)
            prev = prev->next;
        prev->next = rts;
    }
    if (p->q_tail == m)
        p->q_tail = rts;
    p->cur = rts;
    m->next = NULL;
}

void pme_tx_pump(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_NEW) {
        if (p->q_head)
            pme_tx_hello(ep, idx);
        return;
    }
    if (p->tx_state != TX_OPEN || ep->tx_blocked)
        return;
    if (ep->nbatch && ep->batch_peer != idx)
        pme_tx_flush(ep);
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
                    convert_to_rndv(ep, p, idx, m);
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
            pme_tx_flush(ep);
            ep->batch_snd_max = p->snd_max;
        }
        if (ep->tx_blocked)
            break;
    }
    pme_tx_flush(ep);
    if (pme_peer_has_inflight(p) && (!p->rto_deadline || p->keepalive_armed))
        pme_timer_arm_rto(ep, idx);
}

void pme_tx_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m)
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
static void retire(struct pme_ep *ep, struct pme_txmsg *m)
{
    switch (m->type) {
    case PME_T_DATA:
        ep->tx_used -= m->total;
        break;
    case PME_T_RDATA:
        pme_sendreq_complete(ep, m->req, PME_OK);
        break;
    default:
        break;
    }
    pme_txmsg_free(ep, m);
}

/* ACK(k): every frame up to k arrived in order. */
void pme_tx_ack(struct pme_ep *ep, pme_peer_t idx, uint32_t ack)
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
        retire(ep, m);
    }
    if (pme_seq_before(p->snd_nxt, una))
        pme_tx_rewind(ep, p, una);
    if (p->cur)
        pme_peer_mark_dirty(ep, idx); /* the window opened: send more after this batch */
    /* Progress: the backoff starts over and the timer restarts from now. */
    p->rto_us = pme_rto_base(ep, p);
    p->rto_deadline = 0;
    pme_timer_rearm(ep, idx);
}

/* ---- pme_send ---- */

int pme_send(pme_ep_t *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
             const struct iovec *iov, int iovcnt, unsigned flags, void *ctx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p || iovcnt < 0 || (iovcnt && !iov) || (hdr_len && !hdr) ||
        hdr_len > pme_ep_max_hdr(ep))
        return PME_ERR_INVAL;
    if (p->tx_state == TX_FAILED)
        return p->fail_status;
    ep->now = pme_now_ns();
    uint64_t data_len = pme_iov_total(iov, iovcnt);
    uint64_t total = hdr_len + data_len;

    if (total <= ep->cfg.eager_max) {
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
        pme_tx_enqueue(ep, idx, m);
        pme_tx_pump(ep, idx);
        if (flags & PME_SEND_NO_EVENT)
            return PME_DONE;
        struct pme_event *e = pme_evq_push(ep, PME_EV_SEND_DONE, PME_OK, idx);
        e->ctx = ctx;
        return PME_OK;
    }

    size_t bytes = sizeof(struct pme_sendreq) + (size_t)iovcnt * sizeof(struct iovec) + hdr_len;
    struct pme_sendreq *req = calloc(1, bytes);
    uint32_t id = req ? pme_slots_put(&ep->sendreqs, req) : 0;
    if (!id) {
        free(req);
        return PME_ERR_NOMEM;
    }
    req->state = SREQ_WAIT_CTS;
    req->peer = idx;
    req->id = id;
    req->ctx = ctx;
    req->total = data_len;
    req->iov = (struct iovec *)(req + 1);
    memcpy(req->iov, iov, (size_t)iovcnt * sizeof(*iov));
    req->hdr = (uint8_t *)(req->iov + iovcnt);
    req->hdr_len = (uint16_t)hdr_len;
    if (hdr_len)
        memcpy(req->hdr, hdr, hdr_len);
    pme_iov_cursor_init(&req->cur, req->iov, iovcnt);
    struct pme_txmsg *m = rts_new(ep, req);
    if (!m) {
        pme_slots_del(&ep->sendreqs, id);
        free(req);
        return PME_ERR_NOMEM;
    }
    p->rndv_out++;
    ep->ctr->tx_rndv++;
    p->ctr->tx_msgs++;
    pme_tx_enqueue(ep, idx, m);
    pme_tx_pump(ep, idx);
    return PME_OK;
}
