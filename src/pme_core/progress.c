// SPDX-License-Identifier: BSD-3-Clause
/*
 * progress.c - one progress pass: what the device brought, what the timers made due,
 * what became sendable. Waiting for progress is wait.c's.
 */
#include "counters.h"
#include "link.h"
#include "progress.h"

#define STATS_SAMPLE_NS 100000000ull /* how often the device's drop count is read */
/* How many batches a drain before a verdict reads at most (a ring's worth). */
#define DRAIN_BATCHES 1024

/* Take one batch of frames from each device and send what they made due; returns the
 * most frames one device gave (PME_RX_BATCH: there may be more). */
static int poll_batch(struct pme_ep *ep)
{
    int most = 0;
    for (unsigned i = 0; i < ep->ndev; i++) {
        int n = ep->devs[i]->ops->poll(ep->devs[i], PME_RX_BATCH, pme_link_rx, &ep->rx_ctx[i]);
        if (n < 0)
            pme_ep_set_error(ep, "device receive failed on %s: %s",
                             ep->nifname ? ep->ifname[i] : ep->cfg.device, pme_strerror(n));
        else if (n > most)
            most = n;
    }
    if (ep->dirty.n)
        pme_link_after_batch(ep);
    return most;
}

int pme_progress_pass(struct pme_ep *ep, bool poll_device)
{
    if (ep->blocked_devs)
        pme_link_resume(ep);
    if (poll_device)
        poll_batch(ep);
    pme_timers_run(ep);
    if (ep->suspects.n) {
        /* Before anyone is declared dead, read everything that has come: the answer
         * may be waiting (we may have been away computing for a long time). */
        for (int i = 0; i < DRAIN_BATCHES && poll_batch(ep) == PME_RX_BATCH; i++)
            ;
        pme_timers_confirm_suspects(ep);
    }
    if (ep->dirty.n)
        pme_link_after_batch(ep);
    if (ep->now - ep->stats_sampled_ns > STATS_SAMPLE_NS) {
        /* Ring overruns cost a system call to read: now and then is enough. */
        ep->stats_sampled_ns = ep->now;
        uint64_t lost = 0;
        for (unsigned i = 0; i < ep->ndev; i++)
            if (ep->devs[i]->ops->rx_overruns)
                lost += ep->devs[i]->ops->rx_overruns(ep->devs[i]);
        ep->ctr->rx_overruns = lost;
    }
    if (ep->now - ep->devs_rechecked_ns > PME_DEV_RECHECK_NS) {
        ep->devs_rechecked_ns = ep->now;
        for (unsigned i = 0; i < ep->ndev; i++)
            if (ep->devs[i]->ops->recheck)
                ep->devs[i]->ops->recheck(ep->devs[i]);
    }
    pme_counters_sync(ep);
    return (int)(ep->evq.tail - ep->evq.head);
}
