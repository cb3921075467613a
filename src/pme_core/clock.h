/* SPDX-License-Identifier: BSD-3-Clause */
/* clock.h - the monotonic clock every timer in pme_core reads. */
#ifndef PME_CLOCK_H
#define PME_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t pme_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
