/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cache.h - recycled buffers for the per-message allocations of the eager path.
 *
 * Every eager message needs a send copy and a receive buffer; malloc and free of
 * those sit on the latency path. Freed buffers wait in per-size-class lists (powers
 * of two) for the next message of that class, up to a bounded number per class.
 */
#ifndef PME_CACHE_H
#define PME_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define PME_CACHE_CLASSES 12        /* 64 B .. 128 KiB */
#define PME_CACHE_DEPTH 64          /* buffers kept per class */

struct pme_cache {
    void *head[PME_CACHE_CLASSES];
    uint16_t count[PME_CACHE_CLASSES];
};

/* size bytes, 16-byte aligned; NULL when memory runs out. */
void *pme_cache_alloc(struct pme_cache *c, size_t size);
void pme_cache_free(struct pme_cache *c, void *p);
void pme_cache_destroy(struct pme_cache *c);

#endif
