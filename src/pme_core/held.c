// SPDX-License-Identifier: BSD-3-Clause
/* held.c - see held.h. */
#include "held.h"

#include <stdlib.h>
#include <string.h>

#include "seq.h"

static size_t footprint(size_t len)
{
    return sizeof(struct pme_held_frame) + len;
}

enum pme_hold_result pme_held_put(struct pme_held *h, unsigned window, size_t *budget,
                                  uint32_t seq, const void *frame, size_t len)
{
    if (!h->slot) {
        h->slot = calloc(window, sizeof(*h->slot));
        if (!h->slot)
            return PME_HOLD_NO_ROOM;
    }
    struct pme_held_frame **s = &h->slot[seq % window];
    if (*s)
        return PME_HOLD_ALREADY; /* the caller keeps every held frame within a window */
    if (footprint(len) > *budget)
        return PME_HOLD_NO_ROOM;
    struct pme_held_frame *f = malloc(footprint(len));
    if (!f)
        return PME_HOLD_NO_ROOM;
    f->seq = seq;
    f->len = (uint32_t)len;
    memcpy(f->frame, frame, len);
    *budget -= footprint(len);
    *s = f;
    if (!h->n++ || pme_seq_after(seq + 1, h->high))
        h->high = seq + 1;
    return PME_HOLD_KEPT;
}

struct pme_held_frame *pme_held_take(struct pme_held *h, unsigned window, uint32_t seq)
{
    if (!h->n)
        return NULL;
    struct pme_held_frame **s = &h->slot[seq % window];
    struct pme_held_frame *f = *s;
    if (!f || f->seq != seq)
        return NULL;
    *s = NULL;
    h->n--;
    return f;
}

uint32_t pme_held_next(const struct pme_held *h, unsigned window, uint32_t seq)
{
    if (!h->n)
        return h->high;
    while (pme_seq_before(seq, h->high) && !h->slot[seq % window])
        seq++;
    return seq;
}

void pme_held_release(struct pme_held_frame *f, size_t *budget)
{
    *budget += footprint(f->len);
    free(f);
}

void pme_held_clear(struct pme_held *h, unsigned window, size_t *budget)
{
    if (h->slot)
        for (unsigned i = 0; i < window && h->n; i++)
            if (h->slot[i]) {
                pme_held_release(h->slot[i], budget);
                h->slot[i] = NULL;
                h->n--;
            }
    free(h->slot);
    h->slot = NULL;
    h->n = 0;
}
