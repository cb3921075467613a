/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ranges.h - a set of byte ranges [lo, hi), kept sorted and merged: what of a
 * rendezvous stream has landed when its fragments come in any order (striped over
 * rails, or resent over another rail), so that each byte counts once.
 */
#ifndef PME_RANGES_H
#define PME_RANGES_H

#include <stdint.h>

struct pme_range {
    uint64_t lo, hi;
};

struct pme_ranges {
    struct pme_range *v;    /* sorted, disjoint, not touching */
    uint32_t n, cap;
};

/* Add [lo, hi); returns how many of its bytes were not in the set before (0: all
 * were). Out of memory: the range is counted as new but not kept (a later duplicate of
 * it would count again; the caller's total check stays the guard). */
uint64_t pme_ranges_add(struct pme_ranges *s, uint64_t lo, uint64_t hi);
void pme_ranges_free(struct pme_ranges *s);

#endif
