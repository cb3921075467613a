// SPDX-License-Identifier: BSD-3-Clause
/*
 * link_rx.c - the receiving half: every frame is judged by the wire layer first
 * (addressing, job, length, MAC or CRC) and changes nothing until it passed; then
 * Go-Back-N for PM on the receiver (Appendix B), on each rail of its own: deliver only
 * the next frame in the rail's sequence; an older one is a duplicate (ACK again), a
 * newer one means a loss: it is held (held.h) and a LOSE names the frames missing
 * before it, so that the sender resends those alone; no buffer means STOP, and GO once
 * there is room. Items that must arrive in order carry the sender's order number: one
 * we took already (sent again over another rail after its first rail died) is
 * acknowledged and not delivered twice.
 *
 * A peer's frames must carry the incarnation we believe in (it answered our challenge:
 * link_hello.c) and, when frames are authenticated, a nonce we have not seen: a frame
 * of an old incarnation or a replayed one is dropped and counted before it is read.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "counters_layout.h"
#include "link.h"

static void count_verdict(struct pme_ep *ep, enum pme_wire_verdict v)
{
    switch (v) {
    case PME_WIRE_SHORT: ep->ctr->drop_short++; break;
    case PME_WIRE_NOT_MINE: ep->ctr->drop_not_mine++; break;
    case PME_WIRE_FOREIGN_JOB: ep->ctr->drop_foreign_key++; break;
    case PME_WIRE_BAD_HEADER: ep->ctr->drop_bad_header++; break;
    case PME_WIRE_BAD_CRC: ep->ctr->drop_crc++; break;
    case PME_WIRE_BAD_MAC: ep->ctr->drop_auth++; break;
    default: break;
    }
}

/* ---- another wire version ---- */

/* The peer that sent a NAK: by node when it said, else (a version 1 NAK) by MAC. */
static int nak_peer(struct pme_ep *ep, const uint8_t *f, const struct pme_wire_nak *nak,
                    pme_peer_t *idx)
{
    if (nak->src_node)
        return pme_peer_lookup(ep, nak->src_node, nak->src_ep, false, idx);
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (p->ep_id == nak->src_ep && !memcmp(p->rail0.mac, f + 6, 6)) {
            *idx = i;
            return PME_OK;
        }
    }
    return PME_ERR_INVAL;
}

/* A frame of another version. A peer's VERSION_NAK fails that peer with a clear message
 * (only an authenticated one when frames are authenticated: anybody can forge the
 * frozen part). Anything else is answered with our version, at most every 10 ms, so
 * that its sender can fail clearly instead of timing out. */
static void other_version(struct pme_ep *ep, uint8_t dev, const uint8_t *f, size_t n)
{
    struct pme_wire_nak nak;
    pme_peer_t idx;
    ep->ctr->drop_version++;
    if (pme_wire_nak_parse(&ep->keys, &ep->dself[dev], f, n, &nak)) {
        if (ep->keys.auth == PME_AUTH_MAC && !nak.authenticated) {
            ep->ctr->drop_auth++;
            return;
        }
        if (nak_peer(ep, f, &nak, &idx) != PME_OK)
            return;
        struct pme_peer *p = pme_peer_get(ep, idx);
        if (p->tx_state == TX_FAILED)
            return;
        pme_ep_set_error(ep,
                         "peer %08x/%u speaks PME wire version %u, this process speaks %d: "
                         "run every process of the job with the same PME build",
                         p->node, p->ep_id, nak.version, PME_WIRE_VERSION);
        pme_peer_fail(ep, idx, PME_ERR_VERSION);
        return;
    }
    if (n < PME_ETH_HLEN + 6 || (ep->version_nak_ns && ep->now - ep->version_nak_ns < 10000000u))
        return;
    ep->version_nak_ns = ep->now;
    uint8_t buf[PME_WIRE_NAK_BYTES < 60 ? 60 : PME_WIRE_NAK_BYTES];
    memset(buf, 0, sizeof(buf));
    pme_wire_nak_build(&ep->keys, &ep->dself[dev], pme_link_next_nonce(ep), f, PME_WIRE_VERSION,
                       buf);
    struct pme_dev_frame fr = {.iov = {{buf, sizeof(buf)}}, .iovcnt = 1};
    ep->devs[dev]->ops->send(ep->devs[dev], &fr, 1);
}

/* ---- sequenced frames ---- */

/* An in-order item's frame: whether to deliver it (its item is the one due), or take it
 * without delivering (an item we took already, sent again over another rail), or not
 * take it at all (an item ahead of the one due: that one is still on its way). */
enum { ORDER_DUE, ORDER_SEEN, ORDER_AHEAD };
static int order_check(const struct pme_peer *p, const struct pme_wire_hdr *wh)
{
    uint32_t order = ntohl(wh->order);
    if (!order || wh->type == PME_T_RDATA || wh->type == PME_T_NOP)
        return ORDER_DUE;
    if (order == p->rx_order)
        return ORDER_DUE;
    return pme_seq_before(order, p->rx_order) ? ORDER_SEEN : ORDER_AHEAD;
}

/* Take the frame that is due on its rail (rcv_nxt): deliver it, or say why not. False
 * when the rail's sequence did not move (no buffer: STOP; an item ahead of the one due). */
static bool take_due(struct pme_ep *ep, struct pme_link_in *r)
{
    struct pme_peer *p = r->p;
    struct pme_rail *rl = r->r;
    int order = order_check(p, r->wh);
    if (order == ORDER_AHEAD) {
        ep->ctr->drop_out_of_order++;
        p->ctr->drop_out_of_order++;
        rl->ack_now = true; /* the sender sends it again later */
        pme_peer_mark_dirty(ep, r->idx);
        return false;
    }
    int taken = r->wh->type == PME_T_NOP || order == ORDER_SEEN
                    ? 0
                    : ep->up->deliver(ep, r->idx, r->wh, (const uint8_t *)(r->wh + 1), r->len,
                                      r->flags);
    if (order == ORDER_SEEN) {
        ep->ctr->drop_duplicate++;
        p->ctr->drop_duplicate++;
    }
    if (taken == PME_RX_NO_BUFFER) {
        ep->ctr->drop_no_buffer++;
        p->ctr->drop_no_buffer++;
        /* The sender goes back to this frame and resends all after it: what we held
         * comes again. */
        pme_held_clear(&rl->held, ep->cfg.window, &ep->held_room);
        /* STOP once, and again to each probe while the pool stays full. */
        if (!rl->we_stopped || (r->flags & PME_F_ACK_REQ)) {
            if (!rl->we_stopped)
                ep->stopped_peers++;
            rl->we_stopped = true;
            pme_link_ctrl_rail(ep, r->idx, r->k, PME_T_STOP, NULL, 0);
        }
        return false;
    }
    rl->rcv_nxt++;
    rl->lose_sent = false;
    if (order == ORDER_DUE && ntohl(r->wh->order) && (r->flags & PME_F_LAST) &&
        r->wh->type != PME_T_RDATA && !++p->rx_order)
        p->rx_order = 1;
    if (rl->we_stopped) {
        /* A probe got through: there is room again, let the sender go on. */
        rl->we_stopped = false;
        ep->stopped_peers--;
        pme_link_ctrl_rail(ep, r->idx, r->k, PME_T_GO, NULL, 0);
        return true;
    }
    rl->unacked++;
    if ((r->flags & PME_F_ACK_REQ) || rl->unacked * 2 >= ep->cfg.window) {
        rl->ack_now = true;
        pme_peer_mark_dirty(ep, r->idx);
    } else {
        pme_timer_arm_ack(ep, r->idx, r->k);
    }
    return true;
}

static void send_lose(struct pme_ep *ep, pme_peer_t idx, unsigned k, uint32_t first,
                      uint32_t count)
{
    struct pme_wire_lose gap = {htonl(first), htonl(count)};
    pme_link_ctrl_rail(ep, idx, k, PME_T_LOSE, &gap, sizeof(gap));
}

/* A frame ahead of the one due: frames before it were lost (or are late). Hold it, and
 * name to the sender the frames missing between what we saw last and it; or, holding
 * nothing, drop it and ask for everything from the first missing frame (Go-Back-N). */
static void rx_after_gap(struct pme_ep *ep, struct pme_link_in *r, uint32_t seq)
{
    struct pme_peer *p = r->p;
    struct pme_rail *rl = r->r;
    /* A frame the kernel placed in the user's buffer is not held: only its headers are
     * here, and its place is checked as it arrives. Nor is one after a gap we answered
     * with Go-Back-N (lose_sent): everything from the gap comes again. */
    bool holdable = ep->cfg.hold_bytes && seq - rl->rcv_nxt < ep->cfg.window &&
                    !ep->devs[r->dev]->placed && !rl->lose_sent;
    uint32_t from = rl->held.n ? rl->held.high : rl->rcv_nxt; /* first frame not seen */
    enum pme_hold_result h =
        holdable ? pme_held_put(&rl->held, ep->cfg.window, &ep->held_room, seq, r->wh,
                                sizeof(*r->wh) + r->len)
                 : PME_HOLD_NO_ROOM;
    if (h == PME_HOLD_ALREADY) {
        ep->ctr->drop_duplicate++;
        p->ctr->drop_duplicate++;
        if (r->flags & PME_F_ACK_REQ)
            rl->name_gap = true;
        return;
    }
    if (h == PME_HOLD_NO_ROOM) {
        /* Go back N, once per gap: the sender resends everything from the first frame
         * missing, so what we hold would only come again (and out of room, frames
         * dropped here and never named would wait for the sender's timeout). */
        ep->ctr->drop_out_of_order++;
        p->ctr->drop_out_of_order++;
        pme_held_clear(&rl->held, ep->cfg.window, &ep->held_room);
        if (!rl->lose_sent) {
            rl->lose_sent = true;
            pme_link_ctrl_rail(ep, r->idx, r->k, PME_T_LOSE, NULL, 0);
        }
        return;
    }
    ep->ctr->rx_held++;
    bool named_first = false;
    if (pme_seq_after(seq, from)) {
        send_lose(ep, r->idx, r->k, from, seq - from);
        named_first = from == rl->rcv_nxt;
    }
    /* The sender waits for an answer to this one: if the LOSE of the first gap, or the
     * frames it named, were lost, naming it again now saves a timeout. */
    if ((r->flags & PME_F_ACK_REQ) && !named_first)
        rl->name_gap = true;
}

static void rx_in_sequence(struct pme_ep *ep, struct pme_link_in *r)
{
    struct pme_peer *p = r->p;
    struct pme_rail *rl = r->r;
    uint32_t seq = ntohl(r->wh->seq);
    if (!rl->rx_open) {
        ep->ctr->drop_unknown_peer++;
        return;
    }
    if (seq != rl->rcv_nxt) {
        if (pme_seq_before(seq, rl->rcv_nxt)) {
            /* It was sent again: our ACK may have been lost. */
            ep->ctr->drop_duplicate++;
            p->ctr->drop_duplicate++;
            rl->ack_now = true;
        } else {
            rx_after_gap(ep, r, seq);
        }
        pme_peer_mark_dirty(ep, r->idx);
        return;
    }
    if (rl->held.n) {
        /* A copy we hold of this frame is stale now: this one goes up. */
        struct pme_held_frame *copy = pme_held_take(&rl->held, ep->cfg.window, seq);
        if (copy)
            pme_held_release(copy, &ep->held_room);
    }
    if (take_due(ep, r) && rl->held.n) {
        pme_peer_mark_dirty(ep, r->idx); /* the frames held after it: after the batch */
        if (r->flags & PME_F_ACK_REQ)
            rl->name_gap = true; /* in case another gap remains after them */
    }
}

/* LOSE for the first gap of a rail: from the frame due to the first one held. */
static void name_first_gap(struct pme_ep *ep, pme_peer_t idx, unsigned k, struct pme_rail *rl)
{
    uint32_t s = pme_held_next(&rl->held, ep->cfg.window, rl->rcv_nxt);
    if (s != rl->rcv_nxt)
        send_lose(ep, idx, k, rl->rcv_nxt, s - rl->rcv_nxt);
}

/* Deliver the frames held on the peer's rails that are due now that their gap filled,
 * and name the first gap left again if the peer asked for an answer meanwhile. After a
 * receive batch, not inside it: a device that placed a payload in the user's buffer
 * says so for the frame it is delivering, which none of these is. */
static void drain_held(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p)
{
    for (unsigned k = 0; k < p->nrails; k++) {
        struct pme_rail *rl = &p->rail[k];
        while (rl->held.n && rl->rx_open && p->tx_state != TX_FAILED) {
            struct pme_held_frame *f = pme_held_take(&rl->held, ep->cfg.window, rl->rcv_nxt);
            if (!f)
                break;
            struct pme_link_in r = {.wh = (const void *)f->frame, .len = f->len - sizeof(*r.wh),
                                    .idx = idx, .p = p, .dev = rl->dev, .k = (uint8_t)k,
                                    .known = true, .r = rl};
            r.flags = ntohs(r.wh->flags);
            bool moved = take_due(ep, &r);
            pme_held_release(f, &ep->held_room);
            if (!moved) {
                pme_held_clear(&rl->held, ep->cfg.window, &ep->held_room);
                break;
            }
        }
        if (rl->name_gap) {
            rl->name_gap = false;
            if (rl->held.n && rl->rx_open)
                name_first_gap(ep, idx, k, rl);
        }
    }
}

/* ---- control frames ---- */

/* The reverse direction's state rides on every frame of the incarnation we believe in
 * (but a HELLO_ACK's credit field is the initial grant, read by link_hello.c): the
 * credit is the peer's, the ACK the rail's. */
static void take_rx_state(struct pme_ep *ep, struct pme_link_in *r)
{
    struct pme_peer *p = r->p;
    if (!(r->flags & PME_F_ACK_VALID) || p->tx_state != TX_OPEN ||
        r->wh->type == PME_T_HELLO_ACK)
        return;
    uint32_t credit = ntohl(r->wh->credit);
    if (pme_seq_after(credit, p->credit_limit)) {
        p->credit_limit = credit;
        if (p->credit_stalled) {
            p->credit_stalled = false;
            p->peer_rto_us = ep->cfg.rto_us;
            pme_peer_mark_dirty(ep, r->idx);
        }
    }
    if (r->r->state == RAIL_OPEN)
        pme_link_ack(ep, r->idx, r->k, ntohl(r->wh->ack));
}

/* LOSE, STOP and GO name the first frame the peer lacks on their rail; one naming a
 * frame it has already acknowledged is stale (a later ACK overtook it) and is ignored:
 * acting on it would rewind below the first unacknowledged frame. */
static bool rewind_point(struct pme_link_in *r, uint32_t *next)
{
    *next = ntohl(r->wh->ack) + 1;
    return (r->flags & PME_F_ACK_VALID) && r->p->tx_state == TX_OPEN &&
           r->r->state == RAIL_OPEN && !pme_seq_before(*next, r->r->snd_una);
}

static void on_ping(struct pme_ep *ep, struct pme_link_in *r)
{
    if (r->len < sizeof(struct pme_wire_ping)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    const struct pme_wire_ping *in = (const void *)(r->wh + 1);
    if (r->wh->type == PME_T_PING) {
        struct pme_wire_ping out = {in->token, htonl(r->r->rcv_nxt), 0};
        pme_link_ctrl(ep, r->idx, PME_T_PONG, &out, sizeof(out));
        return;
    }
    if (r->p->ping_out && be64toh(in->token) == r->p->ping_token) {
        r->p->ping_out = false;
        r->p->peer_rto_us = ep->cfg.rto_us;
        pme_timer_rearm(ep, r->idx);
    }
}

/* The peer's endpoint is gone (it closed, or its kernel saw it die). If we were waiting
 * for it, that fails now; otherwise it is simply closed, quietly. */
static void on_bye(struct pme_ep *ep, struct pme_link_in *r)
{
    struct pme_peer *p = r->p;
    bool pending = pme_peer_has_queued(p) || p->rndv_in || p->rndv_out ||
                   p->tx_state == TX_HELLO;
    if (pending)
        pme_ep_set_error(ep, "peer %08x/%u closed its endpoint (its process ended or was "
                         "killed) while messages with it were in progress", p->node, p->ep_id);
    pme_peer_close(ep, r->idx, PME_ERR_PEER_DEAD, pending);
}

static void on_control(struct pme_ep *ep, struct pme_link_in *r)
{
    struct pme_peer *p = r->p;
    uint32_t next;
    switch (r->wh->type) {
    case PME_T_ACK:
        ep->ctr->ack_rx++;
        break;
    case PME_T_LOSE:
        ep->ctr->lose_rx++;
        p->ctr->lose_rx++;
        if (!rewind_point(r, &next))
            break;
        if (r->len >= sizeof(struct pme_wire_lose)) {
            const struct pme_wire_lose *gap = (const void *)(r->wh + 1);
            uint32_t first = ntohl(gap->first);
            pme_link_resend(ep, r->idx, r->k, first, first + ntohl(gap->count));
        } else if (pme_seq_before(next, r->r->snd_nxt)) {
            pme_link_rewind(r->r, next);
            pme_peer_mark_dirty(ep, r->idx);
        }
        break;
    case PME_T_STOP:
        ep->ctr->stop_rx++;
        p->ctr->stop_rx++;
        if (rewind_point(r, &next)) {
            r->r->stopped = true;
            if (pme_seq_before(next, r->r->snd_nxt))
                pme_link_rewind(r->r, next);
            pme_timer_arm_rto(ep, r->idx, r->k);
        }
        break;
    case PME_T_GO:
        ep->ctr->go_rx++;
        p->ctr->go_rx++;
        if (rewind_point(r, &next)) {
            r->r->stopped = false;
            if (pme_seq_before(next, r->r->snd_nxt))
                pme_link_rewind(r->r, next);
            pme_peer_mark_dirty(ep, r->idx);
        }
        break;
    case PME_T_CREDIT:
        ep->ctr->credit_rx++;
        break;
    case PME_T_CREDIT_REQ:
        if (p->rx_open)
            pme_link_ctrl(ep, r->idx, PME_T_CREDIT, NULL, 0);
        break;
    case PME_T_HELLO:
    case PME_T_HELLO_ACK:
        pme_link_on_hello(ep, r);
        break;
    case PME_T_PING:
    case PME_T_PONG:
        on_ping(ep, r);
        break;
    case PME_T_BYE:
        on_bye(ep, r);
        break;
    default:
        ep->ctr->drop_bad_header++;
        break;
    }
}

/* ---- every frame ---- */

/* Who sent it, and may it be heard: the incarnation we believe in, a rail of ours it may
 * use, a fresh nonce, not failed. Of any other incarnation only a HELLO or HELLO_ACK on
 * rail 0 is heard, by the handshake, which believes it only once it has answered our
 * challenge (link_hello.c): until then nothing else of it is taken, nor anything it
 * says of our connection (ACKs, credit) or of itself (its NICs), nor its frames as a
 * sign of life of the incarnation it would replace. */
static bool admit(struct pme_ep *ep, struct pme_link_in *r)
{
    const struct pme_wire_hdr *wh = r->wh;
    bool hello = wh->type == PME_T_HELLO || wh->type == PME_T_HELLO_ACK;
    /* Only an (authenticated, when frames are) HELLO on rail 0 makes a stranger a peer. */
    if (pme_peer_lookup(ep, ntohl(wh->src_node), ntohs(wh->src_ep),
                        wh->type == PME_T_HELLO && wh->rail == 0, &r->idx)) {
        ep->ctr->drop_unknown_peer++;
        return false;
    }
    r->p = pme_peer_get(ep, r->idx);
    r->k = wh->rail;
    /* Rail k joins device k at both ends: a frame of rail k > 0 comes in by device k. */
    if (r->k >= r->p->nrails || (r->k && r->dev != r->k)) {
        ep->ctr->drop_bad_header++;
        return false;
    }
    r->r = &r->p->rail[r->k];
    r->known = r->p->known && r->p->peer_incarnation == ntohl(wh->incarnation);
    if (!r->known && !hello) {
        ep->ctr->drop_stale++; /* an old incarnation's, or ahead of its HELLO */
        return false;
    }
    if (r->p->tx_state == TX_FAILED && r->known && wh->type != PME_T_HELLO) {
        /* A failed peer stays failed unless it comes back as a new incarnation. */
        ep->ctr->drop_unknown_peer++;
        return false;
    }
    /* A peer's kernel speaks for it only to answer a probe or to say it is gone. */
    bool kernel = r->flags & PME_F_KERNEL;
    if (kernel && wh->type != PME_T_PONG && wh->type != PME_T_BYE) {
        ep->ctr->drop_bad_header++;
        return false;
    }
    if (ep->keys.auth == PME_AUTH_MAC && r->known) {
        /* The kernel counts its frames apart from the process, and each rail's frames
         * come in the order of their own device: each has its own window, so that no
         * rail's nonces push another's out of it. */
        struct pme_replay *w = kernel ? &r->p->kreplay : &r->r->replay;
        uint64_t nonce = be64toh(wh->nonce);
        if (!pme_replay_fresh(w, nonce)) {
            ep->ctr->drop_replay++;
            return false;
        }
        pme_replay_mark(w, nonce);
    }
    return true;
}

void pme_link_rx(void *arg, const uint8_t *f, size_t n)
{
    const struct pme_rx_ctx *in = arg;
    struct pme_ep *ep = in->ep;
    /* A rendezvous payload the kernel device placed in the receiver's buffer. */
    const struct pme_dev_placed *placed = ep->devs[in->dev]->placed;
    ep->ctr->rx_frames++;
    ep->ctr->rx_bytes += n;
    ep->shm->ifs[in->dev].rx_frames++;
    enum pme_wire_verdict v =
        pme_wire_check_placed(&ep->keys, &ep->dself[in->dev], f, n, placed, ep->mtu);
    if (v == PME_WIRE_OTHER_VERSION) {
        other_version(ep, in->dev, f, n);
        return;
    }
    if (v != PME_WIRE_OK) {
        count_verdict(ep, v);
        return;
    }
    struct pme_link_in r = {.frame = f, .wh = (const void *)(f + PME_ETH_HLEN), .dev = in->dev};
    r.len = ntohs(r.wh->len);
    r.flags = ntohs(r.wh->flags);
    if (!admit(ep, &r))
        return;
    r.p->ctr->rx_frames++;
    r.p->ctr->rx_bytes += n;
    if (r.known) {
        r.p->last_rx_ns = r.r->last_rx_ns = ep->now;
        take_rx_state(ep, &r);
    }
    if (pme_wire_type_is_sequenced(r.wh->type))
        rx_in_sequence(ep, &r);
    else
        on_control(ep, &r);
}

/* After a batch of frames: send what the batch made due, once per peer: frames the
 * window now allows (they carry ACKs and credit along), ACKs each rail owes, then
 * credit if none of those carried it. */
void pme_link_after_batch(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->dirty.n; i++) {
        pme_peer_t idx = ep->dirty.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        p->dirty = false;
        if (p->tx_state == TX_FAILED)
            continue;
        drain_held(ep, idx, p);
        pme_link_pump(ep, idx);
        if (!p->rx_open)
            continue;
        for (unsigned k = 0; k < p->nrails; k++)
            if (p->rail[k].rx_open && p->rail[k].ack_now)
                pme_link_ctrl_rail(ep, idx, k, PME_T_ACK, NULL, 0);
        if (p->credit_granted - p->credit_sent >= (p->rx_grant + 1) / 2 &&
            p->credit_granted != p->credit_sent)
            pme_link_ctrl(ep, idx, PME_T_CREDIT, NULL, 0);
    }
    ep->dirty.n = 0;
}
