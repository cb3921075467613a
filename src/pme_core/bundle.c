// SPDX-License-Identifier: BSD-3-Clause
/*
 * bundle.c - writing and checking the records of a bundle (bundle.h).
 */
#include <arpa/inet.h>
#include <string.h>

#include "bundle.h"

void pme_bundle_put_rec(uint8_t *at, uint32_t len, uint16_t hdr_len)
{
    struct pme_wire_rec rec = {htonl(len), htons(hdr_len), 0};
    memcpy(at, &rec, sizeof(rec));
}

void pme_bundle_put_count(uint8_t *bundle, uint16_t count)
{
    struct pme_wire_bundle bh = {htons(count), 0, 0};
    memcpy(bundle, &bh, sizeof(bh));
}

uint32_t pme_bundle_rec(const uint8_t *bundle, uint32_t at, uint32_t *len, uint16_t *hdr_len)
{
    struct pme_wire_rec rec;
    memcpy(&rec, bundle + at, sizeof(rec));
    *len = ntohl(rec.len);
    *hdr_len = ntohs(rec.hdr_len);
    return pme_wire_rec_after(at + PME_BUNDLE_REC + *len);
}

unsigned pme_bundle_count(const uint8_t *bundle, uint32_t len)
{
    if (len < PME_BUNDLE_HDR + PME_BUNDLE_REC)
        return 0;
    struct pme_wire_bundle bh;
    memcpy(&bh, bundle, sizeof(bh));
    unsigned count = ntohs(bh.count);
    uint32_t at = PME_BUNDLE_HDR;
    for (unsigned i = 0; i < count; i++) {
        if (at > len || len - at < PME_BUNDLE_REC)
            return 0;
        struct pme_wire_rec rec;
        memcpy(&rec, bundle + at, sizeof(rec));
        uint32_t rlen = ntohl(rec.len);
        if (rlen > len - at - PME_BUNDLE_REC || ntohs(rec.hdr_len) > rlen)
            return 0;
        uint32_t end = at + PME_BUNDLE_REC + rlen;
        if (i + 1 == count)
            return end == len ? count : 0;
        at = pme_wire_rec_after(end);
    }
    return 0; /* count 0 */
}
