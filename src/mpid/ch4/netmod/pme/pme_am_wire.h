/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - the netmod's own header in front of every PME message, and the one function
 * that reads it back. Plain C, without MPICH's headers, so that it is unit-tested and
 * fuzzed with pme_core's tests (test/fuzz).
 */
#ifndef PME_AM_WIRE_H_INCLUDED
#define PME_AM_WIRE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Which MPIDIG handler runs at the target, and the virtual communication interfaces.
 * 8 bytes, so that the MPIDIG header after it keeps the 8-byte alignment its
 * structures need. */
typedef struct {
    uint8_t handler_id;
    uint8_t src_vci;
    uint8_t dst_vci;
    uint8_t kind;               /* MPIDI_PME_KIND_* */
    uint32_t tag;               /* KIND_DYNPROC: the port tag */
} MPIDI_PME_wire_hdr_t;

#define MPIDI_PME_KIND_AM       0       /* an MPIDIG active message */
#define MPIDI_PME_KIND_DYNPROC  1       /* connect/accept handshake (dynamic_send) */

/* Bytes of MPIDIG header every handler may read. MPIDIG's handlers read their header
 * structure whole, whatever arrived; a shorter header is handed to them zero-padded to
 * this size, so that a short (malformed) header is never read past its end. Larger
 * than every MPIDIG header structure (am.c asserts it). */
#define MPIDI_PME_AM_HDR_FLOOR 256

typedef struct {
    int kind;
    int handler_id;
    int src_vci, dst_vci;
    uint32_t tag;
    const void *am_hdr;         /* at least MPIDI_PME_AM_HDR_FLOOR readable bytes */
    size_t am_hdr_len;          /* bytes that arrived */
} MPIDI_PME_am_parsed_t;

/* Read a message's header (hdr_len bytes, 8-byte aligned): 0 and *out when it is well
 * formed, -1 when it is too short or names an unknown kind or a handler id at or
 * beyond handlers_max. A short MPIDIG header is copied into scratch (8-byte aligned,
 * MPIDI_PME_AM_HDR_FLOOR bytes) and zero-padded. */
static inline int MPIDI_PME_am_parse(const void *hdr, size_t hdr_len, int handlers_max,
                                     void *scratch, MPIDI_PME_am_parsed_t * out)
{
    const MPIDI_PME_wire_hdr_t *wh = (const MPIDI_PME_wire_hdr_t *) hdr;
    if (!hdr || hdr_len < sizeof(*wh))
        return -1;
    if (wh->kind != MPIDI_PME_KIND_AM && wh->kind != MPIDI_PME_KIND_DYNPROC)
        return -1;
    if (wh->kind == MPIDI_PME_KIND_AM && (int) wh->handler_id >= handlers_max)
        return -1;
    out->kind = wh->kind;
    out->handler_id = wh->handler_id;
    out->src_vci = wh->src_vci;
    out->dst_vci = wh->dst_vci;
    out->tag = wh->tag;
    out->am_hdr_len = hdr_len - sizeof(*wh);
    out->am_hdr = (const char *) hdr + sizeof(*wh);
    if (out->am_hdr_len < MPIDI_PME_AM_HDR_FLOOR) {
        memset(scratch, 0, MPIDI_PME_AM_HDR_FLOOR);
        memcpy(scratch, out->am_hdr, out->am_hdr_len);
        out->am_hdr = scratch;
    }
    return 0;
}

#endif /* PME_AM_WIRE_H_INCLUDED */
