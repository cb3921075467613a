/* SPDX-License-Identifier: BSD-3-Clause */
/* iovcur.h - an iovec walked front to back with a remembered position. */
#ifndef PME_IOVCUR_H
#define PME_IOVCUR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct pme_iov_cursor {
    const struct iovec *iov;
    int iovcnt;
    int idx;            /* entry holding position pos */
    size_t in;          /* offset of pos inside iov[idx] */
    uint64_t pos;
};

void pme_iov_cursor_init(struct pme_iov_cursor *c, const struct iovec *iov, int iovcnt);
/* Move to pos (forward cheaply; backward starts over). */
void pme_iov_cursor_seek(struct pme_iov_cursor *c, uint64_t pos);
/* Describe len bytes from the cursor in out (at most max entries) and advance; returns
 * entries used, or -1 (cursor unchanged) if more than max are needed. */
int pme_iov_cursor_slice(struct pme_iov_cursor *c, size_t len, struct iovec *out, int max);
/* Copy len bytes from src into the iovec at the cursor; returns bytes copied. */
size_t pme_iov_cursor_copy_in(struct pme_iov_cursor *c, const uint8_t *src, size_t len);
uint64_t pme_iov_total(const struct iovec *iov, int iovcnt);

#endif
