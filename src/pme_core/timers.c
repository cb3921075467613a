/*
 * timers.c - firing the link's timers (rto.c arms them): retransmission after a loss
 * (Go back N), delayed ACKs, keepalive probes, and the verdict that a peer is dead.
 *
 * Liveness is judged on what a peer owes, never on silence: a peer becomes suspect when
 * something we sent it (frames, a handshake, a keepalive probe) has gone unanswered for
 * the peer timeout, counted from when it began to owe it or from the last frame it
 * sent, whichever is later. Two peers with nothing to say may stay quiet for ever. A
 * suspect is not yet dead: the timer that finds it only marks it, and progress drains
 * the device before the verdict, because an answer may be waiting there unread (a
 * process that computed for a long time runs its timers before it reads).
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>

#include "dev_eth.h"
#include "link.h"

#define RTO_MAX_FACTOR 64u  /* backoff stops doubling at 64 times the first timeout */

/* Probe the peer: its PONG (or the absence of one) tells whether it lives. The same
 * token is sent again until the answer comes. */
static void send_ping(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->ping_out) {
        p->ping_out = true;
        p->ping_token = ep->nonce + 1;
    }
    struct pme_wire_ping ping = {htobe64(p->ping_token), 0, 0};
    pme_link_ctrl(ep, idx, PME_T_PING, &ping, sizeof(ping));
}

static void keepalive(struct pme_ep *ep, pme_peer_t idx)
{
    send_ping(ep, idx);
    pme_timer_arm_rto(ep, idx);
}

/* Since when the peer has owed us an answer without a word from it. */
static uint64_t owing_since(const struct pme_peer *p)
{
    return p->owed_since_ns > p->last_rx_ns ? p->owed_since_ns : p->last_rx_ns;
}

/* Has the peer owed us an answer for longer than the peer timeout? */
static bool overdue(const struct pme_ep *ep, const struct pme_peer *p)
{
    if (!pme_peer_owes(p) || !p->owed_since_ns)
        return false;
    return ep->now - owing_since(p) > (uint64_t)ep->cfg.peer_timeout_ms * 1000000ull;
}

/* Has the peer owed us an answer for PME_LINK_DOWN_MS while the interface that leads to
 * it is down or without carrier? Counted from when it began to owe, not from its last
 * frame: its frames may still come by another way (the route back differs, or the far
 * end's cable is fine) while ours go nowhere. Read only then: it costs system calls. */
static bool link_is_down(const struct pme_ep *ep, const struct pme_peer *p)
{
    char state[24];
    if (!ep->cfg.link_down_ms || !ep->nifname || !pme_peer_owes(p) || !p->owed_since_ns ||
        ep->now - p->owed_since_ns < (uint64_t)ep->cfg.link_down_ms * 1000000ull)
        return false;
    return !pme_eth_link_up(ep->ifname[p->dev], state, sizeof(state));
}

static void suspect(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->suspect) {
        p->suspect = true;
        pme_idxvec_push(&ep->suspects, idx);
    }
}

static void rto_fire(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    p->rto_deadline = 0;
    if (p->tx_state == TX_FAILED || p->tx_state == TX_NEW)
        return;
    bool owed = pme_peer_owes(p);
    if (!owed && !p->rndv_in && !p->rndv_out)
        return;
    if (overdue(ep, p) || link_is_down(ep, p)) {
        suspect(ep, idx);
        return; /* the verdict comes after progress has drained the device */
    }
    if (owed) {
        ep->ctr->rto_fired++;
        p->ctr->rto_fired++;
        if (p->rto_us < pme_rto_base(ep, p) * RTO_MAX_FACTOR)
            p->rto_us *= 2;
        if (p->rto_us > PME_RTO_CEILING_US)
            p->rto_us = PME_RTO_CEILING_US;
    }
    if (p->tx_state == TX_HELLO) {
        pme_link_hello(ep, idx);
        return;
    }
    bool data_owed = pme_peer_has_inflight(p) || p->stopped;
    if (p->ping_out && !data_owed) {
        keepalive(ep, idx);
        return;
    }
    if (data_owed) {
        /* Go back N: everything from the first unacknowledged frame, the first of
         * them asking for an ACK at once. */
        pme_link_rewind(ep, p, p->snd_una);
        p->probe = true;
        pme_link_pump(ep, idx);
        /* Long unanswered: probe beside the data. A peer that computes cannot take
         * our frames (its ring may be full), but its kernel answers the probe. */
        if (p->ping_out || ep->now - owing_since(p) >= pme_keepalive_ns(ep))
            send_ping(ep, idx);
    } else if (p->credit_stalled) {
        pme_link_ctrl(ep, idx, PME_T_CREDIT_REQ, NULL, 0);
    } else if (ep->now - p->last_rx_ns >= pme_keepalive_ns(ep)) {
        keepalive(ep, idx);
    }
    if (!p->rto_deadline)
        pme_timer_rearm(ep, idx);
}

void pme_timers_run(struct pme_ep *ep)
{
    if (!ep->next_timer_ns || ep->now < ep->next_timer_ns)
        return;
    ep->next_timer_ns = 0;
    /* Walk a snapshot: firing a timer may re-arm (and re-add) peers. */
    uint32_t n = ep->active.n;
    for (uint32_t i = 0; i < n; i++) {
        pme_peer_t idx = ep->active.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        if (p->ack_deadline && ep->now >= p->ack_deadline && p->rx_open)
            pme_link_ctrl(ep, idx, PME_T_ACK, NULL, 0);
        if (p->rto_deadline && ep->now >= p->rto_deadline)
            rto_fire(ep, idx);
    }
    /* Keep only peers that still have a deadline; recompute the earliest. */
    uint32_t j = 0;
    uint64_t next = 0;
    for (uint32_t i = 0; i < ep->active.n; i++) {
        pme_peer_t idx = ep->active.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        if (!p->active)
            continue; /* a duplicate entry */
        if (!p->ack_deadline && !p->rto_deadline) {
            p->active = false;
            continue;
        }
        uint64_t d = p->rto_deadline;
        if (p->ack_deadline && (!d || p->ack_deadline < d))
            d = p->ack_deadline;
        if (!next || d < next)
            next = d;
        ep->active.v[j++] = idx;
        p->active = false; /* set again below, so duplicates drop out */
    }
    for (uint32_t i = 0; i < j; i++)
        pme_peer_get(ep, ep->active.v[i])->active = true;
    ep->active.n = j;
    ep->next_timer_ns = next;
}

/* How frames reach the peer, for messages: "; reached over xp to next hop ..., 2 hops". */
static void path_words(const struct pme_ep *ep, const struct pme_peer *p, char *buf,
                       size_t len)
{
    buf[0] = 0;
    if (!ep->nifname)
        return;
    const struct pme_route_hop *h = p->routed ? pme_routes_find(&ep->routes, p->node) : NULL;
    char hops[24] = "";
    if (h)
        snprintf(hops, sizeof(hops), ", %u hop%s", h->hops, h->hops == 1 ? "" : "s");
    snprintf(buf, len, "; this node (%u) reaches it over %s to next hop "
             "%02x:%02x:%02x:%02x:%02x:%02x%s", ep->self.node, ep->ifname[p->dev], p->mac[0],
             p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5], hops);
}

static void link_down_verdict(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    char state[24], path[160];
    pme_eth_link_up(ep->ifname[p->dev], state, sizeof(state));
    path_words(ep, p, path, sizeof(path));
    pme_ep_set_error(ep,
                     "the link from node %u to node %u is down: interface %s is %s and peer "
                     "%08x/%u owed us an answer for over %u ms (PME_LINK_DOWN_MS)%s",
                     ep->self.node, p->node, ep->ifname[p->dev], state, p->node, p->ep_id,
                     ep->cfg.link_down_ms, path);
    pme_peer_fail(ep, idx, PME_ERR_LINK_DOWN);
}

/* After the device was drained: a suspect that still owes us an answer past the
 * timeout is dead; one whose answer was waiting goes back to its timers. */
void pme_timers_confirm_suspects(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->suspects.n; i++) {
        pme_peer_t idx = ep->suspects.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        p->suspect = false;
        if (p->tx_state == TX_FAILED)
            continue;
        if (link_is_down(ep, p)) {
            link_down_verdict(ep, idx);
            continue;
        }
        if (!overdue(ep, p)) {
            pme_timer_rearm(ep, idx);
            continue;
        }
        char path[160];
        path_words(ep, p, path, sizeof(path));
        pme_ep_set_error(ep,
                         "peer %08x/%u did not answer for %u ms (PME_PEER_TIMEOUT_MS): its "
                         "process died, its node is down, a link on the way is down, or it "
                         "computed longer than that without calling into PME (PME_HELPER=1 "
                         "answers for it)%s",
                         p->node, p->ep_id, ep->cfg.peer_timeout_ms, path);
        pme_peer_fail(ep, idx, PME_ERR_PEER_DEAD);
    }
    ep->suspects.n = 0;
}

/* ---- failure ---- */

/* The peer is gone: everything queued to it and every transfer with it ends with
 * status, and it takes nothing more until a new incarnation says HELLO. `report`: tell
 * the caller (PME_EV_PEER_FAILED); a peer that closed while nothing was pending with it
 * is closed quietly. */
void pme_peer_close(struct pme_ep *ep, pme_peer_t idx, int status, bool report)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->tx_state == TX_FAILED)
        return;
    p->tx_state = TX_FAILED;
    p->fail_status = status;
    pme_link_purge(ep, idx, status);
    if (p->we_stopped) {
        p->we_stopped = false;
        ep->stopped_peers--;
    }
    p->stopped = p->credit_stalled = p->probe = p->ping_out = false;
    p->rto_deadline = p->ack_deadline = 0;
    p->owed_since_ns = 0;
    ep->up->peer_failed(ep, idx, status, report);
    p->rx_open = false;
    if (report)
        ep->ctr->peers_failed++;
    else
        ep->ctr->peers_closed++;
}

void pme_peer_fail(struct pme_ep *ep, pme_peer_t idx, int status)
{
    pme_peer_close(ep, idx, status, true);
}

/* A failed peer came back as a new process: start over with it. */
void pme_peer_revive(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    p->tx_state = TX_NEW;
    p->fail_status = 0;
    p->rx_open = false;
    p->rto_us = ep->cfg.rto_us;
    p->srtt_us = p->rttvar_us = 0;
    p->rtt_timing = false;
    p->max_frame = (uint16_t)(ep->mtu > 65535 ? 65535 : ep->mtu);
    p->credit_limit = p->credit_used = p->credit_grant = 0;
    p->rndv_in = p->rndv_out = 0;
}

void pme_link_dump(struct pme_ep *ep, FILE *f)
{
    static const char *const states[] = {"new", "hello", "open", "failed"};
    uint64_t now = pme_now_ns();
    fprintf(f, "endpoint %08x/%u: %u peers, pool %zu used %zu reserved of %zu, send pool %zu, "
            "events %u, next timer in %lld us%s\n",
            ep->self.node, ep->self.ep, ep->npeers, ep->rx_used, ep->rx_reserved, ep->cfg.rx_pool_bytes,
            ep->tx_used, ep->evq.tail - ep->evq.head,
            ep->next_timer_ns ? (long long)(ep->next_timer_ns - now) / 1000 : -1LL,
            ep->tx_blocked ? ", device full" : "");
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (!p->q_head && !p->rndv_in && !p->rndv_out && !p->rto_deadline && !p->ack_deadline &&
            p->tx_state != TX_FAILED)
            continue;
        fprintf(f, "  peer %u %08x/%u %s: send una %u nxt +%u max +%u "
                "%s%s%s credit %lld/%u, rto %u us (srtt %u var %u) in %lld us%s; "
                "recv %s nxt %u unacked %u%s%s, rndv in %u out %u\n",
                i, p->node, p->ep_id,
                states[p->tx_state], p->snd_una, p->snd_nxt - p->snd_una,
                p->snd_max - p->snd_una, p->cur ? "queued " : "", p->stopped ? "STOPPED " : "",
                p->credit_stalled ? "credit-stalled " : "",
                (long long)pme_credit_room(p->credit_limit, p->credit_used), p->credit_grant,
                p->rto_us, p->srtt_us, p->rttvar_us,
                p->rto_deadline ? (long long)(p->rto_deadline - now) / 1000 : -1LL,
                p->keepalive_armed ? " (keepalive)" : "", p->rx_open ? "open" : "closed",
                p->rcv_nxt, p->unacked, p->we_stopped ? " we-stopped" : "",
                p->lose_sent ? " lose-sent" : "", p->rndv_in, p->rndv_out);
    }
}
