/* SPDX-License-Identifier: BSD-3-Clause */
/* seq.h - 32-bit sequence and counter arithmetic that survives wrap-around. */
#ifndef PME_SEQ_H
#define PME_SEQ_H

#include <stdint.h>

/* a comes before b when b is less than 2^31 ahead of it (RFC 1982 style). */
static inline int pme_seq_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

static inline int pme_seq_after(uint32_t a, uint32_t b)
{
    return pme_seq_before(b, a);
}

/* a is in [lo, hi). */
static inline int pme_seq_in(uint32_t a, uint32_t lo, uint32_t hi)
{
    return (uint32_t)(a - lo) < (uint32_t)(hi - lo);
}

/* Room left under a cumulative limit, negative when used has passed it. */
static inline int64_t pme_credit_room(uint32_t limit, uint32_t used)
{
    return (int32_t)(limit - used);
}

#endif
