/*
 * gmac.h - GMAC: AES-128-GCM with an empty plaintext, the keyed MAC of PME frames.
 *
 * Why GMAC (NIST SP 800-38D): a standard, well-reviewed construction whose cost is one
 * AES block and one carry-less multiply per 16 bytes, which current CPUs do in hardware
 * (AES-NI, PCLMULQDQ); a PRF-based MAC of the same strength (SipHash, HMAC) costs
 * several times more per byte. Its one demand is a nonce that never repeats under a
 * key: PME's nonces name the sender (node, endpoint, incarnation) and count its frames,
 * and GCM's rule for IVs that are not 96 bits long turns those 20 bytes into the
 * counter block (see pme_wire.h).
 *
 * The portable implementation (table-free AES and bitwise GHASH, straight from the
 * standards) is the reference the unit tests hold the fast one to, and the fallback on
 * CPUs without AES-NI and PCLMULQDQ.
 */
#ifndef PME_GMAC_H
#define PME_GMAC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define PME_GMAC_KEY_BYTES 16
#define PME_GMAC_TAG_BYTES 16

struct pme_gmac {
    _Alignas(16) uint8_t rk[176]; /* AES-128 round keys, bytes in FIPS-197 order */
    uint8_t h[16];              /* the hash key E_K(0) */
    _Alignas(16) uint8_t hpow[4][16]; /* fast path: H, H^2, H^3, H^4 in its own form */
    int fast;                   /* use the AES-NI/PCLMULQDQ path */
};

/* Prepare a key. `portable` forces the reference implementation (tests). */
void pme_gmac_init(struct pme_gmac *g, const uint8_t key[PME_GMAC_KEY_BYTES], int portable);
void pme_gmac_wipe(struct pme_gmac *g);

/* The tag of the additional data gathered from aad[0..n), under iv (any length >= 1). */
void pme_gmac_tag(const struct pme_gmac *g, const uint8_t *iv, size_t ivlen,
                  const struct iovec *aad, int n, uint8_t tag[PME_GMAC_TAG_BYTES]);

/* One AES-128 block under the key (a PRF: PME derives its public job id with it). */
void pme_gmac_aes_block(const struct pme_gmac *g, const uint8_t in[16], uint8_t out[16]);

/* 1 when the CPU runs the fast path. */
int pme_gmac_hw(void);

#endif
