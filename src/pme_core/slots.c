// SPDX-License-Identifier: BSD-3-Clause
/* slots.c - handle tables for rendezvous requests on both sides. */
#include "slots.h"

#include <stdlib.h>

#define GEN_MASK ((1u << (32 - PME_SLOT_INDEX_BITS)) - 1)

static uint32_t make_handle(uint32_t idx, uint32_t gen)
{
    return (gen << PME_SLOT_INDEX_BITS) | idx;
}

uint32_t pme_slots_put(struct pme_slots *t, void *ptr)
{
    uint32_t idx;
    if (t->free_head) {
        idx = t->free_head - 1;
        t->free_head = t->s[idx].next_free;
    } else {
        if (t->n == t->cap) {
            uint32_t cap = t->cap ? t->cap * 2 : 64;
            if (cap > PME_SLOT_MAX)
                cap = PME_SLOT_MAX;
            if (cap == t->cap)
                return 0;
            struct pme_slot *s = realloc(t->s, cap * sizeof(*s));
            if (!s)
                return 0;
            t->s = s;
            t->cap = cap;
        }
        idx = t->n++;
        t->s[idx].gen = 0;
    }
    /* Generation 0 is never handed out, so handle 0 means "none". */
    t->s[idx].gen = (t->s[idx].gen + 1) & GEN_MASK;
    if (t->s[idx].gen == 0)
        t->s[idx].gen = 1;
    t->s[idx].ptr = ptr;
    t->used++;
    return make_handle(idx, t->s[idx].gen);
}

void *pme_slots_get(const struct pme_slots *t, uint32_t handle)
{
    uint32_t idx = handle & (PME_SLOT_MAX - 1);
    uint32_t gen = handle >> PME_SLOT_INDEX_BITS;
    if (idx >= t->n || t->s[idx].gen != gen || !t->s[idx].ptr)
        return NULL;
    return t->s[idx].ptr;
}

void pme_slots_del(struct pme_slots *t, uint32_t handle)
{
    uint32_t idx = handle & (PME_SLOT_MAX - 1);
    if (!pme_slots_get(t, handle))
        return;
    t->s[idx].ptr = NULL;
    t->s[idx].next_free = t->free_head;
    t->free_head = idx + 1;
    t->used--;
}

void pme_slots_each(struct pme_slots *t, void (*fn)(void *ptr, void *arg), void *arg)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->s[i].ptr)
            fn(t->s[i].ptr, arg);
}

void pme_slots_free(struct pme_slots *t)
{
    free(t->s);
    t->s = NULL;
    t->n = t->cap = t->free_head = t->used = 0;
}
