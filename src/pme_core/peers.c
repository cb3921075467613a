// SPDX-License-Identifier: BSD-3-Clause
/*
 * peers.c - the peer table and PME addresses.
 *
 * A peer is an endpoint of another process, named by (node, endpoint id): a node keeps
 * its id whatever NIC a frame takes. Peers are never removed (a failed one stays, so
 * that late frames find it failed rather than unknown); they live in chunks that never
 * move, so a pme_peer pointer stays valid, and are found through an open-addressing
 * hash of their name with the last hit tried first (frames come in runs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters_layout.h"
#include "link.h"

static uint64_t peer_key(uint32_t node, uint16_t ep_id)
{
    return (uint64_t)node << 16 | ep_id;
}

static uint32_t hash_slot(uint64_t key, uint32_t mask)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static void hash_insert(uint32_t *h, uint32_t mask, uint64_t key, uint32_t idx)
{
    uint32_t s = hash_slot(key, mask);
    while (h[s])
        s = (s + 1) & mask;
    h[s] = idx + 1;
}

static int hash_grow(struct pme_ep *ep)
{
    uint32_t cap = ep->hash ? (ep->hash_mask + 1) * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof(*h));
    if (!h)
        return PME_ERR_NOMEM;
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        hash_insert(h, cap - 1, peer_key(p->node, p->ep_id), i);
    }
    free(ep->hash);
    ep->hash = h;
    ep->hash_mask = cap - 1;
    return PME_OK;
}

/* A new peer's way: the route file's, when it has a route to the peer's node over an
 * interface of ours (else the address or the peer's first frame tells, on device 0 or
 * the one it came in by). */
static void set_path(struct pme_ep *ep, struct pme_peer *p)
{
    const struct pme_route_hop *h = pme_routes_find(&ep->routes, p->node);
    if (h && h->iface < ep->ndev) {
        p->rail0.dev = h->iface;
        memcpy(p->rail0.mac, h->mac, 6);
        p->routed = true;
    }
}

/* The peer's rails: rail 0 in the peer, more in an array of their own (rail k leaves by
 * our device k). An endpoint of one rail pays nothing for rails. */
static int rails_new(struct pme_ep *ep, struct pme_peer *p)
{
    p->nrails = (uint8_t)ep->nrails;
    p->rail = &p->rail0;
    if (ep->nrails > 1) {
        p->rail = calloc(ep->nrails, sizeof(*p->rail));
        if (!p->rail)
            return PME_ERR_NOMEM;
    }
    for (unsigned k = 0; k < p->nrails; k++) {
        p->rail[k].dev = (uint8_t)k;
        p->rail[k].rto_us = ep->cfg.rto_us;
    }
    return PME_OK;
}

void pme_peer_set_macs(struct pme_ep *ep, pme_peer_t idx, const uint8_t (*macs)[6], unsigned n)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->routed)
        return;
    for (unsigned k = 0; k < n && k < p->nrails; k++) {
        memcpy(p->rail[k].mac, macs[k], 6);
        p->rail[k].dev = (uint8_t)k;
    }
    if (n > 1 && !p->peer_rails)
        p->peer_rails = (uint8_t)n;
    memcpy(ep->shm->peers[idx].mac, p->rail[0].mac, 6);
}

int pme_peer_check_path(struct pme_ep *ep, const struct pme_peer *p)
{
    if (!ep->routes.present || p->node == ep->self.node)
        return PME_OK;
    const struct pme_route_hop *h = pme_routes_find(&ep->routes, p->node);
    if (!h) {
        pme_ep_set_error(ep, "no route to node %u in %s (this is node %u): install routes "
                         "for the whole topology on every node (pme_route install TOPOLOGY)",
                         p->node, ep->routes.path, ep->self.node);
        return PME_ERR_UNREACHABLE;
    }
    if (!p->routed) {
        pme_ep_set_error(ep, "the route to node %u leaves by interface %s, which this "
                         "endpoint does not use: add it to PME_IFACE or leave PME_IFACE "
                         "unset (then the endpoint uses every interface of %s)",
                         p->node, ep->routes.iface[h->file_iface], ep->routes.path);
        return PME_ERR_UNREACHABLE;
    }
    if (h->hops > ep->self.hop_limit) {
        pme_ep_set_error(ep, "node %u is %u hops away, more than PME_HOP_LIMIT=%u", p->node,
                         h->hops, ep->self.hop_limit);
        return PME_ERR_UNREACHABLE;
    }
    return PME_OK;
}

static int peer_new(struct pme_ep *ep, uint32_t node, uint16_t ep_id, pme_peer_t *out)
{
    if (ep->npeers == PME_MAX_PEERS) {
        pme_ep_set_error(ep, "too many peers (at most %u per endpoint)", PME_MAX_PEERS);
        return PME_ERR_NOMEM;
    }
    if (ep->npeers == ep->nchunks * PME_PEER_CHUNK) {
        struct pme_peer **c = realloc(ep->chunks, (ep->nchunks + 1) * sizeof(*c));
        if (!c)
            return PME_ERR_NOMEM;
        ep->chunks = c;
        c[ep->nchunks] = calloc(PME_PEER_CHUNK, sizeof(struct pme_peer));
        if (!c[ep->nchunks])
            return PME_ERR_NOMEM;
        ep->nchunks++;
    }
    if (!ep->hash || (ep->npeers + 1) * 2 > ep->hash_mask + 1) {
        int rc = hash_grow(ep);
        if (rc)
            return rc;
    }
    pme_peer_t idx = ep->npeers++;
    struct pme_peer *p = pme_peer_get(ep, idx);
    memset(p, 0, sizeof(*p));
    if (rails_new(ep, p)) {
        ep->npeers--;
        return PME_ERR_NOMEM;
    }
    p->node = node;
    p->ep_id = ep_id;
    p->tx_state = TX_NEW;
    p->peer_rto_us = ep->cfg.rto_us;
    p->max_frame = (uint16_t)(ep->mtu > 65535 ? 65535 : ep->mtu);
    set_path(ep, p);
    p->ctr = pme_shm_peer_slot(ep->shm, idx, node, ep_id, p->rail0.mac);
    hash_insert(ep->hash, ep->hash_mask, peer_key(node, ep_id), idx);
    *out = idx;
    return PME_OK;
}

int pme_peer_lookup(struct pme_ep *ep, uint32_t node, uint16_t ep_id, bool create,
                    pme_peer_t *idx)
{
    struct pme_peer *last = pme_peer_get(ep, ep->last_peer);
    if (last && last->ep_id == ep_id && last->node == node) {
        *idx = ep->last_peer;
        return PME_OK;
    }
    if (ep->hash) {
        uint64_t key = peer_key(node, ep_id);
        for (uint32_t s = hash_slot(key, ep->hash_mask); ep->hash[s];
             s = (s + 1) & ep->hash_mask) {
            struct pme_peer *p = pme_peer_get(ep, ep->hash[s] - 1);
            if (p->ep_id == ep_id && p->node == node) {
                *idx = ep->last_peer = ep->hash[s] - 1;
                return PME_OK;
            }
        }
    }
    if (!create)
        return PME_ERR_INVAL;
    return peer_new(ep, node, ep_id, idx);
}

/* Queue a peer for attention after the current receive batch (pump, ACK, credit). */
void pme_peer_mark_dirty(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p->dirty) {
        p->dirty = true;
        pme_idxvec_push(&ep->dirty, idx);
    }
}

void pme_peers_free(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        for (unsigned k = 0; k < p->nrails; k++)
            pme_held_clear(&p->rail[k].held, ep->cfg.window, &ep->held_room);
        if (p->rail != &p->rail0)
            free(p->rail);
    }
    for (uint32_t c = 0; c < ep->nchunks; c++)
        free(ep->chunks[c]);
    free(ep->chunks);
    free(ep->hash);
    ep->chunks = NULL;
    ep->hash = NULL;
    ep->npeers = ep->nchunks = 0;
}

/* ---- addresses: "pme<version>:<node, 8 hex digits>/<endpoint id>@<MAC>[,<MAC>...]" ----
 * One MAC per rail, rail 0 first: a peer of several NICs names each. */

int pme_addr_format(const struct pme_wire_self *self, const uint8_t (*macs)[6], unsigned n,
                    char *buf, size_t len)
{
    int used = snprintf(buf, len, "pme%d:%08x/%u@", PME_WIRE_VERSION, self->node, self->ep);
    for (unsigned k = 0; k < n && used >= 0 && (size_t)used < len; k++) {
        const uint8_t *m = macs[k];
        int w = snprintf(buf + used, len - (size_t)used, "%s%02x:%02x:%02x:%02x:%02x:%02x",
                         k ? "," : "", m[0], m[1], m[2], m[3], m[4], m[5]);
        used = w < 0 ? -1 : used + w;
    }
    return used < 0 || (size_t)used >= len ? PME_ERR_INVAL : used;
}

/* Returns PME_OK, PME_ERR_VERSION (well-formed prefix, other version: *version says
 * which) or PME_ERR_ADDR. */
int pme_addr_parse(const char *addr, unsigned *version, uint32_t *node, uint16_t *ep_id,
                   uint8_t (*macs)[6], unsigned *nmacs)
{
    unsigned n, id, m[6];
    int used;
    if (!addr || sscanf(addr, "pme%u:", version) != 1)
        return PME_ERR_ADDR;
    if (*version != PME_WIRE_VERSION)
        return PME_ERR_VERSION;
    const char *rest = strchr(addr, ':') + 1;
    if (strspn(rest, "0123456789abcdefABCDEF") != 8 ||
        sscanf(rest, "%8x/%u@%n", &n, &id, &used) != 2 || !used || id > PME_EP_ID_MAX ||
        n == PME_NODE_ANY)
        return PME_ERR_ADDR;
    const char *s = rest + used;
    unsigned k = 0;
    for (;;) {
        int w = 0;
        if (k == PME_ADDR_MACS || strspn(s, "0123456789abcdefABCDEF:") < 17 ||
            sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
                   &w) != 6 || w != 17)
            return PME_ERR_ADDR;
        for (int i = 0; i < 6; i++)
            macs[k][i] = (uint8_t)m[i];
        k++;
        s += w;
        if (!*s)
            break;
        if (*s++ != ',')
            return PME_ERR_ADDR;
    }
    *node = n;
    *ep_id = (uint16_t)id;
    *nmacs = k;
    return PME_OK;
}
