// SPDX-License-Identifier: BSD-3-Clause
/*
 * events.c - the endpoint's event queue: what progress hands to the caller.
 */
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/* Append an event; the queue grows so that no completion is ever lost. */
struct pme_event *pme_evq_push(struct pme_ep *ep, int type, int status, pme_peer_t peer)
{
    struct pme_evq *q = &ep->evq;
    if (q->tail - q->head == (q->ev ? q->mask + 1 : 0)) {
        uint32_t cap = q->ev ? (q->mask + 1) * 2 : 256;
        struct pme_event *ev = malloc(cap * sizeof(*ev));
        if (!ev)
            abort(); /* cannot drop a completion; nothing sane remains */
        uint32_t n = q->tail - q->head;
        for (uint32_t i = 0; i < n; i++)
            ev[i] = q->ev[(q->head + i) & q->mask];
        free(q->ev);
        q->ev = ev;
        q->head = 0;
        q->tail = n;
        q->mask = cap - 1;
    }
    struct pme_event *e = &q->ev[q->tail++ & q->mask];
    memset(e, 0, sizeof(*e));
    e->type = type;
    e->status = status;
    e->peer = peer;
    return e;
}

int pme_evq_pop(struct pme_ep *ep, struct pme_event *ev)
{
    struct pme_evq *q = &ep->evq;
    if (q->head == q->tail)
        return 0;
    *ev = q->ev[q->head++ & q->mask];
    return 1;
}

void pme_evq_release(struct pme_ep *ep, struct pme_event *ev)
{
    if (ev->type == PME_EV_MSG && ev->priv_) {
        pme_rxbuf_release(ep, ev->priv_);
        ev->priv_ = NULL;
    }
}

/* The endpoint closes: messages still queued hold receive buffers (those of a bundle
 * one between them, freed with the last). */
void pme_evq_free(struct pme_ep *ep)
{
    struct pme_event ev;
    while (pme_evq_pop(ep, &ev)) {
        struct pme_rxbuf *b = ev.priv_;
        if (ev.type == PME_EV_MSG && b && --b->refs == 0)
            pme_cache_free(&ep->cache, b);
    }
    free(ep->evq.ev);
    memset(&ep->evq, 0, sizeof(ep->evq));
}
