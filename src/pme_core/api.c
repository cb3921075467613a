// SPDX-License-Identifier: BSD-3-Clause
/*
 * api.c - the public entry points that touch an open endpoint's state. Each takes the
 * endpoint's lock (eplock.h: free unless a liveness helper runs) and hands the work to
 * the layer that does it; nothing else lives here.
 */
#include <stdio.h>
#include <string.h>

#include "counters_shm.h"
#include "eplock.h"
#include "link.h"
#include "msg.h"
#include "progress.h"

int pme_send(pme_ep_t *ep, pme_peer_t peer, const void *hdr, size_t hdr_len,
             const struct iovec *iov, int iovcnt, unsigned flags, void *ctx)
{
    pme_ep_lock(ep);
    int rc = pme_msg_send(ep, peer, hdr, hdr_len, iov, iovcnt, flags, ctx);
    pme_ep_unlock(ep);
    return rc;
}

int pme_progress(pme_ep_t *ep)
{
    pme_ep_lock(ep);
    ep->now = pme_now_ns();
    int n = pme_progress_pass(ep, true);
    pme_ep_unlock(ep);
    return n;
}

void pme_send_waiting(pme_ep_t *ep)
{
    pme_ep_lock(ep);
    if (ep->dirty.n)
        pme_link_after_batch(ep);
    pme_link_send_gathered(ep);
    pme_ep_unlock(ep);
}

int pme_wait(pme_ep_t *ep, int timeout_ms)
{
    pme_ep_lock(ep);
    int n = pme_wait_do(ep, timeout_ms);
    pme_ep_unlock(ep);
    return n;
}

void pme_ep_idle(pme_ep_t *ep, uint64_t idle_us, unsigned max_sleep_us)
{
    pme_ep_lock(ep);
    pme_idle_do(ep, idle_us, max_sleep_us);
    pme_ep_unlock(ep);
}

int pme_ep_idle_sleeps(pme_ep_t *ep, uint64_t idle_us, unsigned max_sleep_us)
{
    pme_ep_lock(ep);
    bool sleeps = pme_idle_sleeps(ep, idle_us, max_sleep_us);
    pme_ep_unlock(ep);
    return sleeps;
}

void pme_ep_set_wake_fd(pme_ep_t *ep, int fd)
{
    pme_ep_lock(ep);
    ep->wake_fd = fd;
    pme_ep_unlock(ep);
}

int pme_ep_flush(pme_ep_t *ep, int timeout_ms)
{
    pme_ep_lock(ep);
    int rc = pme_flush_do(ep, timeout_ms);
    pme_ep_unlock(ep);
    return rc;
}

int pme_next_event(pme_ep_t *ep, struct pme_event *ev)
{
    pme_ep_lock(ep);
    int n = pme_evq_pop(ep, ev);
    pme_ep_unlock(ep);
    return n;
}

void pme_event_release(pme_ep_t *ep, struct pme_event *ev)
{
    pme_ep_lock(ep);
    pme_evq_release(ep, ev);
    pme_ep_unlock(ep);
}

int pme_rndv_accept(pme_ep_t *ep, pme_rndv_t rndv, const struct iovec *iov, int iovcnt,
                    void *ctx)
{
    pme_ep_lock(ep);
    int rc = pme_rndv_do_accept(ep, rndv, iov, iovcnt, ctx);
    pme_ep_unlock(ep);
    return rc;
}

int pme_rndv_discard(pme_ep_t *ep, pme_rndv_t rndv)
{
    pme_ep_lock(ep);
    int rc = pme_rndv_do_discard(ep, rndv);
    pme_ep_unlock(ep);
    return rc;
}

int pme_ep_add_peer(pme_ep_t *ep, const char *addr, pme_peer_t *peer)
{
    unsigned version = 0, nmacs = 0;
    uint32_t node;
    uint16_t id;
    uint8_t macs[PME_ADDR_MACS][6];
    int rc = pme_addr_parse(addr, &version, &node, &id, macs, &nmacs);
    if (rc == PME_ERR_VERSION) {
        pme_ep_set_error(ep,
                         "peer address \"%s\" is of PME wire version %u but this process "
                         "speaks version %d: run every process of the job with the same "
                         "PME build",
                         addr, version, PME_WIRE_VERSION);
        return rc;
    }
    if (rc) {
        pme_ep_set_error(ep, "\"%s\" is not a PME address (expected "
                         "pme%d:<node>/<endpoint>@<mac>[,<mac>...], at most %d MACs)",
                         addr ? addr : "(null)", PME_WIRE_VERSION, PME_ADDR_MACS);
        return rc;
    }
    pme_ep_lock(ep);
    rc = pme_peer_lookup(ep, node, id, true, peer);
    if (rc == PME_OK) {
        struct pme_peer *p = pme_peer_get(ep, *peer);
        rc = pme_peer_check_path(ep, p);
        if (rc == PME_OK)
            pme_peer_set_macs(ep, *peer, (const uint8_t (*)[6])macs, nmacs);
    }
    pme_ep_unlock(ep);
    return rc;
}

void pme_ep_counters(pme_ep_t *ep, struct pme_counters *c)
{
    pme_ep_lock(ep);
    *c = *ep->ctr;
    pme_ep_unlock(ep);
}

int pme_ep_iface_counters(pme_ep_t *ep, unsigned i, char *name, size_t len,
                          struct pme_iface_counters *c)
{
    pme_ep_lock(ep);
    int rc = i < ep->ndev ? PME_OK : PME_ERR_INVAL;
    if (rc == PME_OK) {
        *c = ep->shm->ifs[i];
        snprintf(name, len, "%s", i < ep->nifname ? ep->ifname[i] : "");
    }
    pme_ep_unlock(ep);
    return rc;
}

int pme_peer_counters(pme_ep_t *ep, pme_peer_t idx, struct pme_counters *c)
{
    pme_ep_lock(ep);
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p) {
        memset(c, 0, sizeof(*c));
#define PME_COPY_FIELD(name) c->name = p->ctr->name;
        PME_PEER_COUNTER_NAMES(PME_COPY_FIELD)
#undef PME_COPY_FIELD
    }
    pme_ep_unlock(ep);
    return p ? PME_OK : PME_ERR_INVAL;
}

void pme_ep_pool(pme_ep_t *ep, size_t *used, size_t *reserved, size_t *size)
{
    pme_ep_lock(ep);
    *used = ep->rx_used;
    *reserved = ep->rx_reserved;
    *size = ep->cfg.rx_pool_bytes;
    pme_ep_unlock(ep);
}

void pme_ep_dump(pme_ep_t *ep, FILE *f)
{
    pme_ep_lock(ep);
    pme_link_dump(ep, f);
    pme_ep_unlock(ep);
}

/* Read on every pass of a caller's progress loop: no lock (a torn read of a count that
 * only grows is harmless). */
uint64_t pme_ep_activity(pme_ep_t *ep)
{
    return ep->ctr->rx_frames + ep->ctr->tx_frames;
}

uint64_t pme_ep_now_ns(pme_ep_t *ep)
{
    return ep->now;
}
