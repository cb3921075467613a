// SPDX-License-Identifier: BSD-3-Clause
/*
 * ranges.c - see ranges.h. A stream that arrives in order is one range that grows at
 * its end (the first test below); striped streams have a range per rail in flight and
 * holes between them, few at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

static uint64_t overlap(const struct pme_range *r, uint64_t lo, uint64_t hi)
{
    uint64_t a = r->lo > lo ? r->lo : lo, b = r->hi < hi ? r->hi : hi;
    return b > a ? b - a : 0;
}

uint64_t pme_ranges_add(struct pme_ranges *s, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return 0;
    if (s->n && s->v[s->n - 1].hi == lo) {
        s->v[s->n - 1].hi = hi;
        return hi - lo;
    }
    /* The ranges that overlap or touch [lo, hi) are [i, j): they merge into one. */
    uint32_t i = 0, j;
    while (i < s->n && s->v[i].hi < lo)
        i++;
    uint64_t seen = 0, mlo = lo, mhi = hi;
    for (j = i; j < s->n && s->v[j].lo <= hi; j++) {
        seen += overlap(&s->v[j], lo, hi);
        if (s->v[j].lo < mlo)
            mlo = s->v[j].lo;
        if (s->v[j].hi > mhi)
            mhi = s->v[j].hi;
    }
    if (i == j) {
        if (s->n == s->cap) {
            uint32_t cap = s->cap ? s->cap * 2 : 4;
            struct pme_range *v = realloc(s->v, cap * sizeof(*v));
            if (!v)
                return hi - lo;
            s->v = v;
            s->cap = cap;
        }
        memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
        s->n++;
    } else if (j - i > 1) {
        memmove(&s->v[i + 1], &s->v[j], (s->n - j) * sizeof(*s->v));
        s->n -= j - i - 1;
    }
    s->v[i].lo = mlo;
    s->v[i].hi = mhi;
    return (hi - lo) - seen;
}

void pme_ranges_free(struct pme_ranges *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}
