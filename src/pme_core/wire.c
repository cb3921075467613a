// SPDX-License-Identifier: BSD-3-Clause
/* wire.c - see wire.h. */
#include "wire.h"

#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "crc32c.h"

#define HDR_BYTES sizeof(struct pme_wire_hdr)

int pme_wire_keys_init(struct pme_wire_keys *k, int auth, const uint8_t *secret,
                       size_t secret_len, uint32_t job_id, char *err, size_t errlen)
{
    memset(k, 0, sizeof(*k));
    k->auth = auth;
    if (auth < PME_AUTH_NONE || auth > PME_AUTH_MAC) {
        snprintf(err, errlen, "unknown authentication mode %d", auth);
        return -1;
    }
    if (!secret_len) {
        if (auth == PME_AUTH_MAC) {
            snprintf(err, errlen,
                     "PME_AUTH=mac needs the job's secret: MPI jobs make one at MPI_Init; "
                     "other programs read it from PME_JOB_SECRET_FILE (or use PME_AUTH=crc "
                     "on a network where every host is trusted)");
            return -1;
        }
        k->job_id = job_id ? job_id : 1;
        return 0;
    }
    if (secret_len != PME_WIRE_SECRET_BYTES) {
        snprintf(err, errlen, "the job secret must be %d bytes, not %zu", PME_WIRE_SECRET_BYTES,
                 secret_len);
        return -1;
    }
    pme_gmac_init(&k->gmac, secret, PME_GMAC_BEST);
    /* The public job id is a PRF of the secret: it tells jobs apart cheaply (in the
     * kernel too) and reveals nothing of the key. */
    static const uint8_t label[16] = "PME job id v2";
    uint8_t out[16];
    pme_gmac_aes_block(&k->gmac, label, out);
    k->job_id = (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 | (uint32_t)out[2] << 8 | out[3];
    if (!k->job_id)
        k->job_id = 1;
    return 0;
}

void pme_wire_keys_wipe(struct pme_wire_keys *k)
{
    pme_gmac_wipe(&k->gmac);
    k->auth = PME_AUTH_NONE;
}

struct pme_wire_hdr *pme_wire_start(uint8_t *buf, const struct pme_wire_self *self,
                                    const uint8_t dst_mac[6], uint32_t dst_node,
                                    uint16_t dst_ep, int type, size_t len)
{
    memcpy(buf, dst_mac, 6);
    memcpy(buf + 6, self->mac, 6);
    memcpy(buf + 12, &self->ethertype_be, 2);
    struct pme_wire_hdr *wh = (struct pme_wire_hdr *)(buf + PME_ETH_HLEN);
    memset(wh, 0, sizeof(*wh));
    wh->dst_ep = htons(dst_ep);
    wh->version = PME_WIRE_VERSION;
    wh->type = (uint8_t)type;
    wh->src_ep = htons(self->ep);
    wh->len = htons((uint16_t)len);
    wh->dst_node = htonl(dst_node);
    wh->src_node = htonl(self->node);
    wh->incarnation = htonl(self->incarnation);
    return wh;
}

/* The GMAC IV of a frame: src_node || src_ep || 0 || incarnation || nonce, all taken
 * from the header as they travel. */
static void frame_iv(const struct pme_wire_hdr *wh, uint8_t iv[PME_WIRE_MAC_IV_BYTES])
{
    memcpy(iv, &wh->src_node, 4);
    memcpy(iv + 4, &wh->src_ep, 2);
    iv[6] = iv[7] = 0;
    memcpy(iv + 8, &wh->incarnation, 4);
    memcpy(iv + 12, &wh->nonce, 8);
}

/* The check's input: the header as given (the caller has zeroed hops_left and check),
 * then `pieces`. */
static void compute_check(const struct pme_wire_keys *k, int kind, const struct iovec *v,
                          int n, const struct pme_wire_hdr *wh, uint8_t out[16])
{
    memset(out, 0, 16);
    if (kind == PME_F_CHECK_MAC) {
        uint8_t iv[PME_WIRE_MAC_IV_BYTES];
        frame_iv(wh, iv);
        pme_gmac_tag(&k->gmac, iv, sizeof(iv), v, n, out);
        return;
    }
    uint32_t crc = 0;
    for (int i = 0; i < n; i++)
        crc = pme_crc32c(crc, v[i].iov_base, v[i].iov_len);
    crc = htonl(crc);
    memcpy(out, &crc, 4);
}

void pme_wire_seal(const struct pme_wire_keys *k, const struct pme_wire_self *self,
                   uint64_t nonce, struct pme_dev_frame *f)
{
    struct pme_wire_hdr *wh = (struct pme_wire_hdr *)((uint8_t *)f->iov[0].iov_base +
                                                      PME_ETH_HLEN);
    wh->nonce = htobe64(nonce);
    wh->hops_left = 0;
    memset(wh->check, 0, sizeof(wh->check));
    int kind = k->auth == PME_AUTH_MAC ? PME_F_CHECK_MAC
               : k->auth == PME_AUTH_CRC ? PME_F_CHECK_CRC
                                         : 0;
    wh->flags |= htons((uint16_t)kind);
    if (kind) {
        /* The check covers the header and whatever follows it in the gathered frame:
         * the frame's own iovec array with its first piece moved past the Ethernet
         * header for the time of the computation (a copy of the array, once per frame,
         * cost about 1.5% of a stream's sender). */
        struct iovec eth = f->iov[0];
        f->iov[0].iov_base = wh;
        f->iov[0].iov_len = eth.iov_len - PME_ETH_HLEN;
        uint8_t c[16];
        compute_check(k, kind, f->iov, f->iovcnt, wh, c);
        f->iov[0] = eth;
        memcpy(wh->check, c, sizeof(c));
    }
    wh->hops_left = self->hop_limit;
}

/* Compare without leaking where they differ. */
static bool same16(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < 16; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

/* The check of a frame whose bytes after f[0..n) are `placed` (NULL: none). */
static enum pme_wire_verdict check_frame(const struct pme_wire_keys *k,
                                         const struct pme_wire_self *self, const uint8_t *f,
                                         size_t n, const struct iovec *placed, unsigned mtu)
{
    /* The version-stable prefix first: a VERSION_NAK is shorter than our header. */
    if (n < PME_ETH_HLEN + 4)
        return PME_WIRE_SHORT;
    if (memcmp(f + 12, &self->ethertype_be, 2))
        return PME_WIRE_NOT_MINE;
    const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)(f + PME_ETH_HLEN);
    if (wh->version != PME_WIRE_VERSION)
        return PME_WIRE_OTHER_VERSION;
    if (n < PME_ETH_HLEN + HDR_BYTES)
        return PME_WIRE_SHORT;
    if (memcmp(f, self->mac, 6) || ntohs(wh->dst_ep) != self->ep ||
        ntohl(wh->dst_node) != self->node)
        return PME_WIRE_NOT_MINE;
    if (ntohl(wh->job_id) != k->job_id)
        return PME_WIRE_FOREIGN_JOB;
    size_t len = ntohs(wh->len);
    size_t ext = placed ? placed->iov_len : 0;
    if (PME_ETH_HLEN + HDR_BYTES + len > n + ext)
        return PME_WIRE_SHORT;
    if (HDR_BYTES + len > mtu)
        return PME_WIRE_BAD_HEADER;
    /* A placed payload follows the headers exactly, and only rendezvous data has one. */
    if (placed && (PME_ETH_HLEN + HDR_BYTES + len != n + ext || wh->type != PME_T_RDATA))
        return PME_WIRE_BAD_HEADER;
    uint16_t flags = ntohs(wh->flags);
    int kind = flags & PME_F_CHECK_MAC ? PME_F_CHECK_MAC
               : flags & PME_F_CHECK_CRC ? PME_F_CHECK_CRC
                                         : 0;
    if (k->auth == PME_AUTH_MAC && kind != PME_F_CHECK_MAC)
        return PME_WIRE_BAD_MAC;
    if (kind == PME_F_CHECK_MAC && k->auth != PME_AUTH_MAC)
        return PME_WIRE_BAD_MAC; /* we hold no key: we cannot tell it from a forgery */
    if (!kind)
        return PME_WIRE_OK;
    struct pme_wire_hdr h = *wh;
    h.hops_left = 0;
    memset(h.check, 0, sizeof(h.check));
    struct iovec v[3] = {{&h, HDR_BYTES}, {(void *)(wh + 1), len - ext}};
    if (placed)
        v[2] = *placed;
    uint8_t c[16];
    compute_check(k, kind, v, placed ? 3 : 2, &h, c);
    if (kind == PME_F_CHECK_MAC)
        return same16(c, wh->check) ? PME_WIRE_OK : PME_WIRE_BAD_MAC;
    return memcmp(c, wh->check, 4) ? PME_WIRE_BAD_CRC : PME_WIRE_OK;
}

enum pme_wire_verdict pme_wire_check(const struct pme_wire_keys *k,
                                     const struct pme_wire_self *self, const uint8_t *f,
                                     size_t n, unsigned mtu)
{
    return check_frame(k, self, f, n, NULL, mtu);
}

enum pme_wire_verdict pme_wire_check_placed(const struct pme_wire_keys *k,
                                            const struct pme_wire_self *self,
                                            const uint8_t *f, size_t n,
                                            const struct pme_dev_placed *placed, unsigned mtu)
{
    if (!placed)
        return check_frame(k, self, f, n, NULL, mtu);
    struct iovec v = {(void *)placed->data, placed->len};
    return check_frame(k, self, f, n, &v, mtu);
}

/* ---- VERSION_NAK ---- */

/* A NAK's MAC: the IV as for a header (from the NAK's own fields), over the frozen part
 * and the authentication part up to the tag. */
static void nak_tag(const struct pme_wire_keys *k, const struct pme_wire_version_nak *nak,
                    uint8_t tag[16])
{
    const struct pme_wire_nak_auth *a = (const void *)(nak + 1);
    uint8_t iv[PME_WIRE_MAC_IV_BYTES];
    memcpy(iv, &a->src_node, 4);
    memcpy(iv + 4, &nak->src_ep, 2);
    iv[6] = iv[7] = 0;
    memcpy(iv + 8, &a->incarnation, 4);
    memcpy(iv + 12, &a->nonce, 8);
    struct iovec v = {(void *)nak, sizeof(*nak) + offsetof(struct pme_wire_nak_auth, tag)};
    pme_gmac_tag(&k->gmac, iv, sizeof(iv), &v, 1, tag);
}

size_t pme_wire_nak_build(const struct pme_wire_keys *k, const struct pme_wire_self *self,
                          uint64_t nonce, const uint8_t *frame, unsigned version,
                          uint8_t *buf)
{
    memset(buf, 0, PME_WIRE_NAK_BYTES);
    memcpy(buf, frame + 6, 6);
    memcpy(buf + 6, self->mac, 6);
    memcpy(buf + 12, &self->ethertype_be, 2);
    struct pme_wire_version_nak *nak = (void *)(buf + PME_ETH_HLEN);
    const struct pme_wire_version_nak *in = (const void *)(frame + PME_ETH_HLEN);
    nak->dst_ep = in->src_ep;
    nak->version = (uint8_t)version;
    nak->type = PME_T_VERSION_NAK;
    nak->src_ep = htons(self->ep);
    nak->magic = htonl(PME_VERSION_NAK_MAGIC);
    nak->crc = htonl(pme_crc32c(0, nak, offsetof(struct pme_wire_version_nak, crc)));
    struct pme_wire_nak_auth *a = (void *)(nak + 1);
    a->src_node = htonl(self->node);
    a->incarnation = htonl(self->incarnation);
    a->job_id = htonl(k->job_id);
    a->nonce = htobe64(nonce);
    if (k->auth == PME_AUTH_MAC) {
        nak_tag(k, nak, a->tag);
    }
    return PME_WIRE_NAK_BYTES;
}

bool pme_wire_nak_parse(const struct pme_wire_keys *k, const struct pme_wire_self *self,
                        const uint8_t *f, size_t n, struct pme_wire_nak *out)
{
    const struct pme_wire_version_nak *nak = (const void *)(f + PME_ETH_HLEN);
    if (n < PME_ETH_HLEN + sizeof(*nak) || nak->type != PME_T_VERSION_NAK ||
        ntohl(nak->magic) != PME_VERSION_NAK_MAGIC ||
        pme_crc32c(0, nak, offsetof(struct pme_wire_version_nak, crc)) != ntohl(nak->crc) ||
        ntohs(nak->dst_ep) != self->ep || memcmp(f, self->mac, 6))
        return false;
    memset(out, 0, sizeof(*out));
    out->src_ep = ntohs(nak->src_ep);
    out->version = nak->version;
    const struct pme_wire_nak_auth *a = (const void *)(nak + 1);
    if (n < PME_ETH_HLEN + sizeof(*nak) + sizeof(*a) || ntohl(a->job_id) != k->job_id)
        return true; /* a version 1 NAK, or another job's: not authenticated */
    out->src_node = ntohl(a->src_node);
    out->incarnation = ntohl(a->incarnation);
    out->nonce = be64toh(a->nonce);
    if (k->auth == PME_AUTH_MAC) {
        uint8_t tag[16];
        nak_tag(k, nak, tag);
        out->authenticated = same16(tag, a->tag);
    }
    return true;
}

/* ---- replay protection ---- */

bool pme_replay_fresh(const struct pme_replay *r, uint64_t nonce)
{
    if (!r->window || nonce > r->top)
        return true;
    uint64_t back = r->top - nonce;
    return back < 64 && !(r->window >> back & 1);
}

void pme_replay_mark(struct pme_replay *r, uint64_t nonce)
{
    if (!r->window) {
        r->top = nonce;
        r->window = 1;
    } else if (nonce > r->top) {
        uint64_t shift = nonce - r->top;
        r->window = shift >= 64 ? 1 : (r->window << shift) | 1;
        r->top = nonce;
    } else {
        r->window |= 1ull << (r->top - nonce);
    }
}
