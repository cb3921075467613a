// SPDX-License-Identifier: BSD-3-Clause
/* cache.c - see cache.h. A 16-byte prefix before each buffer names its class. */
#include "cache.h"

#include <stdlib.h>

#define PREFIX 16
#define UNCACHED 0xff

struct prefix {
    void *next;             /* while on a free list */
    uint8_t cls;
};

static unsigned size_class(size_t size)
{
    unsigned cls = 0;
    size_t cap = 64;
    while (cap < size && cls < PME_CACHE_CLASSES) {
        cap <<= 1;
        cls++;
    }
    return cls < PME_CACHE_CLASSES ? cls : UNCACHED;
}

void *pme_cache_alloc(struct pme_cache *c, size_t size)
{
    unsigned cls = size_class(size);
    struct prefix *h;
    if (cls != UNCACHED && c->head[cls]) {
        h = c->head[cls];
        c->head[cls] = h->next;
        c->count[cls]--;
    } else {
        h = malloc(PREFIX + (cls == UNCACHED ? size : (size_t)64 << cls));
        if (!h)
            return NULL;
        h->cls = (uint8_t)cls;
    }
    return (uint8_t *)h + PREFIX;
}

void pme_cache_free(struct pme_cache *c, void *p)
{
    if (!p)
        return;
    struct prefix *h = (struct prefix *)((uint8_t *)p - PREFIX);
    if (h->cls == UNCACHED || c->count[h->cls] >= PME_CACHE_DEPTH) {
        free(h);
        return;
    }
    h->next = c->head[h->cls];
    c->head[h->cls] = h;
    c->count[h->cls]++;
}

void pme_cache_destroy(struct pme_cache *c)
{
    for (unsigned i = 0; i < PME_CACHE_CLASSES; i++) {
        while (c->head[i]) {
            struct prefix *h = c->head[i];
            c->head[i] = h->next;
            free(h);
        }
        c->count[i] = 0;
    }
}
