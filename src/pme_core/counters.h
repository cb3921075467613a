/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counters.h - layer 5: the endpoint's id claim and its published counters (the file
 * pme_info reads; layout in counters_layout.h, where it lives in counters_shm.h).
 */
#ifndef PME_COUNTERS_H
#define PME_COUNTERS_H

#include "pme_internal.h"

/* Claim an endpoint id (ep->self.ep): the one asked for or a free one (claim.h). Called
 * again after pme_counters_unclaim, it goes on with the next free id: the kernel
 * device's own table may find the one claimed here taken (by another user). */
int pme_counters_claim(struct pme_ep *ep);
void pme_counters_unclaim(struct pme_ep *ep);
/* Once the id is final: the counter file (in the user's own directory, if there is
 * one and counters are published) or anonymous memory of the same layout. */
int pme_counters_open(struct pme_ep *ep);
void pme_counters_publish(struct pme_ep *ep);
void pme_counters_sync(struct pme_ep *ep);
void pme_counters_close(struct pme_ep *ep);

#endif
