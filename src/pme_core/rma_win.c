// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_win.c - the windows this endpoint exposes, and the lock of each.
 *
 * A window is a range of the caller's memory and a key (a slot handle: a stale key of
 * a withdrawn window names nothing). Its lock is MPI's: any number of shared holders or
 * one exclusive holder, granted in order of request, so that an exclusive request is not
 * starved by a stream of shared ones. Holders and waiters are peers or our own caller
 * (PME_PEER_SELF). This file keeps the table only; acting on a granted request is
 * rma_target.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "rma.h"

int pme_rwin_expose(struct pme_ep *ep, void *base, uint64_t size, uint32_t *key)
{
    if (!key || (!base && size))
        return PME_ERR_INVAL;
    struct pme_rwin *w = calloc(1, sizeof(*w));
    if (!w)
        return PME_ERR_NOMEM;
    w->base = base;
    w->size = size;
    w->key = pme_slots_put(&ep->rwins, w);
    if (!w->key) {
        free(w);
        return PME_ERR_NOMEM;
    }
    *key = w->key;
    return PME_OK;
}

struct pme_rwin *pme_rwin_find(struct pme_ep *ep, uint32_t key)
{
    return pme_slots_get(&ep->rwins, key);
}

void pme_rwin_free(struct pme_ep *ep, struct pme_rwin *w)
{
    while (w->wait_head) {
        struct pme_rlock_wait *q = w->wait_head;
        w->wait_head = q->next;
        free(q);
    }
    pme_slots_del(&ep->rwins, w->key);
    free(w->holders);
    free(w);
}

bool pme_rwin_fits(const struct pme_rwin *w, uint64_t off, uint64_t len)
{
    return off <= w->size && len <= w->size - off;
}

static bool compatible(const struct pme_rwin *w, unsigned type)
{
    return !w->exclusive && (type == PME_RMA_LOCK_SHARED || w->shared == 0);
}

static bool add_holder(struct pme_rwin *w, pme_peer_t peer, unsigned type)
{
    if (w->nholders == w->holders_cap) {
        uint32_t cap = w->holders_cap ? w->holders_cap * 2 : 4;
        struct pme_rholder *h = realloc(w->holders, cap * sizeof(*h));
        if (!h)
            return false;
        w->holders = h;
        w->holders_cap = cap;
    }
    w->holders[w->nholders++] = (struct pme_rholder){.peer = peer, .type = (uint8_t)type};
    if (type == PME_RMA_LOCK_EXCL)
        w->exclusive = true;
    else
        w->shared++;
    return true;
}

static void remove_holder(struct pme_rwin *w, uint32_t i)
{
    if (w->holders[i].type == PME_RMA_LOCK_EXCL)
        w->exclusive = false;
    else
        w->shared--;
    w->holders[i] = w->holders[--w->nholders];
}

/* peer's hold that is not being released, or -1. */
static long holder_of(const struct pme_rwin *w, pme_peer_t peer)
{
    for (uint32_t i = 0; i < w->nholders; i++)
        if (w->holders[i].peer == peer && !w->holders[i].releasing)
            return i;
    return -1;
}

bool pme_rwin_try_lock(struct pme_rwin *w, pme_peer_t peer, unsigned type)
{
    return !w->wait_head && compatible(w, type) && add_holder(w, peer, type);
}

struct pme_rlock_wait *pme_rwin_wait(struct pme_rwin *w, pme_peer_t peer, unsigned type,
                                     const void *req, uint32_t len)
{
    struct pme_rlock_wait *q = malloc(sizeof(*q) + len);
    if (!q)
        return NULL;
    q->next = NULL;
    q->peer = peer;
    q->type = (uint8_t)type;
    q->unlock_after = false;
    q->len = len;
    if (len)
        memcpy(q->req, req, len);
    if (w->wait_tail)
        w->wait_tail->next = q;
    else
        w->wait_head = q;
    w->wait_tail = q;
    return q;
}

struct pme_rlock_wait *pme_rwin_waiting(struct pme_rwin *w, pme_peer_t peer)
{
    for (struct pme_rlock_wait *q = w->wait_head; q; q = q->next)
        if (q->peer == peer)
            return q;
    return NULL;
}

int pme_rwin_unlock(struct pme_rwin *w, pme_peer_t peer)
{
    long i = holder_of(w, peer);
    if (i < 0)
        return PME_RWIN_NOT_HELD;
    if (w->holders[i].readers) {
        w->holders[i].releasing = true;
        return PME_RWIN_RELEASING;
    }
    remove_holder(w, (uint32_t)i);
    return PME_RWIN_RELEASED;
}

bool pme_rwin_reader_start(struct pme_rwin *w, pme_peer_t peer)
{
    w->readers++;
    long i = holder_of(w, peer);
    if (i >= 0)
        w->holders[i].readers++;
    return i >= 0;
}

bool pme_rwin_reader_done(struct pme_rwin *w, pme_peer_t peer, bool counted)
{
    w->readers--;
    if (!counted)
        return false;
    /* Its reads belong to its oldest hold: a releasing one if there is. */
    long found = -1;
    for (uint32_t i = 0; i < w->nholders; i++)
        if (w->holders[i].peer == peer && w->holders[i].readers &&
            (found < 0 || w->holders[i].releasing))
            found = i;
    if (found < 0 || --w->holders[found].readers || !w->holders[found].releasing)
        return false;
    remove_holder(w, (uint32_t)found);
    return true;
}

struct pme_rlock_wait *pme_rwin_grant_next(struct pme_rwin *w)
{
    struct pme_rlock_wait *q = w->wait_head;
    if (!q || !compatible(w, q->type) || !add_holder(w, q->peer, q->type))
        return NULL;
    w->wait_head = q->next;
    if (!w->wait_head)
        w->wait_tail = NULL;
    return q;
}

void pme_rwin_forget_peer(struct pme_rwin *w, pme_peer_t peer)
{
    for (uint32_t i = 0; i < w->nholders;)
        if (w->holders[i].peer == peer)
            remove_holder(w, i);
        else
            i++;
    struct pme_rlock_wait **pp = &w->wait_head;
    w->wait_tail = NULL;
    while (*pp) {
        struct pme_rlock_wait *q = *pp;
        if (q->peer == peer) {
            *pp = q->next;
            free(q);
        } else {
            w->wait_tail = q;
            pp = &q->next;
        }
    }
}
