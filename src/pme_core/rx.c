/*
 * rx.c - the receiving half: checking every frame, then Go-Back-N for PM on the
 * receiver (Appendix B): accept only the next frame in sequence; an older one is a
 * duplicate (ACK again), a newer one means a loss (one LOSE per gap); no buffer means
 * STOP, and GO once there is room.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "pme_internal.h"

enum { RX_OK = 0, RX_NO_BUFFER = PME_RX_NO_BUFFER };

/* A frame of another wire version. If it is a peer's VERSION_NAK (checked with its own
 * magic and CRC, since a corrupt frame can look like anything), that peer fails with a
 * clear message. Otherwise answer with our version, rate-limited, so that its sender
 * can fail clearly instead of timing out. */
static void version_mismatch(struct pme_ep *ep, const uint8_t *f, size_t n)
{
    const struct pme_wire_version_nak *in = (const void *)(f + PME_ETH_HLEN);
    pme_peer_t idx;
    ep->ctr->drop_version++;
    if (n < PME_ETH_HLEN + sizeof(*in))
        return;
    if (in->type == PME_T_VERSION_NAK) {
        if (ntohl(in->magic) != PME_VERSION_NAK_MAGIC ||
            pme_crc32c(0, in, offsetof(struct pme_wire_version_nak, crc)) != ntohl(in->crc) ||
            pme_peer_lookup(ep, f + 6, ntohs(in->src_ep), false, &idx) != PME_OK)
            return;
        struct pme_peer *p = pme_peer_get(ep, idx);
        if (p->tx_state != TX_FAILED) {
            pme_ep_set_error(ep,
                             "peer %02x:%02x:%02x:%02x:%02x:%02x/%u speaks PME wire version "
                             "%u, this process speaks %d: run every process of the job with "
                             "the same PME build",
                             p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4],
                             p->mac[5], p->ep_id, in->version, PME_WIRE_VERSION);
            pme_peer_fail(ep, idx, PME_ERR_VERSION);
        }
        return;
    }
    if (ep->version_nak_ns && ep->now - ep->version_nak_ns < 10000000u)
        return;
    ep->version_nak_ns = ep->now;
    uint8_t buf[60]; /* the Ethernet minimum; real NICs would pad to it anyway */
    memset(buf, 0, sizeof(buf));
    memcpy(buf, f + 6, 6);
    memcpy(buf + 6, ep->mac, 6);
    memcpy(buf + 12, &ep->ethertype_be, 2);
    struct pme_wire_version_nak *nak = (void *)(buf + PME_ETH_HLEN);
    nak->dst_ep = in->src_ep;
    nak->version = PME_WIRE_VERSION;
    nak->type = PME_T_VERSION_NAK;
    nak->src_ep = htons(ep->ep_id);
    nak->pad = 0;
    nak->magic = htonl(PME_VERSION_NAK_MAGIC);
    nak->crc = htonl(pme_crc32c(0, nak, offsetof(struct pme_wire_version_nak, crc)));
    struct pme_dev_frame fr = {.iov = {{buf, sizeof(buf)}}, .iovcnt = 1};
    ep->dev->ops->send(ep->dev, &fr, 1);
}

/* A new incarnation of a peer (or its first HELLO): start its receive direction.
 * Returns false when the HELLO must go unanswered (a peer we declared failed). */
static bool rx_open(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hello *h)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint32_t inc = ntohl(h->incarnation);
    bool same = p->peer_incarnation == inc && p->rx_epoch;
    if (p->tx_state == TX_FAILED) {
        if (same)
            return false;
        pme_peer_revive(ep, idx); /* a restarted process: a fresh start */
    } else if (p->rx_open) {
        if (same)
            return true; /* a repeated HELLO: our HELLO_ACK was lost */
        /* The peer restarted: what we had with its old self is gone. */
        pme_peer_fail(ep, idx, PME_ERR_PEER_DEAD);
        pme_peer_revive(ep, idx);
    }
    p->peer_incarnation = inc;
    p->rx_epoch++;
    p->rcv_nxt = ntohl(h->first_seq);
    p->rx_open = true;
    p->lose_sent = p->we_stopped = false;
    p->rx_grant = pme_pool_grant(ep);
    p->credit_granted = p->credit_consumed + p->rx_grant;
    uint16_t mf = ntohs(h->max_frame);
    if (mf < p->max_frame)
        p->max_frame = mf;
    return true;
}

/* A peer must take frames big enough for a header and some payload (fragment sizes
 * are computed from it). */
static bool max_frame_ok(const struct pme_wire_hello *h)
{
    return ntohs(h->max_frame) >= PME_WIRE_MIN_FRAME;
}

static void on_hello(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                     size_t len)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (len < sizeof(struct pme_wire_hello)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    const struct pme_wire_hello *h = (const void *)(wh + 1);
    if (!max_frame_ok(h)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    if (wh->type == PME_T_HELLO) {
        if (!rx_open(ep, idx, h))
            return;
        struct pme_wire_hello a = {
            .incarnation = htonl(ep->incarnation),
            .echo = h->incarnation,
            .max_frame = htons((uint16_t)ep->mtu),
        };
        pme_tx_ctrl(ep, idx, PME_T_HELLO_ACK, &a, sizeof(a));
        /* Open our direction too: answers (CTS, replies) need not wait a round trip. */
        if (p->tx_state == TX_NEW)
            pme_tx_hello(ep, idx);
        return;
    }
    /* HELLO_ACK */
    if (p->tx_state != TX_HELLO || ntohl(h->echo) != ep->incarnation)
        return;
    uint16_t mf = ntohs(h->max_frame);
    if (mf < p->max_frame)
        p->max_frame = mf;
    p->credit_limit = ntohl(wh->credit);
    p->credit_used = 0;
    p->credit_grant = p->credit_limit;
    p->tx_state = TX_OPEN;
    p->rto_us = ep->cfg.rto_us;
    p->rto_deadline = 0;
    pme_peer_mark_dirty(ep, idx);
}

/* An eager fragment in sequence. */
static int on_data(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                   size_t len, uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (len < sizeof(struct pme_wire_frag)) {
        ep->ctr->drop_bad_header++;
        return RX_OK;
    }
    const struct pme_wire_frag *fr = (const void *)(wh + 1);
    const uint8_t *payload = (const uint8_t *)(fr + 1);
    uint32_t plen = (uint32_t)(len - sizeof(*fr));
    uint32_t total = ntohl(fr->total), off = ntohl(fr->offset);
    uint16_t hdr_len = ntohs(fr->hdr_len);
    if (flags & PME_F_FIRST) {
        if (off != 0 || hdr_len > total || total > (1u << 30)) {
            ep->ctr->drop_bad_header++;
            return RX_OK;
        }
        if (p->asm_buf) /* a sender that never finished its last message */
            pme_rxbuf_free(ep, p->asm_buf);
        p->asm_buf = pme_rxbuf_alloc(ep, idx, total, true);
        if (!p->asm_buf)
            return RX_NO_BUFFER;
        p->asm_buf->hdr_len = hdr_len;
        p->asm_off = 0;
    }
    struct pme_rxbuf *b = p->asm_buf;
    if (!b || off != p->asm_off || plen > b->len - off || total != b->len) {
        ep->ctr->drop_bad_header++;
        return RX_OK;
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
    return RX_OK;
}

static int on_sequenced(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                        size_t len, uint16_t flags)
{
    const uint8_t *sub = (const uint8_t *)(wh + 1);
    switch (wh->type) {
    case PME_T_DATA:
        return on_data(ep, idx, wh, len, flags);
    case PME_T_RTS: {
        const struct pme_wire_rts *r = (const void *)sub;
        if (len < sizeof(*r) || ntohs(r->hdr_len) > len - sizeof(*r)) {
            ep->ctr->drop_bad_header++;
            return RX_OK;
        }
        return pme_rndv_offer(ep, idx, r, sub + sizeof(*r), ntohs(r->hdr_len)) ? RX_NO_BUFFER
                                                                                : RX_OK;
    }
    case PME_T_CTS:
        if (len < sizeof(struct pme_wire_cts)) {
            ep->ctr->drop_bad_header++;
            return RX_OK;
        }
        pme_rndv_on_cts(ep, idx, (const void *)sub, ntohs(wh->aux));
        return RX_OK;
    case PME_T_RDATA:
        if (len < sizeof(struct pme_wire_rdata)) {
            ep->ctr->drop_bad_header++;
            return RX_OK;
        }
        pme_rndv_on_rdata(ep, idx, (const void *)sub, sub + sizeof(struct pme_wire_rdata),
                          len - sizeof(struct pme_wire_rdata));
        return RX_OK;
    default: /* NOP */
        return RX_OK;
    }
}

static void rx_in_sequence(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                           size_t len, uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint32_t seq = ntohl(wh->seq);
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
                pme_tx_ctrl(ep, idx, PME_T_LOSE, NULL, 0);
            }
        }
        pme_peer_mark_dirty(ep, idx);
        return;
    }
    if (on_sequenced(ep, idx, wh, len, flags) == RX_NO_BUFFER) {
        ep->ctr->drop_no_buffer++;
        p->ctr->drop_no_buffer++;
        /* STOP once, and again to each probe while the pool stays full. */
        if (!p->we_stopped || (flags & PME_F_ACK_REQ)) {
            if (!p->we_stopped)
                ep->stopped_peers++;
            p->we_stopped = true;
            pme_tx_ctrl(ep, idx, PME_T_STOP, NULL, 0);
        }
        return;
    }
    if (p->we_stopped) {
        /* A probe got through: there is room again, let the sender go on. */
        p->we_stopped = false;
        ep->stopped_peers--;
        p->rcv_nxt++;
        p->lose_sent = false;
        pme_tx_ctrl(ep, idx, PME_T_GO, NULL, 0);
        return;
    }
    p->rcv_nxt++;
    p->lose_sent = false;
    p->unacked++;
    if ((flags & PME_F_ACK_REQ) || p->unacked * 2 >= ep->cfg.window) {
        p->ack_now = true;
        pme_peer_mark_dirty(ep, idx);
    } else {
        pme_timer_arm_ack(ep, idx);
    }
}

void pme_rx_frame(void *arg, const uint8_t *f, size_t n)
{
    struct pme_ep *ep = arg;
    ep->ctr->rx_frames++;
    ep->ctr->rx_bytes += n;
    const struct pme_wire_hdr *wh = (const void *)(f + PME_ETH_HLEN);
    /* The version-stable prefix first: a VERSION_NAK is shorter than our header. */
    if (n < PME_ETH_HLEN + 6) {
        ep->ctr->drop_short++;
        return;
    }
    if (memcmp(f + 12, &ep->ethertype_be, 2)) {
        ep->ctr->drop_not_mine++;
        return;
    }
    if (wh->version != PME_WIRE_VERSION) {
        version_mismatch(ep, f, n);
        return;
    }
    if (n < PME_ETH_HLEN + sizeof(struct pme_wire_hdr)) {
        ep->ctr->drop_short++;
        return;
    }
    if (ntohs(wh->dst_ep) != ep->ep_id || memcmp(f, ep->mac, 6)) {
        ep->ctr->drop_not_mine++;
        return;
    }
    size_t len = ntohs(wh->len);
    if (PME_ETH_HLEN + sizeof(*wh) + len > n) {
        ep->ctr->drop_short++;
        return;
    }
    if (sizeof(*wh) + len > ep->mtu) {
        ep->ctr->drop_bad_header++;
        return;
    }
    uint16_t flags = ntohs(wh->flags);
    if (!(flags & PME_F_NO_CRC)) {
        uint32_t crc = pme_crc32c(0, wh, PME_WIRE_CRC_COVERED_HDR);
        crc = pme_crc32c(crc, wh + 1, len);
        if (crc != ntohl(wh->crc)) {
            ep->ctr->drop_crc++;
            return;
        }
    }
    if (ntohl(wh->job_key) != ep->cfg.job_key) {
        ep->ctr->drop_foreign_key++;
        return;
    }
    pme_peer_t idx;
    if (pme_peer_lookup(ep, f + 6, ntohs(wh->src_ep), wh->type == PME_T_HELLO, &idx)) {
        ep->ctr->drop_unknown_peer++;
        return;
    }
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_FAILED) {
        /* A failed peer stays failed unless it comes back as a new incarnation. */
        if (wh->type != PME_T_HELLO) {
            ep->ctr->drop_unknown_peer++;
            return;
        }
    }
    p->last_rx_ns = ep->now;
    p->ctr->rx_frames++;
    p->ctr->rx_bytes += n;

    /* The reverse direction's state rides on every frame. */
    if ((flags & PME_F_ACK_VALID) && p->tx_state == TX_OPEN && wh->type != PME_T_HELLO_ACK) {
        uint32_t credit = ntohl(wh->credit);
        if (pme_seq_after(credit, p->credit_limit)) {
            p->credit_limit = credit;
            if (p->credit_stalled) {
                p->credit_stalled = false;
                pme_peer_mark_dirty(ep, idx);
            }
        }
        pme_tx_ack(ep, idx, ntohl(wh->ack));
    }

    if (pme_wire_type_is_sequenced(wh->type)) {
        rx_in_sequence(ep, idx, wh, len, flags);
        return;
    }
    /* LOSE, STOP and GO name the first frame the peer lacks; one naming a frame it has
     * already acknowledged is stale (it was overtaken by a later ACK) and is ignored:
     * acting on it would rewind below the first unacknowledged frame. */
    uint32_t next = ntohl(wh->ack) + 1;
    bool valid = (flags & PME_F_ACK_VALID) && p->tx_state == TX_OPEN &&
                 !pme_seq_before(next, p->snd_una);
    switch (wh->type) {
    case PME_T_ACK:
        ep->ctr->ack_rx++;
        break;
    case PME_T_LOSE:
        ep->ctr->lose_rx++;
        p->ctr->lose_rx++;
        if (valid && pme_seq_before(next, p->snd_nxt)) {
            pme_tx_rewind(ep, p, next);
            pme_peer_mark_dirty(ep, idx);
        }
        break;
    case PME_T_STOP:
        ep->ctr->stop_rx++;
        p->ctr->stop_rx++;
        if (valid) {
            p->stopped = true;
            if (pme_seq_before(next, p->snd_nxt))
                pme_tx_rewind(ep, p, next);
            pme_timer_arm_rto(ep, idx);
        }
        break;
    case PME_T_GO:
        ep->ctr->go_rx++;
        p->ctr->go_rx++;
        if (valid) {
            p->stopped = false;
            if (pme_seq_before(next, p->snd_nxt))
                pme_tx_rewind(ep, p, next);
            pme_peer_mark_dirty(ep, idx);
        }
        break;
    case PME_T_CREDIT:
        ep->ctr->credit_rx++;
        break;
    case PME_T_CREDIT_REQ:
        if (p->rx_open)
            pme_tx_ctrl(ep, idx, PME_T_CREDIT, NULL, 0);
        break;
    case PME_T_HELLO:
    case PME_T_HELLO_ACK:
        on_hello(ep, idx, wh, len);
        break;
    default:
        ep->ctr->drop_bad_header++;
        break;
    }
}

/* After a batch of frames: send what the batch made due, once per peer. */
void pme_rx_after_batch(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->dirty.n; i++) {
        pme_peer_t idx = ep->dirty.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        p->dirty = false;
        if (p->tx_state == TX_FAILED)
            continue;
        pme_tx_pump(ep, idx); /* data frames carry the ACK and credit along */
        if (!p->rx_open)
            continue;
        if (p->ack_now)
            pme_tx_ctrl(ep, idx, PME_T_ACK, NULL, 0);
        else if (p->credit_granted - p->credit_sent >= (p->rx_grant + 1) / 2 &&
                 p->credit_granted != p->credit_sent)
            pme_tx_ctrl(ep, idx, PME_T_CREDIT, NULL, 0);
    }
    ep->dirty.n = 0;
}

/* Room again in the pool: let every stopped sender go (Appendix B's GO). */
void pme_rx_send_go_if_room(struct pme_ep *ep)
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
            pme_tx_ctrl(ep, i, PME_T_GO, NULL, 0);
        }
    }
}
