// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_am.c - libFuzzer target for the netmod's reading of its own header and the
 * MPIDIG header behind it (src/mpid/ch4/netmod/pme/pme_am_wire.h): whatever arrives,
 * the parser either refuses it or hands out a header that may be read for
 * MPIDI_PME_AM_HDR_FLOOR bytes, as MPIDIG's handlers do.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pme_am_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The header as pme_core hands it out: its own allocation, 8-byte aligned, so the
     * sanitizer sees any read past its end. */
    uint64_t *hdr = malloc(size ? size : 1);
    uint64_t scratch[MPIDI_PME_AM_HDR_FLOOR / 8];
    MPIDI_PME_am_parsed_t am;
    if (!hdr)
        return 0;
    memcpy(hdr, data, size);
    if (MPIDI_PME_am_parse(hdr, size, 64, scratch, &am) == 0) {
        volatile uint8_t sum = 0;
        const uint8_t *h = am.am_hdr;
        for (size_t i = 0; i < MPIDI_PME_AM_HDR_FLOOR; i++)
            sum ^= h[i];
        if (am.kind == MPIDI_PME_KIND_AM && am.handler_id >= 64)
            abort(); /* the parser let an out-of-range handler through */
        if (am.am_hdr_len + sizeof(MPIDI_PME_wire_hdr_t) != size)
            abort();
    }
    free(hdr);
    return 0;
}
