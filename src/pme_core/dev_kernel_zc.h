/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dev_kernel_zc.h - the kernel device's zero copy: the buffers it sends from and the
 * rendezvous receives it armed, and the driver's calls for them (pme_ioctl.h).
 */
#ifndef PME_DEV_KERNEL_ZC_H
#define PME_DEV_KERNEL_ZC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A buffer frames are sent from: a region the driver keeps pinned while held. */
struct pme_kzc_send {
    uintptr_t addr;
    size_t len;
    uint32_t region;        /* the driver's id */
    uint32_t uses;          /* zc_send_begin calls not yet ended */
};

/* A rendezvous receive the driver places data for. */
struct pme_kzc_recv {
    uint32_t key;
    bool finished;          /* the driver ended the arm with its last byte */
};

struct pme_kzc {
    int fd;                 /* the device's /dev/pme; -1 or !on: no zero copy */
    bool on;                /* the module speaks ABI 3 */
    struct pme_kzc_send *send;
    unsigned nsend, send_cap, send_last;
    struct pme_kzc_recv *recv;
    unsigned nrecv, recv_cap;
};

int pme_kzc_send_begin(struct pme_kzc *z, const void *buf, size_t len);
void pme_kzc_send_end(struct pme_kzc *z, const void *buf, size_t len);
/* The region whose pages hold [p, p + len) for a frame's payload, 0 if none. */
uint32_t pme_kzc_send_region(struct pme_kzc *z, const void *p, size_t len);
int pme_kzc_recv_begin(struct pme_kzc *z, uint32_t key, uint32_t node, uint16_t ep, void *buf,
                       size_t len);
void pme_kzc_recv_end(struct pme_kzc *z, uint32_t key);
/* A placed frame said its arm is over: no disarm is needed for key. */
void pme_kzc_recv_finished(struct pme_kzc *z, uint32_t key);
void pme_kzc_free(struct pme_kzc *z);

#endif
