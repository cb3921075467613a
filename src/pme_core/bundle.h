/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bundle.h - the records of a bundle (pme_wire.h: a pme_wire_bundle, then records, each
 * a pme_wire_rec and its bytes, each record's bytes at a multiple of PME_BUNDLE_ALIGN).
 * Eager messages (eager.c) and one-sided requests and answers (rma_bundle.c) travel in
 * bundles of the same layout; this is the one place that writes and checks it.
 */
#ifndef PME_BUNDLE_H
#define PME_BUNDLE_H

#include <stdint.h>

#include "pme_wire.h"

#define PME_BUNDLE_HDR ((uint32_t)sizeof(struct pme_wire_bundle))
#define PME_BUNDLE_REC ((uint32_t)sizeof(struct pme_wire_rec))

/* Where the next record's header goes in a bundle whose bytes end at `end` and that
 * holds nrec records. */
static inline uint32_t pme_bundle_next_rec(uint32_t end, unsigned nrec)
{
    return nrec ? pme_wire_rec_after(end) : PME_BUNDLE_HDR;
}

/* Write the header of a record of len bytes (hdr_len of them a user header) at `at`. */
void pme_bundle_put_rec(uint8_t *at, uint32_t len, uint16_t hdr_len);
/* Write the bundle's header: it holds count records. */
void pme_bundle_put_count(uint8_t *bundle, uint16_t count);
/* How many records the len bytes of a bundle hold, every one checked to lie within
 * them and the last to end them; 0 when one does not (nothing is read past len). */
unsigned pme_bundle_count(const uint8_t *bundle, uint32_t len);
/* The record whose header is at `at` (in a bundle pme_bundle_count checked): its bytes'
 * length and user header length; returns where the next record's header is. */
uint32_t pme_bundle_rec(const uint8_t *bundle, uint32_t at, uint32_t *len, uint16_t *hdr_len);

#endif
