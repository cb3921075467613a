/*
 * link_rx.c - the receiving half: every frame is judged by the wire layer first
 * (addressing, job, length, MAC or CRC) and changes nothing until it passed; then
 * Go-Back-N for PM on the receiver (Appendix B): accept only the next frame in
 * sequence; an older one is a duplicate (ACK again), a newer one means a loss (one LOSE
 * per gap); no buffer means STOP, and GO once there is room.
 *
 * A peer's frames must carry the incarnation we know for it (its HELLO or HELLO_ACK
 * taught us) and, when frames are authenticated, a nonce we have not seen: a frame of
 * an old incarnation or a replayed one is dropped and counted before it is read.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "link.h"

/* A peer's own words, after the link accepted them. */
struct rx {
    const uint8_t *frame;
    const struct pme_wire_hdr *wh;
    size_t len;             /* bytes after the PME header */
    uint16_t flags;
    pme_peer_t idx;
    struct pme_peer *p;
    uint8_t dev;            /* the device it came in by */
};

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
        if (p->ep_id == nak->src_ep && !memcmp(p->mac, f + 6, 6)) {
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

/* ---- the handshake ---- */

/* A peer must take frames big enough for a header and some payload (fragment sizes
 * are computed from it). */
static bool max_frame_ok(const struct pme_wire_hello *h)
{
    return ntohs(h->max_frame) >= PME_WIRE_MIN_FRAME;
}

static void learn_incarnation(struct pme_peer *p, uint32_t inc)
{
    p->peer_incarnation = inc;
    p->known = true;
    memset(&p->replay, 0, sizeof(p->replay));
    memset(&p->kreplay, 0, sizeof(p->kreplay));
}

/* A new incarnation of a peer (or its first HELLO): start its receive direction.
 * Returns false when the HELLO must go unanswered (a peer we declared failed). */
static bool rx_open(struct pme_ep *ep, struct rx *r, const struct pme_wire_hello *h)
{
    struct pme_peer *p = r->p;
    uint32_t inc = ntohl(r->wh->incarnation);
    bool same = p->known && p->peer_incarnation == inc && p->rx_epoch;
    if (p->tx_state == TX_FAILED) {
        if (same)
            return false;
        pme_peer_revive(ep, r->idx); /* a restarted process: a fresh start */
    } else if (p->rx_open) {
        if (same)
            return true; /* a repeated HELLO: our HELLO_ACK was lost */
        /* The peer restarted: what we had with its old self is gone. */
        pme_peer_fail(ep, r->idx, PME_ERR_PEER_DEAD);
        pme_peer_revive(ep, r->idx);
    }
    if (!same)
        learn_incarnation(p, inc);
    p->rx_epoch++;
    p->rcv_nxt = ntohl(h->first_seq);
    p->rx_open = true;
    p->lose_sent = p->we_stopped = false;
    p->rx_grant = ep->up->peer_open(ep, r->idx);
    p->credit_granted = p->credit_consumed + p->rx_grant;
    uint16_t mf = ntohs(h->max_frame);
    if (mf < p->max_frame)
        p->max_frame = mf;
    return true;
}

static void on_hello(struct pme_ep *ep, struct rx *r)
{
    struct pme_peer *p = r->p;
    if (r->len < sizeof(struct pme_wire_hello)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    const struct pme_wire_hello *h = (const void *)(r->wh + 1);
    if (!max_frame_ok(h)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    p->features = ntohl(h->features);
    if (r->wh->type == PME_T_HELLO) {
        if (!rx_open(ep, r, h))
            return;
        struct pme_wire_hello a = {
            .echo = r->wh->incarnation,
            .max_frame = htons((uint16_t)ep->mtu),
            .nrails = 1,
            .features = htonl(PME_FEAT_RMA),
        };
        pme_link_ctrl(ep, r->idx, PME_T_HELLO_ACK, &a, sizeof(a));
        /* Open our direction too: answers (CTS, replies) need not wait a round trip. */
        if (p->tx_state == TX_NEW)
            pme_link_hello(ep, r->idx);
        return;
    }
    /* HELLO_ACK */
    if (p->tx_state != TX_HELLO || ntohl(h->echo) != ep->self.incarnation)
        return;
    uint32_t inc = ntohl(r->wh->incarnation);
    if (!p->known || p->peer_incarnation != inc)
        learn_incarnation(p, inc);
    uint16_t mf = ntohs(h->max_frame);
    if (mf < p->max_frame)
        p->max_frame = mf;
    p->credit_limit = ntohl(r->wh->credit);
    p->credit_used = 0;
    p->credit_grant = p->credit_limit;
    p->tx_state = TX_OPEN;
    p->rto_us = ep->cfg.rto_us;
    p->rto_deadline = 0;
    ep->up->credit_known(ep, r->idx);
    pme_peer_mark_dirty(ep, r->idx);
}

/* ---- sequenced frames ---- */

static void rx_in_sequence(struct pme_ep *ep, struct rx *r)
{
    struct pme_peer *p = r->p;
    uint32_t seq = ntohl(r->wh->seq);
    if (!p->rx_open) {
        ep->ctr->drop_unknown_peer++;
        return;
    }
    if (seq != p->rcv_nxt) {
        if (pme_seq_before(seq, p->rcv_nxt)) {
            /* It was sent again: our ACK may have been lost. */
            ep->ctr->drop_duplicate++;
            p->ctr->drop_duplicate++;
            p->ack_now = true;
        } else {
            ep->ctr->drop_out_of_order++;
            p->ctr->drop_out_of_order++;
            if (!p->lose_sent) {
                p->lose_sent = true;
                pme_link_ctrl(ep, r->idx, PME_T_LOSE, NULL, 0);
            }
        }
        pme_peer_mark_dirty(ep, r->idx);
        return;
    }
    int taken = r->wh->type == PME_T_NOP
                    ? 0
                    : ep->up->deliver(ep, r->idx, r->wh, (const uint8_t *)(r->wh + 1), r->len,
                                      r->flags);
    if (taken == PME_RX_NO_BUFFER) {
        ep->ctr->drop_no_buffer++;
        p->ctr->drop_no_buffer++;
        /* STOP once, and again to each probe while the pool stays full. */
        if (!p->we_stopped || (r->flags & PME_F_ACK_REQ)) {
            if (!p->we_stopped)
                ep->stopped_peers++;
            p->we_stopped = true;
            pme_link_ctrl(ep, r->idx, PME_T_STOP, NULL, 0);
        }
        return;
    }
    p->rcv_nxt++;
    p->lose_sent = false;
    if (p->we_stopped) {
        /* A probe got through: there is room again, let the sender go on. */
        p->we_stopped = false;
        ep->stopped_peers--;
        pme_link_ctrl(ep, r->idx, PME_T_GO, NULL, 0);
        return;
    }
    p->unacked++;
    if ((r->flags & PME_F_ACK_REQ) || p->unacked * 2 >= ep->cfg.window) {
        p->ack_now = true;
        pme_peer_mark_dirty(ep, r->idx);
    } else {
        pme_timer_arm_ack(ep, r->idx);
    }
}

/* ---- control frames ---- */

/* The reverse direction's state rides on every frame (but a HELLO_ACK's credit field is
 * the initial grant, read by on_hello). */
static void take_rx_state(struct pme_ep *ep, struct rx *r)
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
            pme_peer_mark_dirty(ep, r->idx);
        }
    }
    pme_link_ack(ep, r->idx, ntohl(r->wh->ack));
}

/* LOSE, STOP and GO name the first frame the peer lacks; one naming a frame it has
 * already acknowledged is stale (a later ACK overtook it) and is ignored: acting on it
 * would rewind below the first unacknowledged frame. */
static bool rewind_point(struct rx *r, uint32_t *next)
{
    *next = ntohl(r->wh->ack) + 1;
    return (r->flags & PME_F_ACK_VALID) && r->p->tx_state == TX_OPEN &&
           !pme_seq_before(*next, r->p->snd_una);
}

static void on_ping(struct pme_ep *ep, struct rx *r)
{
    if (r->len < sizeof(struct pme_wire_ping)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    const struct pme_wire_ping *in = (const void *)(r->wh + 1);
    if (r->wh->type == PME_T_PING) {
        struct pme_wire_ping out = {in->token, htonl(r->p->rcv_nxt), 0};
        pme_link_ctrl(ep, r->idx, PME_T_PONG, &out, sizeof(out));
        return;
    }
    if (r->p->ping_out && be64toh(in->token) == r->p->ping_token) {
        r->p->ping_out = false;
        pme_timer_rearm(ep, r->idx);
    }
}

/* The peer's endpoint is gone (it closed, or its kernel saw it die). If we were waiting
 * for it, that fails now; otherwise it is simply closed, quietly. */
static void on_bye(struct pme_ep *ep, struct rx *r)
{
    struct pme_peer *p = r->p;
    bool pending = p->q_head || pme_peer_has_inflight(p) || p->rndv_in || p->rndv_out ||
                   p->tx_state == TX_HELLO;
    if (pending)
        pme_ep_set_error(ep, "peer %08x/%u closed its endpoint (its process ended or was "
                         "killed) while messages with it were in progress", p->node, p->ep_id);
    pme_peer_close(ep, r->idx, PME_ERR_PEER_DEAD, pending);
}

static void on_control(struct pme_ep *ep, struct rx *r)
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
        if (rewind_point(r, &next) && pme_seq_before(next, p->snd_nxt)) {
            pme_link_rewind(ep, p, next);
            pme_peer_mark_dirty(ep, r->idx);
        }
        break;
    case PME_T_STOP:
        ep->ctr->stop_rx++;
        p->ctr->stop_rx++;
        if (rewind_point(r, &next)) {
            p->stopped = true;
            if (pme_seq_before(next, p->snd_nxt))
                pme_link_rewind(ep, p, next);
            pme_timer_arm_rto(ep, r->idx);
        }
        break;
    case PME_T_GO:
        ep->ctr->go_rx++;
        p->ctr->go_rx++;
        if (rewind_point(r, &next)) {
            p->stopped = false;
            if (pme_seq_before(next, p->snd_nxt))
                pme_link_rewind(ep, p, next);
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
        on_hello(ep, r);
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

/* Who sent it, and may it be heard: known incarnation, fresh nonce, not failed. */
static bool admit(struct pme_ep *ep, struct rx *r)
{
    const struct pme_wire_hdr *wh = r->wh;
    bool hello = wh->type == PME_T_HELLO || wh->type == PME_T_HELLO_ACK;
    /* Only an (authenticated, when frames are) HELLO makes a stranger a peer. */
    if (pme_peer_lookup(ep, ntohl(wh->src_node), ntohs(wh->src_ep), wh->type == PME_T_HELLO,
                        &r->idx)) {
        ep->ctr->drop_unknown_peer++;
        return false;
    }
    r->p = pme_peer_get(ep, r->idx);
    static const uint8_t no_mac[6];
    if (!r->p->routed && !memcmp(r->p->mac, no_mac, 6)) {
        /* A peer that found us, with no route to it: answer where it spoke. */
        memcpy(r->p->mac, r->frame + 6, 6);
        r->p->dev = r->dev;
    }
    uint32_t inc = ntohl(wh->incarnation);
    bool same = r->p->known && r->p->peer_incarnation == inc;
    if (!same && !hello) {
        ep->ctr->drop_stale++; /* an old incarnation's, or ahead of its HELLO */
        return false;
    }
    if (r->p->tx_state == TX_FAILED && wh->type != PME_T_HELLO) {
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
    if (ep->keys.auth == PME_AUTH_MAC) {
        /* The kernel counts its frames apart from the process: its nonces must not
         * push the process's out of the window. */
        struct pme_replay *w = kernel ? &r->p->kreplay : &r->p->replay;
        uint64_t nonce = be64toh(wh->nonce);
        if (same && !pme_replay_fresh(w, nonce)) {
            ep->ctr->drop_replay++;
            return false;
        }
        if (same)
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
    struct rx r = {.frame = f, .wh = (const void *)(f + PME_ETH_HLEN), .dev = in->dev};
    r.len = ntohs(r.wh->len);
    r.flags = ntohs(r.wh->flags);
    if (!admit(ep, &r))
        return;
    r.p->last_rx_ns = ep->now;
    r.p->ctr->rx_frames++;
    r.p->ctr->rx_bytes += n;
    take_rx_state(ep, &r);
    if (pme_wire_type_is_sequenced(r.wh->type))
        rx_in_sequence(ep, &r);
    else
        on_control(ep, &r);
}

/* After a batch of frames: send what the batch made due, once per peer. */
void pme_link_after_batch(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->dirty.n; i++) {
        pme_peer_t idx = ep->dirty.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        p->dirty = false;
        if (p->tx_state == TX_FAILED)
            continue;
        pme_link_pump(ep, idx); /* data frames carry the ACK and credit along */
        if (!p->rx_open)
            continue;
        if (p->ack_now)
            pme_link_ctrl(ep, idx, PME_T_ACK, NULL, 0);
        else if (p->credit_granted - p->credit_sent >= (p->rx_grant + 1) / 2 &&
                 p->credit_granted != p->credit_sent)
            pme_link_ctrl(ep, idx, PME_T_CREDIT, NULL, 0);
    }
    ep->dirty.n = 0;
}
