// SPDX-License-Identifier: BSD-3-Clause
/*
 * hello_wait.c - what the handshake (link_hello.c) remembers beside the peers: our
 * challenge to each peer, and the HELLOs of incarnations that have not answered one.
 *
 * A challenge need not be secret (it travels in clear): what matters is that no frame
 * recorded before it was made can echo it. So it is derived, not stored: a random
 * number of this endpoint (chal_base, new with every open: another run's endpoint has
 * another) combined with the peer's index and how many of its incarnations we adopted
 * (chal_gen, which moves on with each), one-to-one. A peer's state stays as small as
 * before (t_scale); the waiting HELLOs live here, a few at a time, since only peers
 * meeting a new incarnation have one.
 */
#include <stdlib.h>

#include "link.h"

uint64_t pme_link_chal(struct pme_ep *ep, pme_peer_t idx)
{
    const struct pme_peer *p = pme_peer_get(ep, idx);
    uint64_t c = ep->chal_base ^ ((uint64_t)idx << 8 | p->chal_gen);
    return c ? c : 1; /* 0 answers nothing */
}

struct pme_hello_wait *pme_hello_wait_find(struct pme_ep *ep, pme_peer_t idx, bool create)
{
    for (uint32_t i = 0; i < ep->nhello_wait; i++)
        if (ep->hello_wait[i].idx == idx)
            return &ep->hello_wait[i];
    if (!create)
        return NULL;
    if (ep->nhello_wait == ep->hello_wait_cap) {
        uint32_t cap = ep->hello_wait_cap ? 2 * ep->hello_wait_cap : 8;
        struct pme_hello_wait *w = realloc(ep->hello_wait, cap * sizeof(*w));
        if (!w)
            return NULL;
        ep->hello_wait = w;
        ep->hello_wait_cap = cap;
    }
    struct pme_hello_wait *w = &ep->hello_wait[ep->nhello_wait++];
    *w = (struct pme_hello_wait){.idx = idx};
    return w;
}

void pme_hello_wait_drop(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_hello_wait *w = pme_hello_wait_find(ep, idx, false);
    if (w)
        *w = ep->hello_wait[--ep->nhello_wait];
}

void pme_hello_wait_free(struct pme_ep *ep)
{
    free(ep->hello_wait);
    ep->hello_wait = NULL;
    ep->nhello_wait = ep->hello_wait_cap = 0;
}
