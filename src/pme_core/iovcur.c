// SPDX-License-Identifier: BSD-3-Clause
/*
 * iovcur.c - walking a caller's iovec by byte offset.
 *
 * Rendezvous fragments are gathered from the sender's iovec and scattered into the
 * receiver's at their offsets, without staging copies. Fragments come in order, so a
 * cursor that remembers where it stopped makes each step O(1); a Go-Back-N rewind
 * seeks from the front.
 */
#include <string.h>

#include "iovcur.h"

uint64_t pme_iov_total(const struct iovec *iov, int iovcnt)
{
    uint64_t t = 0;
    for (int i = 0; i < iovcnt; i++)
        t += iov[i].iov_len;
    return t;
}

void pme_iov_cursor_init(struct pme_iov_cursor *c, const struct iovec *iov, int iovcnt)
{
    c->iov = iov;
    c->iovcnt = iovcnt;
    c->idx = 0;
    c->in = 0;
    c->pos = 0;
}

/* Step over empty entries and entries consumed to their end. */
static void settle(struct pme_iov_cursor *c)
{
    while (c->idx < c->iovcnt && c->in >= c->iov[c->idx].iov_len) {
        c->in = 0;
        c->idx++;
    }
}

void pme_iov_cursor_seek(struct pme_iov_cursor *c, uint64_t pos)
{
    if (pos < c->pos) {
        c->idx = 0;
        c->in = 0;
        c->pos = 0;
    }
    uint64_t skip = pos - c->pos;
    while (skip && c->idx < c->iovcnt) {
        size_t room = c->iov[c->idx].iov_len - c->in;
        size_t step = skip < room ? (size_t)skip : room;
        c->in += step;
        c->pos += step;
        skip -= step;
        settle(c);
    }
    settle(c);
}

int pme_iov_cursor_slice(struct pme_iov_cursor *c, size_t len, struct iovec *out, int max)
{
    int n = 0;
    struct pme_iov_cursor saved = *c;
    settle(c);
    while (len && c->idx < c->iovcnt) {
        if (n == max) {
            *c = saved;
            return -1;
        }
        size_t room = c->iov[c->idx].iov_len - c->in;
        size_t step = len < room ? len : room;
        out[n].iov_base = (uint8_t *)c->iov[c->idx].iov_base + c->in;
        out[n].iov_len = step;
        n++;
        c->in += step;
        c->pos += step;
        len -= step;
        settle(c);
    }
    return n;
}

size_t pme_iov_cursor_copy_in(struct pme_iov_cursor *c, const uint8_t *src, size_t len)
{
    size_t done = 0;
    settle(c);
    while (len && c->idx < c->iovcnt) {
        size_t room = c->iov[c->idx].iov_len - c->in;
        size_t step = len < room ? len : room;
        memcpy((uint8_t *)c->iov[c->idx].iov_base + c->in, src + done, step);
        c->in += step;
        c->pos += step;
        done += step;
        len -= step;
        settle(c);
    }
    return done;
}
