// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_kernel_zc.c - the kernel device's zero copy (pme.ko, see kmod/pme_zc.c).
 *
 * Sending: a buffer being sent from is registered with the driver (PME_IOC_ZC_REG),
 * which pins its pages, or finds them pinned already in its cache; each RDATA frame
 * whose payload lies in it then goes as a PME_KTX_SEND_ZC slot naming the region, and
 * the driver sends the payload from those pages. The registration is let go when the
 * rendezvous completes, after its last frame was acknowledged, so that every
 * retransmission goes from the same pages; the driver keeps the region pinned for the
 * next time until the process unmaps the memory.
 *
 * Receiving: an accepted rendezvous is armed (PME_IOC_ZC_ARM); the driver writes its
 * payload into the buffer and hands the frames' headers to the ring. Disarmed when
 * the receive ends, unless the driver said it finished the arm itself.
 *
 * Every failure here only means the data is copied as without zero copy.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "dev_kernel_zc.h"
#include "pme.h"
#include "pme_ioctl.h"

/* Room for one more entry in a growing array of `size`-byte entries. */
static int grow(void **v, unsigned n, unsigned *cap, size_t size)
{
    if (n < *cap)
        return 0;
    unsigned ncap = *cap ? 2 * *cap : 8;
    void *nv = realloc(*v, (size_t)ncap * size);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

int pme_kzc_send_begin(struct pme_kzc *z, const void *buf, size_t len)
{
    if (!z->on || !len)
        return PME_ERR_INVAL;
    for (unsigned i = 0; i < z->nsend; i++) {
        struct pme_kzc_send *s = &z->send[i];
        if (s->addr == (uintptr_t)buf && s->len == len) {
            s->uses++;
            return PME_OK;
        }
    }
    if (grow((void **)&z->send, z->nsend, &z->send_cap, sizeof(*z->send)))
        return PME_ERR_NOMEM;
    struct pme_kzc_reg r = {.addr = (uintptr_t)buf, .len = len, .flags = PME_KZC_SEND};
    if (ioctl(z->fd, PME_IOC_ZC_REG, &r) < 0)
        return PME_ERR_DEVICE; /* over RLIMIT_MEMLOCK, say: copied instead */
    z->send[z->nsend++] = (struct pme_kzc_send){(uintptr_t)buf, len, r.id, 1};
    return PME_OK;
}

void pme_kzc_send_end(struct pme_kzc *z, const void *buf, size_t len)
{
    for (unsigned i = 0; i < z->nsend; i++) {
        struct pme_kzc_send *s = &z->send[i];
        if (s->addr != (uintptr_t)buf || s->len != len)
            continue;
        if (--s->uses)
            return;
        uint32_t id = s->region;
        ioctl(z->fd, PME_IOC_ZC_UNREG, &id);
        *s = z->send[--z->nsend];
        z->send_last = 0;
        return;
    }
}

uint32_t pme_kzc_send_region(struct pme_kzc *z, const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p;
    for (unsigned k = 0; k < z->nsend; k++) {
        /* Frames of one buffer come in runs: start with the last one that matched. */
        unsigned i = (z->send_last + k) % z->nsend;
        const struct pme_kzc_send *s = &z->send[i];
        if (a >= s->addr && len <= s->len && a - s->addr <= s->len - len) {
            z->send_last = i;
            return s->region;
        }
    }
    return 0;
}

int pme_kzc_recv_begin(struct pme_kzc *z, uint32_t key, uint32_t node, uint16_t ep, void *buf,
                       size_t len)
{
    if (!z->on || !len)
        return PME_ERR_INVAL;
    if (grow((void **)&z->recv, z->nrecv, &z->recv_cap, sizeof(*z->recv)))
        return PME_ERR_NOMEM;
    struct pme_kzc_arm a = {
        .addr = (uintptr_t)buf, .len = len, .rndv_id = key, .src_node = node, .src_ep = ep,
    };
    if (ioctl(z->fd, PME_IOC_ZC_ARM, &a) < 0)
        return PME_ERR_DEVICE;
    z->recv[z->nrecv++] = (struct pme_kzc_recv){key, false};
    return PME_OK;
}

static struct pme_kzc_recv *find_recv(struct pme_kzc *z, uint32_t key)
{
    for (unsigned i = 0; i < z->nrecv; i++)
        if (z->recv[i].key == key)
            return &z->recv[i];
    return NULL;
}

void pme_kzc_recv_end(struct pme_kzc *z, uint32_t key)
{
    struct pme_kzc_recv *r = find_recv(z, key);
    if (!r)
        return;
    /* Once this returns the driver writes nothing more into the buffer. */
    if (!r->finished)
        ioctl(z->fd, PME_IOC_ZC_DISARM, &key);
    *r = z->recv[--z->nrecv];
}

void pme_kzc_recv_finished(struct pme_kzc *z, uint32_t key)
{
    struct pme_kzc_recv *r = find_recv(z, key);
    if (r)
        r->finished = true;
}

/* The file's closing drops every region and arm in the driver. */
void pme_kzc_free(struct pme_kzc *z)
{
    free(z->send);
    free(z->recv);
    memset(z, 0, sizeof(*z));
    z->fd = -1;
}
