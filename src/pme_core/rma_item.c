// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_item.c - the queue items that carry one-sided requests and answers. An item holds
 * the sub-header of its first frame and a cursor over its payload; the link rebuilds
 * frame i from them whenever it goes (again), advancing the offset by the payload of
 * the frames before.
 *
 * Layout of the item's data: the sub-header, two iovec entries, the cursor, then the
 * payload's own copy when it has one (inline_bytes). The item is never moved, so the
 * cursor may point into it.
 */
#include <string.h>

#include "rma.h"

#define IOV_MAX_ENTRIES 2

struct layout {
    struct pme_wire_rma r;
    struct iovec iov[IOV_MAX_ENTRIES];
    struct pme_iov_cursor cur;
    uint8_t payload[];
};

struct pme_txmsg *pme_rma_item(struct pme_ep *ep, const struct pme_wire_rma *r,
                               const struct iovec *iov, int iovcnt, size_t inline_bytes)
{
    if (iovcnt > IOV_MAX_ENTRIES)
        return NULL;
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_RMA, sizeof(struct layout) + inline_bytes);
    if (!m)
        return NULL;
    struct layout *l = (struct layout *)m->data;
    l->r = *r;
    if (inline_bytes) {
        l->iov[0].iov_base = l->payload;
        l->iov[0].iov_len = inline_bytes;
        iovcnt = 1;
    } else if (iovcnt) {
        memcpy(l->iov, iov, (size_t)iovcnt * sizeof(*iov));
    }
    pme_iov_cursor_init(&l->cur, l->iov, iovcnt);
    m->cur = &l->cur;
    m->len = pme_iov_total(l->iov, iovcnt);
    return m;
}

uint8_t *pme_rma_item_inline(struct pme_txmsg *m)
{
    return ((struct layout *)m->data)->payload;
}

size_t pme_rma_item_flatten(const struct pme_txmsg *m, uint8_t *dst)
{
    const struct layout *l = (const struct layout *)m->data;
    memcpy(dst, &l->r, sizeof(l->r));
    size_t off = sizeof(l->r);
    for (int i = 0; i < l->cur.iovcnt; i++) {
        memcpy(dst + off, l->cur.iov[i].iov_base, l->cur.iov[i].iov_len);
        off += l->cur.iov[i].iov_len;
    }
    return off;
}

const struct pme_wire_rma *pme_rma_item_header(const struct pme_txmsg *m)
{
    return &((const struct layout *)m->data)->r;
}
