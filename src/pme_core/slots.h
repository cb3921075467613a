/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slots.h - a table of pointers named by 32-bit handles that go stale on reuse.
 *
 * A handle is (generation << 20 | index). The generation changes each time a slot is
 * reused, so a late frame naming an old handle (a CTS after a cancel, a duplicate) finds
 * nothing instead of someone else's request.
 */
#ifndef PME_SLOTS_H
#define PME_SLOTS_H

#include <stdint.h>

#define PME_SLOT_INDEX_BITS 20
#define PME_SLOT_MAX (1u << PME_SLOT_INDEX_BITS)

struct pme_slot {
    void *ptr;
    uint32_t gen;
    uint32_t next_free;
};

struct pme_slots {
    struct pme_slot *s;
    uint32_t n, cap;
    uint32_t free_head;     /* index + 1, 0 when none */
    uint32_t used;
};

/* Store ptr; return its handle, or 0 when the table is full or memory ran out. */
uint32_t pme_slots_put(struct pme_slots *t, void *ptr);
/* The pointer a live handle names, or NULL. */
void *pme_slots_get(const struct pme_slots *t, uint32_t handle);
void pme_slots_del(struct pme_slots *t, uint32_t handle);
void pme_slots_free(struct pme_slots *t);
/* Iterate: call fn for every live pointer (fn may delete it). */
void pme_slots_each(struct pme_slots *t, void (*fn)(void *ptr, void *arg), void *arg);

#endif
