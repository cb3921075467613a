// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_bundle_in.c - bundles of one-sided requests and answers from a peer (pme_wire.h,
 * PME_RMA_BUNDLE; rma_bundle.c makes them): every record is checked before any is acted
 * on, then each is taken as the frame of its own it would otherwise have come in.
 */
#include <string.h>

#include "bundle.h"
#include "rma.h"

/* The records' count when every one holds a sub-header, else 0; *requests: how many are
 * requests (each may need an answer, if only a NAK). */
static unsigned check(const uint8_t *bytes, uint32_t len, unsigned *requests)
{
    unsigned n = pme_bundle_count(bytes, len);
    uint32_t at = PME_BUNDLE_HDR;
    *requests = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t rlen;
        uint16_t hdr_len;
        uint32_t next = pme_bundle_rec(bytes, at, &rlen, &hdr_len);
        if (rlen < sizeof(struct pme_wire_rma) || hdr_len)
            return 0;
        *requests += !pme_wire_rma_is_answer(bytes[at + PME_BUNDLE_REC]);
        at = next;
    }
    return n;
}

int pme_rma_on_bundle(struct pme_ep *ep, pme_peer_t idx, const uint8_t *bytes, size_t len,
                      uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    unsigned requests = 0, n = 0;
    if ((flags & (PME_F_FIRST | PME_F_LAST)) == (PME_F_FIRST | PME_F_LAST) &&
        len <= UINT32_MAX)
        n = check(bytes, (uint32_t)len, &requests);
    if (!n) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    /* Whole or not at all: room for an answer to every request before any is acted on,
     * so that refusing the frame (the link resends it) never repeats an operation. */
    if (requests && p->rma_answers + requests > PME_RMA_MAX_ANSWERS)
        return PME_RX_NO_BUFFER;
    uint32_t at = PME_BUNDLE_HDR;
    for (unsigned i = 0; i < n; i++) {
        uint32_t rlen;
        uint16_t hdr_len;
        uint32_t next = pme_bundle_rec(bytes, at, &rlen, &hdr_len);
        const uint8_t *rec = bytes + at + PME_BUNDLE_REC;
        struct pme_wire_rma r;
        memcpy(&r, rec, sizeof(r));
        if (pme_wire_rma_is_answer(r.op))
            pme_rma_on_answer(ep, idx, rec, rlen);
        else if (pme_rma_takes_lock(&r))
            pme_rma_refuse(ep, idx, &r, PME_RMA_E_OP); /* it could wait: only alone */
        else
            pme_rma_on_request(ep, idx, rec, rlen, PME_F_FIRST | PME_F_LAST);
        at = next;
    }
    ep->ctr->rx_bundles++;
    return 0;
}
