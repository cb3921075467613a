/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * held.h - the receiver's half of selective retransmission: the frames of a rail that
 * arrived after a gap, copied and kept until the gap fills, so that the sender resends
 * only the frames that were lost (the LOSE names them) and not the whole window.
 *
 * Frames are held by sequence number, at most a window ahead of the next one due; an
 * endpoint-wide byte budget (PME_HOLD) bounds the copies. A frame that finds no room is
 * dropped, and link_rx.c answers its gap as plain Go-Back-N does.
 */
#ifndef PME_HELD_H
#define PME_HELD_H

#include <stddef.h>
#include <stdint.h>

struct pme_held_frame {
    uint32_t seq;
    uint32_t len;           /* bytes of frame[]: the PME header and what follows */
    _Alignas(8) uint8_t frame[];
};

struct pme_held {
    struct pme_held_frame **slot; /* [window], by seq % window (NULL: nothing held yet) */
    uint32_t n;             /* frames held */
    uint32_t high;          /* while n: one past the highest sequence number seen */
};

enum pme_hold_result { PME_HOLD_KEPT, PME_HOLD_ALREADY, PME_HOLD_NO_ROOM };

/* Keep a copy of frame seq (len bytes from its PME header). *budget is the endpoint's
 * bytes still free for held frames; window the rail's window, which the caller checked
 * seq against. */
enum pme_hold_result pme_held_put(struct pme_held *h, unsigned window, size_t *budget,
                                  uint32_t seq, const void *frame, size_t len);
/* The frame seq if it is held: the caller owns it now and gives it back with
 * pme_held_release. NULL when it is not. */
struct pme_held_frame *pme_held_take(struct pme_held *h, unsigned window, uint32_t seq);
void pme_held_release(struct pme_held_frame *f, size_t *budget);
/* The first frame held from seq on (h->high when none is). */
uint32_t pme_held_next(const struct pme_held *h, unsigned window, uint32_t seq);
/* Forget every frame held (the sender resends from the first one anyway), and the
 * slots themselves. */
void pme_held_clear(struct pme_held *h, unsigned window, size_t *budget);

#endif
