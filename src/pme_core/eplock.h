/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eplock.h - the endpoint's lock, taken by every public entry point while a liveness
 * helper thread exists (helper.c) and by the helper for each of its passes.
 *
 * An endpoint is driven by one caller thread; the helper only steps in while that
 * caller has been away (outside PME) for a while, so the lock is almost never
 * contended: a spin on one word, yielding the core in the rare case the helper is in
 * the middle of a pass (microseconds). Without a helper it costs one predictable
 * branch.
 */
#ifndef PME_EPLOCK_H
#define PME_EPLOCK_H

#include <sched.h>

#include "pme_internal.h"
#include "progress.h"

static inline void pme_ep_lock(struct pme_ep *ep)
{
    if (!ep->helper)
        return;
    while (__atomic_exchange_n(&ep->api_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

/* The caller leaves. It counts its exits: a helper that sees the count unchanged over
 * a whole period of its own knows the caller has been away that long, without anyone
 * reading a clock on the fast path. */
static inline void pme_ep_unlock(struct pme_ep *ep)
{
    if (!ep->helper)
        return;
    /* Small messages gather: the helper's alarm bounds their wait. Once they have left,
     * it is taken back (a system call, cheaper than the helper's wake-up for nothing). */
    if (ep->gathering_tell_helper || (ep->gathering_helper_alarm && !ep->gathering_since_ns))
        pme_helper_tell(ep);
    __atomic_store_n(&ep->api_exits, ep->api_exits + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ep->api_lock, 0, __ATOMIC_RELEASE);
}

/* The helper's side: never waits for the caller. */
static inline bool pme_ep_trylock(struct pme_ep *ep)
{
    return !__atomic_exchange_n(&ep->api_lock, 1, __ATOMIC_ACQUIRE);
}

static inline void pme_ep_unlock_helper(struct pme_ep *ep)
{
    __atomic_store_n(&ep->api_lock, 0, __ATOMIC_RELEASE);
}

#endif
