/*
 * ep.c - endpoints: open and close, the peer table, addresses, errors.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "pme_internal.h"

/* RTS frames carry the user header whole; keep it within a standard 1500-byte frame
 * so that peers with smaller MTUs can still take it. */
#define MAX_HDR (1500 - sizeof(struct pme_wire_hdr) - sizeof(struct pme_wire_rts))

const char *pme_strerror(int status)
{
    switch (status) {
    case PME_OK: return "success";
    case PME_EAGAIN: return "resource temporarily unavailable; progress and retry";
    case PME_ERR_INVAL: return "invalid argument";
    case PME_ERR_NOMEM: return "out of memory";
    case PME_ERR_NODEV: return "no such network interface";
    case PME_ERR_IFDOWN: return "network interface is down";
    case PME_ERR_PERM: return "no permission for raw Ethernet frames (CAP_NET_RAW)";
    case PME_ERR_DEVICE: return "device error";
    case PME_ERR_ADDR: return "malformed PME address";
    case PME_ERR_VERSION: return "peer runs another PME wire version";
    case PME_ERR_PEER_DEAD: return "peer stopped answering (timeout)";
    case PME_ERR_TRUNC: return "message truncated by the receiver";
    case PME_ERR_CANCELED: return "operation canceled";
    case PME_ERR_TIMEOUT: return "timed out";
    case PME_ERR_BUSY: return "endpoint id already in use on this interface";
    case PME_ERR_NOSYS: return "device not available in this build";
    default: return "unknown PME status";
    }
}

void pme_ep_set_error(struct pme_ep *ep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ep->err, sizeof(ep->err), fmt, ap);
    va_end(ap);
}

const char *pme_ep_last_error(pme_ep_t *ep)
{
    return ep->err;
}

void pme_idxvec_push(struct pme_idxvec *v, uint32_t x)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 64;
        uint32_t *nv = realloc(v->v, cap * sizeof(*nv));
        if (!nv)
            abort();
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}

int getrandom_u32(uint32_t *out)
{
    return getrandom(out, sizeof(*out), GRND_NONBLOCK) == sizeof(*out) ? 0 : -1;
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

/* ---- the peer table ---- */

static uint64_t peer_key(const uint8_t mac[6], uint16_t ep_id)
{
    uint64_t k = ep_id;
    for (int i = 0; i < 6; i++)
        k = (k << 8) | mac[i];
    return k;
}

static uint32_t hash_slot(uint64_t key, uint32_t mask)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static int hash_grow(struct pme_ep *ep)
{
    uint32_t cap = ep->hash ? (ep->hash_mask + 1) * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof(*h));
    if (!h)
        return PME_ERR_NOMEM;
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        uint32_t s = hash_slot(peer_key(p->mac, p->ep_id), cap - 1);
        while (h[s])
            s = (s + 1) & (cap - 1);
        h[s] = i + 1;
    }
    free(ep->hash);
    ep->hash = h;
    ep->hash_mask = cap - 1;
    return PME_OK;
}

static int peer_new(struct pme_ep *ep, const uint8_t mac[6], uint16_t ep_id, pme_peer_t *out)
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
    memcpy(p->mac, mac, 6);
    p->ep_id = ep_id;
    p->tx_state = TX_NEW;
    p->rto_us = ep->cfg.rto_us;
    p->max_frame = (uint16_t)(ep->mtu > 65535 ? 65535 : ep->mtu);
    p->ctr = pme_counters_peer_slot(ep, idx);
    uint32_t s = hash_slot(peer_key(mac, ep_id), ep->hash_mask);
    while (ep->hash[s])
        s = (s + 1) & ep->hash_mask;
    ep->hash[s] = idx + 1;
    *out = idx;
    return PME_OK;
}

int pme_peer_lookup(struct pme_ep *ep, const uint8_t mac[6], uint16_t ep_id, bool create,
                    pme_peer_t *idx)
{
    /* Frames come in runs from the same peer: try the last one first. */
    struct pme_peer *last = pme_peer_get(ep, ep->last_peer);
    if (last && last->ep_id == ep_id && !memcmp(last->mac, mac, 6)) {
        *idx = ep->last_peer;
        return PME_OK;
    }
    if (ep->hash) {
        uint64_t key = peer_key(mac, ep_id);
        for (uint32_t s = hash_slot(key, ep->hash_mask); ep->hash[s];
             s = (s + 1) & ep->hash_mask) {
            struct pme_peer *p = pme_peer_get(ep, ep->hash[s] - 1);
            if (p->ep_id == ep_id && !memcmp(p->mac, mac, 6)) {
                *idx = ep->last_peer = ep->hash[s] - 1;
                return PME_OK;
            }
        }
    }
    if (!create)
        return PME_ERR_INVAL;
    return peer_new(ep, mac, ep_id, idx);
}

/* ---- addresses: "pme<version>:<mac>/<endpoint id>" ---- */

int pme_ep_addr(pme_ep_t *ep, char *buf, size_t len)
{
    int n = snprintf(buf, len, "pme%d:%02x:%02x:%02x:%02x:%02x:%02x/%u", PME_WIRE_VERSION,
                     ep->mac[0], ep->mac[1], ep->mac[2], ep->mac[3], ep->mac[4], ep->mac[5],
                     ep->ep_id);
    if (n < 0 || (size_t)n >= len)
        return PME_ERR_INVAL;
    return n;
}

int pme_ep_add_peer(pme_ep_t *ep, const char *addr, pme_peer_t *peer)
{
    unsigned version, m[6], id;
    char tail;
    if (!addr || sscanf(addr, "pme%u:", &version) != 1) {
        pme_ep_set_error(ep, "\"%s\" is not a PME address (expected pme%d:<mac>/<endpoint>)",
                         addr ? addr : "(null)", PME_WIRE_VERSION);
        return PME_ERR_ADDR;
    }
    if (version != PME_WIRE_VERSION) {
        pme_ep_set_error(ep,
                         "peer address \"%s\" is of PME wire version %u but this process "
                         "speaks version %d: run every process of the job with the same "
                         "PME build",
                         addr, version, PME_WIRE_VERSION);
        return PME_ERR_VERSION;
    }
    const char *rest = strchr(addr, ':') + 1;
    if (sscanf(rest, "%2x:%2x:%2x:%2x:%2x:%2x/%u%c", &m[0], &m[1], &m[2], &m[3], &m[4],
               &m[5], &id, &tail) != 7 || id > PME_EP_ID_MAX) {
        pme_ep_set_error(ep, "\"%s\" is not a PME address (expected pme%d:<mac>/<endpoint>)",
                         addr, PME_WIRE_VERSION);
        return PME_ERR_ADDR;
    }
    uint8_t mac[6];
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)m[i];
    return pme_peer_lookup(ep, mac, (uint16_t)id, true, peer);
}

/* ---- open and close ---- */

size_t pme_ep_max_hdr(pme_ep_t *ep)
{
    size_t room = ep->mtu - sizeof(struct pme_wire_hdr) - sizeof(struct pme_wire_rts);
    return room < MAX_HDR ? room : MAX_HDR;
}

size_t pme_ep_eager_max(pme_ep_t *ep)
{
    return ep->cfg.eager_max;
}

unsigned pme_ep_mtu(pme_ep_t *ep)
{
    return ep->mtu;
}

const char *pme_ep_device(pme_ep_t *ep)
{
    return ep->dev->ops->name;
}

int pme_ep_fd(pme_ep_t *ep)
{
    return ep->dev->ops->fd(ep->dev);
}

size_t pme_peer_state_bytes(void)
{
    return sizeof(struct pme_peer) + sizeof(struct pme_peer_counters) + sizeof(uint32_t) * 2;
}

static int validate(const struct pme_config *cfg, char *err, size_t errlen)
{
    if (cfg->window < 1 || cfg->window > 4096) {
        snprintf(err, errlen, "window %u is out of range (1 to 4096 frames)", cfg->window);
        return PME_ERR_INVAL;
    }
    if (cfg->ethertype < 0x0600) {
        snprintf(err, errlen, "EtherType 0x%04x is a length, not a type (need >= 0x0600)",
                 cfg->ethertype);
        return PME_ERR_INVAL;
    }
    if (cfg->ep_id > PME_EP_ID_MAX) {
        snprintf(err, errlen, "endpoint id %d is out of range (0 to %d)", cfg->ep_id,
                 PME_EP_ID_MAX);
        return PME_ERR_INVAL;
    }
    if (cfg->eager_max > UINT32_MAX / 2 || cfg->rto_us == 0 || cfg->peer_timeout_ms == 0) {
        snprintf(err, errlen, "eager_max, rto_us or peer_timeout_ms is out of range");
        return PME_ERR_INVAL;
    }
    return PME_OK;
}

int pme_ep_open(const struct pme_config *cfg_in, pme_ep_t **out, char *err, size_t errlen)
{
    char dummy[8];
    if (!err) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    err[0] = 0;
    *out = NULL;
    int rc = validate(cfg_in, err, errlen);
    if (rc)
        return rc;
    const struct pme_dev_ops *ops =
        pme_dev_find(cfg_in->device ? cfg_in->device : PME_DEV_DEFAULT);
    if (!ops) {
        snprintf(err, errlen, "unknown PME device \"%s\" (use ring, pcap, kernel or loop)",
                 cfg_in->device);
        return PME_ERR_INVAL;
    }
    struct pme_ep *ep = calloc(1, sizeof(*ep));
    if (!ep)
        return PME_ERR_NOMEM;
    ep->cfg = *cfg_in;
    ep->cfg_device = strdup(ops->name);
    ep->cfg_iface = cfg_in->iface ? strdup(cfg_in->iface) : NULL;
    ep->cfg.device = ep->cfg_device;
    ep->cfg.iface = ep->cfg_iface;
    ep->ethertype_be = htons(cfg_in->ethertype);
    if (getrandom_u32(&ep->incarnation))
        ep->incarnation = (uint32_t)pme_now_ns() ^ (uint32_t)getpid();
    if (!ep->incarnation)
        ep->incarnation = 1;

    /* Claim an endpoint id (a lock that dies with the process), then the device. */
    rc = pme_counters_open(ep);
    if (rc) {
        snprintf(err, errlen, "%s", ep->err);
        goto fail;
    }
    rc = ops->open(&ep->dev, &ep->cfg, ep->ep_id, err, errlen);
    if (rc)
        goto fail;
    memcpy(ep->mac, ep->dev->mac, 6);
    ep->mtu = ep->dev->mtu;
    if (ep->cfg.mtu) {
        if (ep->cfg.mtu > ep->mtu) {
            snprintf(err, errlen,
                     "PME_MTU %u is larger than the MTU %u of interface %s: raise the "
                     "interface's MTU (ip link set dev %s mtu %u) or lower PME_MTU",
                     ep->cfg.mtu, ep->mtu, ep->cfg_iface ? ep->cfg_iface : "(loop)",
                     ep->cfg_iface ? ep->cfg_iface : "(loop)", ep->cfg.mtu);
            rc = PME_ERR_INVAL;
            goto fail;
        }
        ep->mtu = ep->cfg.mtu;
    }
    if (ep->mtu > 65535)
        ep->mtu = 65535;
    if (ep->mtu < 256) {
        snprintf(err, errlen, "MTU %u is too small for PME (at least 256)", ep->mtu);
        rc = PME_ERR_INVAL;
        goto fail;
    }
    pme_counters_publish(ep);
    pme_wait_init(ep);
    *out = ep;
    return PME_OK;
fail:
    if (ep->dev)
        ep->dev->ops->close(ep->dev);
    pme_counters_close(ep);
    free(ep->cfg_device);
    free(ep->cfg_iface);
    free(ep);
    return rc;
}

static void free_sendreq(void *ptr, void *arg)
{
    struct pme_ep *ep = arg;
    struct pme_sendreq *req = ptr;
    pme_txmsg_free(ep, req->owned);
    free(req);
}


void pme_ep_close(pme_ep_t *ep)
{
    if (!ep)
        return;
    /* Acknowledge what arrived: a peer whose last message we got must not retransmit
     * it to nobody until its timeout. */
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        if (p->rx_open && p->tx_state != TX_FAILED && (p->unacked || p->ack_deadline))
            pme_tx_ctrl(ep, i, PME_T_ACK, NULL, 0);
    }
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        struct pme_txmsg *m = p->q_head;
        while (m) {
            struct pme_txmsg *n = m->next;
            pme_txmsg_free(ep, m);
            m = n;
        }
        pme_cache_free(&ep->cache, p->asm_buf);
        p->asm_buf = NULL;
    }
    pme_slots_each(&ep->sendreqs, free_sendreq, ep);
    pme_rndv_free_all(ep);
    /* Messages still queued as events own receive buffers. */
    struct pme_event ev;
    while (pme_next_event(ep, &ev))
        if (ev.type == PME_EV_MSG)
            pme_cache_free(&ep->cache, ev.priv_);
    for (int i = 0; i < PME_TX_BATCH; i++)
        free(ep->bounce[i]);
    pme_slots_free(&ep->sendreqs);
    pme_slots_free(&ep->rndvs);
    pme_evq_free(&ep->evq);
    pme_cache_destroy(&ep->cache);
    ep->dev->ops->close(ep->dev);
    pme_counters_close(ep);
    for (uint32_t c = 0; c < ep->nchunks; c++)
        free(ep->chunks[c]);
    free(ep->chunks);
    free(ep->hash);
    free(ep->active.v);
    free(ep->dirty.v);
    free(ep->suspects.v);
    free(ep->cfg_device);
    free(ep->cfg_iface);
    free(ep);
}

int pme_ep_flush(pme_ep_t *ep, int timeout_ms)
{
    uint64_t deadline = pme_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        pme_progress(ep);
        bool busy = false;
        for (uint32_t i = 0; i < ep->npeers && !busy; i++) {
            struct pme_peer *p = pme_peer_get(ep, i);
            busy = p->tx_state != TX_FAILED && p->q_head;
        }
        if (!busy && ep->sendreqs.used == 0)
            return PME_OK;
        if (timeout_ms >= 0 && pme_now_ns() >= deadline)
            return PME_ERR_TIMEOUT;
        pme_wait(ep, 1);
    }
}
