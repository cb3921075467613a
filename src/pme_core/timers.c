// SPDX-License-Identifier: BSD-3-Clause
/*
 * timers.c - firing the link's timers (rto.c arms them): retransmission after a loss
 * (Go back N, on each rail), delayed ACKs, keepalive probes, the verdict that a rail is
 * dead (failover.c drops it) and the verdict that a peer is dead.
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

/* Has the peer never answered our handshake, with something of the caller's waiting
 * for it, for PME_HELLO_TIMEOUT_MS? Not one frame of it was believed: ours do not reach
 * it or its do not reach us, which a peer timeout would only say a minute later and as
 * if the peer had died. */
static bool never_answered(const struct pme_ep *ep, const struct pme_peer *p)
{
    unsigned t = ep->cfg.hello_timeout_ms;
    if (!t || t >= ep->cfg.peer_timeout_ms || p->tx_state != TX_HELLO || p->known ||
        p->last_rx_ns || !p->owed_since_ns)
        return false;
    if (!pme_peer_has_queued(p) && !p->rndv_in && !p->rndv_out && !p->rma_pending)
        return false;
    return ep->now - p->owed_since_ns > (uint64_t)t * 1000000ull;
}

/* Has the peer owed us an answer for PME_LINK_DOWN_MS while the interface of every rail
 * left to it is down or without carrier? Counted from when it began to owe, not from
 * its last frame: its frames may still come by another way (the route back differs,
 * or the far end's cable is fine) while ours go nowhere. Read only then: it costs
 * system calls. */
static bool link_is_down(struct pme_ep *ep, const struct pme_peer *p)
{
    char state[24];
    if (!ep->cfg.link_down_ms || !pme_peer_owes(p) || !p->owed_since_ns ||
        ep->now - p->owed_since_ns < (uint64_t)ep->cfg.link_down_ms * 1000000ull)
        return false;
    for (unsigned k = 0; k < p->nrails; k++)
        if ((p->rail[k].state == RAIL_OPEN || k == p->primary) &&
            pme_rail_link_up(ep, &p->rail[k], state, sizeof(state)))
            return false;
    return true;
}

static void suspect(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->suspect) {
        p->suspect = true;
        pme_idxvec_push(&ep->suspects, idx);
    }
}

/* Rail k of the peer may be given up while another rail carries on: when its interface
 * has been down for PME_LINK_DOWN_MS while the rail owed us an answer, or when it went
 * unanswered for PME_RAIL_TIMEOUT_MS while the peer answered on another rail. Returns
 * true when it was dropped. */
static bool rail_verdict(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    if (pme_rails_alive(p) - (r->state == RAIL_OPEN) == 0 || !r->owed_since_ns)
        return false;
    char why[160], state[24];
    uint64_t owed = ep->now - r->owed_since_ns;
    uint64_t since = r->owed_since_ns > r->last_rx_ns ? r->owed_since_ns : r->last_rx_ns;
    const char *ifn = r->dev < ep->nifname ? ep->ifname[r->dev] : "(loop)";
    if (ep->cfg.link_down_ms && owed >= (uint64_t)ep->cfg.link_down_ms * 1000000ull &&
        !pme_rail_link_up(ep, r, state, sizeof(state))) {
        snprintf(why, sizeof(why), "interface %s is %s (for over %u ms, PME_LINK_DOWN_MS)", ifn,
                 state, ep->cfg.link_down_ms);
    } else if (ep->now - since > (uint64_t)ep->cfg.rail_timeout_ms * 1000000ull &&
               p->last_rx_ns > since) {
        snprintf(why, sizeof(why), "%s on it for %u ms (PME_RAIL_TIMEOUT_MS) while the peer "
                 "answered on another rail", r->state == RAIL_HELLO ? "no answer to the handshake"
                                                                 : "no answer",
                 ep->cfg.rail_timeout_ms);
    } else {
        return false;
    }
    pme_rail_drop(ep, idx, k, why);
    return true;
}

/* Rail k's retransmission timer: the rail's handshake or frames went unanswered. */
static void rto_fire(struct pme_ep *ep, pme_peer_t idx, unsigned k)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rail *r = &p->rail[k];
    r->rto_deadline = 0;
    if (p->tx_state == TX_FAILED || p->tx_state == TX_NEW || r->state == RAIL_DEAD ||
        r->state == RAIL_NEW || !pme_rail_owes(r))
        return;
    if (rail_verdict(ep, idx, k))
        return;
    if (overdue(ep, p) || never_answered(ep, p) || link_is_down(ep, p)) {
        suspect(ep, idx);
        return; /* the verdict comes after progress has drained the device */
    }
    ep->ctr->rto_fired++;
    p->ctr->rto_fired++;
    if (r->rto_us < pme_rto_base(ep, r) * RTO_MAX_FACTOR)
        r->rto_us *= 2;
    if (r->rto_us > PME_RTO_CEILING_US)
        r->rto_us = PME_RTO_CEILING_US;
    if (r->state == RAIL_HELLO) {
        pme_link_hello(ep, idx, k);
        return;
    }
    /* Go back N: everything from the rail's first unacknowledged frame, the first of
     * them asking for an ACK at once. */
    pme_link_rewind(r, r->snd_una);
    r->probe = true;
    pme_link_pump(ep, idx);
    /* Long unanswered: probe beside the data. A peer that computes cannot take our
     * frames (its ring may be full), but its kernel answers the probe. */
    if (p->ping_out || ep->now - owing_since(p) >= pme_keepalive_ns(ep))
        send_ping(ep, idx);
    if (!r->rto_deadline)
        pme_timer_rearm(ep, idx);
}

/* The peer's timer: credit asked for, a PONG awaited, or a keepalive while a rendezvous
 * with it is open. */
static void peer_fire(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    p->peer_deadline = 0;
    if (p->tx_state == TX_FAILED || p->tx_state == TX_NEW)
        return;
    bool owed = pme_peer_owes(p);
    if (!owed && !p->rndv_in && !p->rndv_out)
        return;
    if (overdue(ep, p) || link_is_down(ep, p)) {
        suspect(ep, idx);
        return;
    }
    if (owed && p->peer_rto_us < ep->cfg.rto_us * RTO_MAX_FACTOR &&
        p->peer_rto_us < PME_RTO_CEILING_US)
        p->peer_rto_us *= 2;
    if (p->ping_out || (!p->credit_stalled && ep->now - p->last_rx_ns >= pme_keepalive_ns(ep))) {
        send_ping(ep, idx);
        p->keepalive_armed = false;
        pme_timer_arm_peer(ep, idx, ep->now + (uint64_t)p->peer_rto_us * 1000u);
        return;
    }
    if (p->credit_stalled) {
        pme_link_ctrl(ep, idx, PME_T_CREDIT_REQ, NULL, 0);
        p->keepalive_armed = false;
        pme_timer_arm_peer(ep, idx, ep->now + (uint64_t)p->peer_rto_us * 1000u);
        return;
    }
    pme_timer_rearm(ep, idx);
}

/* Keep only the peers that still have a deadline; recompute the earliest. */
static void prune_active(struct pme_ep *ep)
{
    uint32_t j = 0;
    uint64_t next = 0;
    for (uint32_t i = 0; i < ep->active.n; i++) {
        pme_peer_t idx = ep->active.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        if (!p->active)
            continue; /* a duplicate entry */
        uint64_t d = pme_peer_next_deadline(p);
        if (!d) {
            p->active = false;
            continue;
        }
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

/* Send the ACK that rail k of peer idx holds back for a reply to carry: when it is
 * due, or (due_only false) at once. Whether one went. */
static bool send_delayed_ack(struct pme_ep *ep, pme_peer_t idx, unsigned k, bool due_only)
{
    const struct pme_rail *r = &pme_peer_get(ep, idx)->rail[k];
    if (!r->ack_deadline || !r->rx_open || (due_only && ep->now < r->ack_deadline))
        return false;
    pme_link_ctrl_rail(ep, idx, k, PME_T_ACK, NULL, 0);
    return true;
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
        for (unsigned k = 0; k < p->nrails; k++) {
            struct pme_rail *r = &p->rail[k];
            send_delayed_ack(ep, idx, k, true);
            if (r->rto_deadline && ep->now >= r->rto_deadline)
                rto_fire(ep, idx, k);
        }
        if (p->peer_deadline && ep->now >= p->peer_deadline)
            peer_fire(ep, idx);
    }
    prune_active(ep);
}

/* Before a sleep: the delayed ACKs go now. One waits for a reply to carry it, and a
 * sleeping process sends none; left to its timer, stretched by the sleep's slack to the
 * scheduler tick (PME_SLEEP_SLACK_US, 4 ms), it would outlive the sender's
 * retransmission timeout (1 ms), and the sender would send again what had arrived. */
void pme_timers_ack_before_sleep(struct pme_ep *ep)
{
    bool sent = false;
    for (uint32_t i = 0; i < ep->active.n; i++) {
        pme_peer_t idx = ep->active.v[i];
        struct pme_peer *p = pme_peer_get(ep, idx);
        for (unsigned k = 0; k < p->nrails; k++)
            sent |= send_delayed_ack(ep, idx, k, false);
    }
    if (sent)
        prune_active(ep);
}

/* How frames reach the peer, for messages: "; reached over xp to next hop ..., 2 hops". */
static void path_words(const struct pme_ep *ep, const struct pme_peer *p, char *buf,
                       size_t len)
{
    buf[0] = 0;
    const struct pme_rail *r = &p->rail[p->primary];
    if (r->dev >= ep->nifname)
        return;
    const struct pme_route_hop *h = p->routed ? pme_routes_find(&ep->routes, p->node) : NULL;
    char hops[24] = "";
    if (h)
        snprintf(hops, sizeof(hops), ", %u hop%s", h->hops, h->hops == 1 ? "" : "s");
    snprintf(buf, len, "; this node (%u) reaches it over %s to next hop "
             "%02x:%02x:%02x:%02x:%02x:%02x%s", ep->self.node, ep->ifname[r->dev], r->mac[0],
             r->mac[1], r->mac[2], r->mac[3], r->mac[4], r->mac[5], hops);
}

static void hello_verdict(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    char path[160];
    path_words(ep, p, path, sizeof(path));
    bool heard = pme_hello_wait_find(ep, idx, false) != NULL;
    pme_ep_set_error(ep,
                     "peer %08x/%u never answered the handshake in %u ms "
                     "(PME_HELLO_TIMEOUT_MS)%s: a switch or filter that drops EtherType "
                     "0x%04x, a port on the way with an MTU below %u, another network or "
                     "VLAN, or its process never opened PME; pme_info --check --probe "
                     "--hostfile FILE sends test frames between the nodes%s",
                     p->node, p->ep_id, ep->cfg.hello_timeout_ms,
                     heard ? " (its HELLO reached us: ours do not reach it)" : "",
                     ep->cfg.ethertype, ep->mtu, path);
    pme_peer_fail(ep, idx, PME_ERR_NO_ANSWER);
}

static void link_down_verdict(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    const struct pme_rail *r = &p->rail[p->primary];
    char state[24], path[160];
    pme_rail_link_up(ep, r, state, sizeof(state));
    path_words(ep, p, path, sizeof(path));
    pme_ep_set_error(ep,
                     "the link from node %u to node %u is down: interface %s is %s and peer "
                     "%08x/%u owed us an answer for over %u ms (PME_LINK_DOWN_MS)%s",
                     ep->self.node, p->node,
                     r->dev < ep->nifname ? ep->ifname[r->dev] : "(loop)", state, p->node,
                     p->ep_id, ep->cfg.link_down_ms, path);
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
        if (never_answered(ep, p) && !overdue(ep, p)) {
            hello_verdict(ep, idx);
            continue;
        }
        if (!overdue(ep, p)) {
            pme_timer_rearm(ep, idx);
            continue;
        }
        if (!p->known && !pme_peer_has_queued(p) && !p->rndv_in && !p->rndv_out &&
            !p->rma_pending) {
            /* It said HELLO and never answered our challenge, and the caller waits on
             * nothing of it: a HELLO replayed from another run, or a process that died
             * at once. Closed quietly: nothing was lost, and a replayer must not make
             * the caller see a failure. */
            pme_peer_close(ep, idx, PME_ERR_PEER_DEAD, false);
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
    for (unsigned k = 0; k < p->nrails; k++) {
        struct pme_rail *r = &p->rail[k];
        if (r->we_stopped) {
            r->we_stopped = false;
            ep->stopped_peers--;
        }
        r->stopped = r->probe = r->rx_open = false;
        r->rto_deadline = r->ack_deadline = r->owed_since_ns = 0;
        pme_held_clear(&r->held, ep->cfg.window, &ep->held_room);
    }
    p->credit_stalled = p->ping_out = false;
    p->peer_deadline = 0;
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

/* A failed peer came back as a new process: start over with it, on every rail. */
void pme_peer_revive(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    p->tx_state = TX_NEW;
    p->fail_status = 0;
    p->rx_open = false;
    p->tx_order = 0;
    p->primary = 0;
    p->peer_rto_us = ep->cfg.rto_us;
    for (unsigned k = 0; k < p->nrails; k++) {
        struct pme_rail *r = &p->rail[k];
        r->state = RAIL_NEW;
        r->rx_open = false;
        r->rto_us = ep->cfg.rto_us;
        r->srtt_us = r->rttvar_us = 0;
        r->rtt_timing = false;
    }
    p->max_frame = (uint16_t)(ep->mtu > 65535 ? 65535 : ep->mtu);
    p->credit_limit = p->credit_used = p->credit_grant = 0;
    p->rndv_in = p->rndv_out = 0;
}

void pme_link_dump(struct pme_ep *ep, FILE *f)
{
    static const char *const states[] = {"new", "hello", "open", "failed"};
    static const char *const rail_states[] = {"new", "hello", "open", "dead"};
    uint64_t now = pme_now_ns();
    fprintf(f, "endpoint %08x/%u: %u peers, pool %zu used %zu reserved of %zu, send pool %zu, "
            "events %u, next timer in %lld us%s\n",
            ep->self.node, ep->self.ep, ep->npeers, ep->rx_used, ep->rx_reserved, ep->cfg.rx_pool_bytes,
            ep->tx_used, ep->evq.tail - ep->evq.head,
            ep->next_timer_ns ? (long long)(ep->next_timer_ns - now) / 1000 : -1LL,
            ep->blocked_devs ? ", device full" : "");
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (!pme_peer_has_queued(p) && !p->rndv_in && !p->rndv_out && !pme_peer_next_deadline(p) &&
            p->tx_state != TX_FAILED)
            continue;
        fprintf(f, "  peer %u %08x/%u %s: %s%s credit %lld/%u, primary rail %u%s, "
                "rndv in %u out %u%s\n",
                i, p->node, p->ep_id, states[p->tx_state], p->stripe_head ? "striping " : "",
                p->credit_stalled ? "credit-stalled " : "",
                (long long)pme_credit_room(p->credit_limit, p->credit_used), p->credit_grant,
                p->primary, p->ping_out ? ", ping out" : "", p->rndv_in, p->rndv_out,
                p->keepalive_armed ? " (keepalive)" : "");
        for (unsigned k = 0; k < p->nrails; k++) {
            struct pme_rail *r = &p->rail[k];
            if (r->state == RAIL_NEW && !r->rx_open)
                continue;
            fprintf(f, "    rail %u %s: send una %u nxt +%u max +%u resend %u %s%s rto %u us "
                    "(srtt %u var %u) in %lld us; recv %s nxt %u unacked %u held %u%s%s\n",
                    k, rail_states[r->state], r->snd_una, r->snd_nxt - r->snd_una,
                    r->snd_max - r->snd_una, r->resend_hi - r->resend_lo,
                    r->cur ? "queued " : "", r->stopped ? "STOPPED " : "", r->rto_us,
                    r->srtt_us, r->rttvar_us,
                    r->rto_deadline ? (long long)(r->rto_deadline - now) / 1000 : -1LL,
                    r->rx_open ? "open" : "closed", r->rcv_nxt, r->unacked, r->held.n,
                    r->we_stopped ? " we-stopped" : "", r->lose_sent ? " lose-sent" : "");
        }
    }
}
