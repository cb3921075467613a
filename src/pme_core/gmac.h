/* SPDX-License-Identifier: BSD-3-Clause */
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
 * standards) is the reference the unit tests hold the fast ones to, and the fallback on
 * CPUs without AES-NI and PCLMULQDQ. Of the fast ones, the wide ones (VPCLMULQDQ on
 * 512-bit registers with AVX-512, or on 256-bit ones with AVX2 alone; up to 32 blocks
 * per reduction) hash a 9000-byte frame several times as fast as the 128-bit one (4
 * blocks per reduction), which held a MAC-checked stream under 2 GB/s on each side.
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
    _Alignas(16) uint8_t hpow[32][16]; /* fast paths: H^32, H^31, ..., H in their form */
    int impl;                   /* enum pme_gmac_impl in use */
};

/* The implementations, slowest first. */
enum pme_gmac_impl {
    PME_GMAC_PORTABLE = 0, /* the reference */
    PME_GMAC_PCLMUL = 1,   /* AES-NI, PCLMULQDQ on 128-bit registers */
    PME_GMAC_VPCLMUL256 = 2, /* and VPCLMULQDQ on 256-bit registers (AVX2) */
    PME_GMAC_VPCLMUL = 3,  /* and VPCLMULQDQ on 512-bit registers (AVX-512) */
    PME_GMAC_BEST = PME_GMAC_VPCLMUL,
};

/* Prepare a key for the fastest implementation up to `max_impl` that the CPU runs
 * (PME_GMAC_BEST: the fastest there is; lower values are for tests). */
void pme_gmac_init(struct pme_gmac *g, const uint8_t key[PME_GMAC_KEY_BYTES], int max_impl);
void pme_gmac_wipe(struct pme_gmac *g);

/* The tag of the additional data gathered from aad[0..n), under iv (any length >= 1). */
void pme_gmac_tag(const struct pme_gmac *g, const uint8_t *iv, size_t ivlen,
                  const struct iovec *aad, int n, uint8_t tag[PME_GMAC_TAG_BYTES]);

/* One AES-128 block under the key (a PRF: PME derives its public job id with it). */
void pme_gmac_aes_block(const struct pme_gmac *g, const uint8_t in[16], uint8_t out[16]);

/* The fastest implementation this CPU runs (enum pme_gmac_impl). */
int pme_gmac_hw(void);

#endif
