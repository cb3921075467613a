// SPDX-License-Identifier: BSD-3-Clause
/*
 * link_tx.c - the sending half of Go-Back-N for PM, one channel per rail.
 *
 * Each rail of a peer has one queue of sequenced items (eager messages, rendezvous
 * offers and answers on the primary rail; rendezvous data streams, or pieces of them
 * when the peer has several rails: rails.c decides). Frame i of an item is always
 * rebuilt the same way from the item itself, so nothing is kept per frame: after a
 * STOP, a timeout or a LOSE that names no frames the rail's cursor simply moves back
 * to its first unacknowledged frame (Appendix B, S2); the frames a LOSE names (the
 * receiver holds those after them) are rebuilt alone, ahead of the cursor. Items
 * leave the queue when their last frame is acknowledged.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "counters_layout.h"
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

uint32_t pme_link_data_room(const struct pme_peer *p)
{
    return frag_bytes(p, PME_T_DATA);
}

/* Fix an item's place in its rail's sequence space the first time it goes out. */
static void start_msg(const struct pme_peer *p, struct pme_rail *r, struct pme_txmsg *m)
{
    m->started = 1;
    m->first_seq = r->snd_nxt;
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

/* Build frame `fi` of item m on rail k into batch slot `slot`, with the caller's flags
 * and those the frame itself calls for, which *flagsp returns. */
static int build_frame(struct pme_ep *ep, struct pme_peer *p, unsigned k, struct pme_txmsg *m,
                       uint32_t fi, int slot, uint16_t *flagsp)
{
    uint16_t flags = *flagsp;
    struct pme_rail *r = &p->rail[k];
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
        struct pme_wire_rts rts = {htonl(m->send_id), htons(m->hdr_len), 0, htobe64(m->len)};
        memcpy(sub, &rts, sizeof(rts));
        sublen = sizeof(rts);
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
        uint64_t in = (uint64_t)fi * m->frag, off = m->base + in;
        plen = m->len - in < m->frag ? (size_t)(m->len - in) : m->frag;
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
        if (m->aux == PME_RMA_BUNDLE) {
            /* One frame of records laid out when queued (rma_bundle.c); a request among
             * them asks for the ACK its origin completes on. */
            plen = m->total;
            f->iov[1].iov_base = m->data;
            f->iov[1].iov_len = plen;
            f->iovcnt = 2;
            if (m->nrec > m->rma_answers)
                flags |= PME_F_ACK_REQ;
            break;
        }
        /* The first frame's sub-header, its offset advanced past the frames before. */
        struct pme_wire_rma rq;
        memcpy(&rq, m->data, sizeof(rq));
        uint64_t off = (uint64_t)fi * m->frag;
        plen = m->len - off < m->frag ? (size_t)(m->len - off) : m->frag;
        rq.offset = htobe64(be64toh(rq.offset) + off);
        memcpy(sub, &rq, sizeof(rq));
        sublen = sizeof(rq);
        if (plen && gather(ep, slot, f, m->cur, off, plen))
            return PME_ERR_NOMEM;
        if ((flags & PME_F_LAST) && !pme_wire_rma_is_answer(rq.op))
            flags |= PME_F_ACK_REQ; /* a request: the origin's completion waits on it */
        break;
    }
    default: /* NOP */
        break;
    }
    struct pme_wire_hdr *wh = pme_wire_start(buf, &ep->dself[r->dev], r->mac, p->node,
                                             p->ep_id, m->type, sublen + plen);
    wh->rail = (uint8_t)k;
    wh->seq = htonl(seq);
    wh->flags = htons(flags);
    wh->aux = htons(m->aux);
    wh->order = htonl(m->order);
    pme_link_fill_rx_state(ep, p, k, wh);
    f->iov[0].iov_base = buf;
    f->iov[0].iov_len = PME_ETH_HLEN + sizeof(*wh) + sublen;
    pme_wire_seal(&ep->keys, &ep->self, pme_link_next_nonce(ep), f);
    ep->batch_seq[slot] = seq;
    *flagsp = flags;
    return PME_OK;
}

/* Sleepers wait on the epoll set of the devices: a full device must wake them when it
 * has room again, and only then (a writable device would wake them at once). */
static void want_room(struct pme_ep *ep, unsigned dev, bool on)
{
    if (ep->wait_fd < 0)
        return;
    int fd = ep->devs[dev]->ops->fd(ep->devs[dev]);
    struct epoll_event e = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u32 = dev};
    if (fd >= 0)
        epoll_ctl(ep->wait_fd, EPOLL_CTL_MOD, fd, &e);
}

/* Send the batch; frames the device did not take are rewound and go again later. */
void pme_link_flush(struct pme_ep *ep)
{
    if (!ep->nbatch)
        return;
    struct pme_peer *p = pme_peer_get(ep, ep->batch_peer);
    struct pme_rail *r = &p->rail[ep->batch_rail];
    struct pme_dev *dev = ep->devs[r->dev];
    int n = dev->ops->send(dev, ep->batch, ep->nbatch);
    if (n < 0) {
        /* The device refused (interface went down...). The frames count as lost:
         * Go-Back-N resends them, and the rail's or the peer's timeout ends it if it
         * lasts. */
        ep->ctr->tx_errors++;
        n = ep->nbatch;
    }
    for (int i = 0; i < n; i++) {
        count_tx(ep, p, &ep->batch[i]);
        /* A retransmission is a frame sent again, counted when the device takes it: a
         * frame that a full device refused goes later as a first sending. (Counted when
         * built, a blocked sender's every retry of the same batch counted once more:
         * more retransmissions than frames sent, on a link shaped to 1 Gbit/s.) */
        if (pme_seq_before(ep->batch_seq[i], ep->batch_snd_max)) {
            ep->ctr->retransmits++;
            p->ctr->retransmits++;
            ep->shm->ifs[r->dev].retransmits++;
        }
    }
    ep->shm->ifs[r->dev].tx_frames += (uint64_t)n;
    if (n < ep->nbatch) {
        /* Frames never sent are not retransmissions when they go later. Only this
         * device waits: the other rails go on. */
        if (ep->ndev > 1 && !(ep->blocked_devs & (1u << r->dev)))
            want_room(ep, r->dev, true);
        ep->blocked_devs |= 1u << r->dev;
        /* What has gone out: everything before the batch, and the batch up to its
         * first refused frame. (Kept where the batch began, frames of a batch that ran
         * from resent frames into new ones and was refused in its resent part counted
         * as sent: their first sending was then taken for a resend.) */
        uint32_t sent_end = pme_seq_after(ep->batch_snd_max, ep->batch_seq[n])
                                ? ep->batch_snd_max
                                : ep->batch_seq[n];
        if (pme_seq_after(r->snd_max, sent_end))
            r->snd_max = sent_end;
        if (r->rtt_timing && !pme_seq_before(r->rtt_seq, ep->batch_seq[n]))
            r->rtt_timing = false;
        pme_link_rewind(r, ep->batch_seq[n]);
    }
    ep->nbatch = 0;
}

/* The item that frame seq of the rail belongs to, and its index in it: NULL when seq
 * is where no frame has been sent yet. */
static struct pme_txmsg *item_of(const struct pme_rail *r, uint32_t seq, uint32_t *fi)
{
    for (struct pme_txmsg *m = r->q_head; m && m->started; m = m->next)
        if (pme_seq_in(seq, m->first_seq, m->first_seq + m->nframes)) {
            *fi = seq - m->first_seq;
            return m;
        }
    return NULL;
}

/* Move the rail's cursor so that the next frame sent is `seq` (back after a loss,
 * forward after a late ACK). Everything from seq goes again in order, so no frame
 * waits to be resent alone any more. */
void pme_link_rewind(struct pme_rail *r, uint32_t seq)
{
    r->snd_nxt = seq;
    r->resend_lo = r->resend_hi;
    uint32_t fi;
    struct pme_txmsg *m = item_of(r, seq, &fi);
    if (m) {
        r->cur = m;
        r->cur_frame = fi;
        return;
    }
    /* seq is where no frame has been sent yet: the first unstarted item. */
    for (m = r->q_head; m && m->started; m = m->next)
        ;
    r->cur = m;
    r->cur_frame = 0;
}

void pme_link_resend(struct pme_ep *ep, pme_peer_t idx, unsigned k, uint32_t first,
                     uint32_t end)
{
    struct pme_rail *r = &pme_peer_get(ep, idx)->rail[k];
    /* Only frames sent and not acknowledged: what the cursor has not reached (again)
     * goes anyway, and a range beyond what we sent names nothing of ours. */
    if (pme_seq_before(first, r->snd_una))
        first = r->snd_una;
    if (pme_seq_after(end, r->snd_nxt))
        end = r->snd_nxt;
    if (!pme_seq_before(first, end))
        return;
    if (r->resend_lo == r->resend_hi) {
        r->resend_lo = first;
        r->resend_hi = end;
    } else {
        /* One range per rail: two gaps become the span over both, which resends the
         * frames between them too. Only while the device is full: else a range goes at
         * once, below. */
        if (pme_seq_before(first, r->resend_lo))
            r->resend_lo = first;
        if (pme_seq_after(end, r->resend_hi))
            r->resend_hi = end;
    }
    /* Now, before the next LOSE of this batch of received frames names another gap. */
    pme_link_pump_resends(ep, idx, k);
}

/* An eager message takes its credit when it first goes out (once: an item that moves
 * to another rail keeps what it took). False when it must wait. */
static bool take_credit(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p,
                        struct pme_txmsg *m)
{
    if (m->charged)
        return true;
    if (pme_credit_room(p->credit_limit, p->credit_used) < m->cost) {
        if (!p->credit_stalled) {
            p->credit_stalled = true;
            ep->ctr->credit_stalls++;
            p->ctr->credit_stalls++;
            pme_timer_rearm(ep, idx);
        }
        return false;
    }
    p->credit_used += m->cost;
    m->charged = 1;
    return true;
}

/* ---- small messages gathering (PME_COALESCE_AFTER) ----
 *
 * A small message leaves in the call that sends it unless coalesce_after frames of the
 * peer's in-order rail already wait for an acknowledgement. Then the item at the head
 * of what the rail has not sent, a small message with room for others (eager.c), waits
 * and the next small messages to the peer join it: it leaves as one bundle when the
 * acknowledgement comes (the frame that reached the count asked for it at once), when
 * the caller waits, idles or asks (pme_link_send_gathered), or at the latest
 * coalesce_us after it began to wait, sent by the liveness helper while the caller is
 * away. Only a sender that outpaces its peer's acknowledgements gathers; one that sends
 * a message or two and computes never waits (Nagle's algorithm, which held every
 * message behind any frame in flight until the next call, did). The message layer
 * marks the items that may gather (may_gather): small messages and bundles of our own
 * one-sided operations, never answers, which go with the pass that made them. */

static bool gathers(const struct pme_ep *ep, const struct pme_rail *r, const struct pme_txmsg *m)
{
    return m->may_gather && !m->started && !ep->gathering_release && !r->probe &&
           ep->cfg.coalesce_after && r->snd_nxt - r->snd_una >= ep->cfg.coalesce_after;
}

static void gathering_begins(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p)
{
    if (p->gathering)
        return;
    p->gathering = true;
    pme_idxvec_push(&ep->gathering, idx);
    if (!ep->gathering_since_ns) {
        /* (read by the helper without the lock, to know when to wake) */
        __atomic_store_n(&ep->gathering_since_ns, ep->now, __ATOMIC_RELAXED);
        ep->gathering_tell_helper = true; /* when the caller leaves (eplock.h) */
    }
}

/* The peer's gathered bundle leaves (or it failed): when no peer gathers any more, the
 * endpoint stops counting. */
static void gathering_ends(struct pme_ep *ep, struct pme_peer *p)
{
    if (!p->gathering)
        return;
    p->gathering = false;
    for (uint32_t i = 0; i < ep->gathering.n; i++)
        if (pme_peer_get(ep, ep->gathering.v[i])->gathering)
            return;
    ep->gathering.n = 0;
    __atomic_store_n(&ep->gathering_since_ns, 0, __ATOMIC_RELAXED);
}

bool pme_link_small_waits(const struct pme_ep *ep, const struct pme_peer *p)
{
    const struct pme_rail *r = &p->rail[p->primary];
    if (r->cur || r->state != RAIL_OPEN || r->stopped || p->credit_stalled ||
        (ep->blocked_devs & (1u << r->dev)))
        return true;
    return ep->cfg.coalesce_after && r->snd_nxt - r->snd_una >= ep->cfg.coalesce_after;
}

void pme_link_send_gathered(struct pme_ep *ep)
{
    if (!ep->gathering.n)
        return;
    ep->gathering_release = true;
    for (uint32_t i = 0; i < ep->gathering.n; i++) {
        pme_peer_t idx = ep->gathering.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        if (p->gathering && p->tx_state == TX_OPEN)
            pme_link_pump(ep, idx);
        p->gathering = false;
    }
    ep->gathering_release = false;
    ep->gathering.n = 0;
    __atomic_store_n(&ep->gathering_since_ns, 0, __ATOMIC_RELAXED);
}

/* Frames built from here on go into a batch of rail k of the peer (it sends the batch
 * of another rail first). */
static void batch_begin(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_rail *r = &pme_peer_get(ep, idx)->rail[k];
    if (ep->nbatch && (ep->batch_peer != idx || ep->batch_rail != k))
        pme_link_flush(ep);
    if (!ep->nbatch)
        ep->batch_snd_max = r->snd_max;
    ep->batch_peer = idx;
    ep->batch_rail = (uint8_t)k;
}

/* The frames a LOSE named, each alone: the receiver holds the ones after them. The
 * last asks for an ACK at once: it fills the gap, and the ACK then covers what was
 * held too. */
static void pump_resends(struct pme_ep *ep, struct pme_peer *p, unsigned k)
{
    struct pme_rail *r = &p->rail[k];
    while (r->resend_lo != r->resend_hi && !(r->stopped && !r->probe) &&
           !(ep->blocked_devs & (1u << r->dev))) {
        uint32_t seq = r->resend_lo, fi;
        struct pme_txmsg *m = item_of(r, seq, &fi);
        if (!m) {
            r->resend_lo = r->resend_hi; /* (ACKs trim the range: not reached) */
            break;
        }
        uint16_t flags = seq + 1 == r->resend_hi ? PME_F_ACK_REQ : 0;
        if (build_frame(ep, p, k, m, fi, ep->nbatch, &flags))
            break;
        if (r->rtt_timing && !pme_seq_before(r->rtt_seq, seq))
            r->rtt_timing = false; /* Karn: the timed frame's ACK waits for this resend */
        ep->nbatch++;
        r->resend_lo++;
        if (ep->nbatch == PME_TX_BATCH) {
            pme_link_flush(ep);
            ep->batch_snd_max = r->snd_max;
        }
    }
}

/* Send what rail k of the peer may: frames a LOSE named, its queue, then pieces of the
 * peer's stripes, as far as its window, STOP and its device allow. */
static void pump_rail(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p, unsigned k)
{
    struct pme_rail *r = &p->rail[k];
    if (r->state != RAIL_OPEN || (ep->blocked_devs & (1u << r->dev)))
        return;
    if (!r->cur && !p->stripe_head && r->resend_lo == r->resend_hi)
        return;
    batch_begin(ep, idx, k);
    pump_resends(ep, p, k);
    for (;;) {
        if (ep->blocked_devs & (1u << r->dev))
            break;
        if (r->stopped && !r->probe)
            break;
        if (r->snd_nxt - r->snd_una >= ep->cfg.window && !r->probe) {
            ep->ctr->window_stalls++;
            break;
        }
        if (!r->cur) {
            struct pme_txmsg *piece =
                p->stripe_head ? pme_stripe_carve(ep, p, frag_bytes(p, PME_T_RDATA)) : NULL;
            if (!piece)
                break;
            pme_rail_enqueue(p, k, piece);
        }
        struct pme_txmsg *m = r->cur;
        if (gathers(ep, r, m)) {
            gathering_begins(ep, idx, p);
            break;
        }
        if (!m->started) {
            if (m->type == PME_T_DATA) {
                if (m->cost > p->credit_grant) {
                    /* It can never fit this peer's credit: the message layer changes
                     * its form (it failed to when the grant became known). */
                    ep->up->credit_known(ep, idx);
                    if (r->cur == m)
                        break;
                    continue;
                }
                if (!take_credit(ep, idx, p, m))
                    break;
            }
            if (m->may_gather)
                gathering_ends(ep, p);
            start_msg(p, r, m);
        }
        uint16_t flags = 0;
        if (r->probe || r->snd_nxt + 1 - r->snd_una >= ep->cfg.window)
            flags |= PME_F_ACK_REQ;
        /* The message or one-sided operation that fills what may wait for an
         * acknowledgement asks for it at once: the ones behind it gather until it comes. */
        if ((m->type == PME_T_DATA || m->type == PME_T_RMA) && ep->cfg.coalesce_after &&
            r->snd_nxt + 1 - r->snd_una == ep->cfg.coalesce_after)
            flags |= PME_F_ACK_REQ;
        r->probe = false;
        if (build_frame(ep, p, k, m, r->cur_frame, ep->nbatch, &flags))
            break;
        if (pme_seq_before(r->snd_nxt, r->snd_max)) {
            r->rtt_timing = false; /* Karn: an ACK after a resend times nothing */
        } else if (!r->rtt_timing && (flags & PME_F_ACK_REQ)) {
            /* Time only frames the receiver answers at once (a full window, a probe,
             * the last of a piece of a stream or of a one-sided request): a delayed or
             * piggybacked ACK measures the receiver's program, not the round trip.
             * All of them: a stream held back by a full device never fills the window,
             * and without an estimate its timeout stays at the floor, shorter than its
             * acknowledgements' wait in the queues. */
            r->rtt_timing = true;
            r->rtt_seq = r->snd_nxt;
            r->rtt_sent_ns = ep->now;
        }
        ep->nbatch++;
        r->snd_nxt++;
        if (pme_seq_after(r->snd_nxt, r->snd_max))
            r->snd_max = r->snd_nxt;
        if (++r->cur_frame == m->nframes) {
            r->cur = m->next;
            r->cur_frame = 0;
        }
        if (ep->nbatch == PME_TX_BATCH) {
            pme_link_flush(ep);
            ep->batch_snd_max = r->snd_max;
        }
    }
    pme_link_flush(ep);
    if (pme_rail_has_inflight(r) && !r->rto_deadline)
        pme_timer_arm_rto(ep, idx, k);
}

void pme_link_pump_resends(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    if (p->tx_state != TX_OPEN || r->state != RAIL_OPEN || r->resend_lo == r->resend_hi)
        return;
    if (ep->blocked_devs & (1u << r->dev))
        return; /* pme_link_resume pumps the peer when the device has room */
    batch_begin(ep, idx, k);
    pump_resends(ep, p, k);
    pme_link_flush(ep);
}

void pme_link_pump(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_NEW) {
        if (pme_peer_has_queued(p))
            pme_link_hello(ep, idx, 0);
        return;
    }
    if (p->tx_state != TX_OPEN)
        return;
    for (unsigned k = 0; k < p->nrails; k++)
        pump_rail(ep, idx, p, k);
}

void pme_rail_enqueue(struct pme_peer *p, unsigned k, struct pme_txmsg *m)
{
    struct pme_rail *r = &p->rail[k];
    m->next = NULL;
    if (r->q_tail)
        r->q_tail->next = m;
    else
        r->q_head = m;
    r->q_tail = m;
    if (!r->cur) {
        r->cur = m;
        r->cur_frame = 0;
    }
}

void pme_link_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (m->type == PME_T_RDATA) {
        pme_stripe_add(p, m);
        return;
    }
    if (!++p->tx_order)
        p->tx_order = 1; /* 0 means "no order number" on the wire */
    m->order = p->tx_order;
    pme_rails_choose_primary(ep, p);
    pme_rail_enqueue(p, p->primary, m);
}

struct pme_txmsg **pme_link_ordered_queue(struct pme_ep *ep, pme_peer_t idx,
                                          struct pme_txmsg ***tail, struct pme_txmsg ***cur)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[p->primary];
    *tail = &r->q_tail;
    *cur = &r->cur;
    return &r->q_head;
}

/* Free an item whose frames are all acknowledged, completing what it carried (a piece
 * completes its stream with the stream's last piece). */
static void retire(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m, int status)
{
    if (m->stripe) {
        pme_stripe_piece_done(ep, idx, m, status);
        return;
    }
    ep->up->item_done(ep, idx, m, status);
    pme_txmsg_free(ep, m);
}

/* The peer failed: every queued item and every stripe is done with its status. */
void pme_link_purge(struct pme_ep *ep, pme_peer_t idx, int status)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    for (unsigned k = 0; k < p->nrails; k++) {
        struct pme_rail *r = &p->rail[k];
        struct pme_txmsg *m = r->q_head;
        r->q_head = r->q_tail = r->cur = NULL;
        while (m) {
            struct pme_txmsg *next = m->next;
            retire(ep, idx, m, status);
            m = next;
        }
    }
    pme_stripes_purge(ep, idx, status);
}

/* ACK(k): every frame up to ack arrived in order on rail k. */
void pme_link_ack(struct pme_ep *ep, pme_peer_t idx, unsigned k, uint32_t ack)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    uint32_t una = ack + 1;
    if (!pme_seq_after(una, r->snd_una) || pme_seq_after(una, r->snd_max))
        return;
    r->snd_una = una;
    if (r->resend_lo != r->resend_hi && pme_seq_before(r->resend_lo, una))
        r->resend_lo = pme_seq_before(una, r->resend_hi) ? una : r->resend_hi;
    bool sampled = false;
    if (r->rtt_timing && pme_seq_after(una, r->rtt_seq)) {
        r->rtt_timing = false;
        pme_rtt_sample(r, ep->now - r->rtt_sent_ns);
        sampled = true;
    }
    while (r->q_head && r->q_head->started &&
           !pme_seq_after(r->q_head->first_seq + r->q_head->nframes, una)) {
        struct pme_txmsg *m = r->q_head;
        r->q_head = m->next;
        if (!r->q_head)
            r->q_tail = NULL;
        if (r->cur == m) {
            r->cur = m->next;
            r->cur_frame = 0;
        }
        retire(ep, idx, m, PME_OK);
    }
    if (pme_seq_before(r->snd_nxt, una))
        pme_link_rewind(r, una);
    if (r->cur || p->stripe_head)
        pme_peer_mark_dirty(ep, idx); /* the window opened: send more after this batch */
    /* Progress: the timer restarts from now. A new round-trip sample starts the backoff
     * over. An ACK after a resend times nothing (Karn), so it only halves the backoff:
     * starting over there made a timeout shorter than a slow rail's drain time (64
     * frames of 9000 bytes take 4.6 ms at 1 Gbit/s) fire before every ACK, resending the
     * whole window each time; keeping the backoff until the next sample made heavy loss,
     * where few frames get timed, wait out ever longer timeouts (t_stream's 20% drop ran
     * some 30 times slower). Halving lets the timeout settle near the drain time. */
    uint32_t base = pme_rto_base(ep, r);
    if (sampled || r->rto_us / 2 < base)
        r->rto_us = base;
    else
        r->rto_us /= 2;
    r->rto_deadline = 0;
    r->owed_since_ns = 0;
    pme_timer_rearm(ep, idx);
}

/* Which blocked devices may take frames again. Why ask first: a full device refuses a
 * batch again after it was built (headers, MACs over every payload), and a polling sender
 * built one on every pass while a link shaped to 1 Gbit/s drained; one poll() costs less.
 * A device without a descriptor, or one that reports an error, is tried: its send says. */
static uint32_t devs_with_room(struct pme_ep *ep)
{
    struct pollfd pfd[PME_MAX_DEVS];
    unsigned dev_of[PME_MAX_DEVS], n = 0;
    uint32_t room = 0;
    for (unsigned d = 0; d < ep->ndev; d++) {
        if (!(ep->blocked_devs & (1u << d)))
            continue;
        int fd = pme_dev_room_fd(ep->devs[d], true);
        if (fd < 0) {
            room |= 1u << d;
            continue;
        }
        pfd[n] = (struct pollfd){fd, POLLOUT, 0};
        dev_of[n++] = d;
    }
    if (n && poll(pfd, n, 0) > 0)
        for (unsigned i = 0; i < n; i++)
            if (pfd[i].revents)
                room |= 1u << dev_of[i];
    return room;
}

/* Resume every peer with work on the devices that have room again. */
void pme_link_resume(struct pme_ep *ep)
{
    uint32_t room = devs_with_room(ep);
    if (!room)
        return;
    if (ep->ndev > 1)
        for (unsigned d = 0; d < ep->ndev; d++)
            if (room & (1u << d))
                want_room(ep, d, false);
    ep->blocked_devs &= ~room;
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (p->tx_state == TX_OPEN && pme_peer_has_queued(p))
            pme_link_pump(ep, i);
    }
}
