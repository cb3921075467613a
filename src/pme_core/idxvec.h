/* SPDX-License-Identifier: BSD-3-Clause */
/* idxvec.h - a growable vector of peer indices (timer list, dirty list, suspects). */
#ifndef PME_IDXVEC_H
#define PME_IDXVEC_H

#include <stdint.h>
#include <stdlib.h>

struct pme_idxvec {
    uint32_t *v;
    uint32_t n, cap;
};

static inline void pme_idxvec_push(struct pme_idxvec *v, uint32_t x)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 64;
        uint32_t *nv = realloc(v->v, cap * sizeof(*nv));
        if (!nv)
            abort(); /* a few hundred bytes: nothing sane remains if they are not there */
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}

static inline void pme_idxvec_free(struct pme_idxvec *v)
{
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

#endif
