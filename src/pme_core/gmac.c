// SPDX-License-Identifier: BSD-3-Clause
/* gmac.c - see gmac.h. */
#include "gmac.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- AES-128, portable (FIPS-197) ---- */

static uint8_t sbox[256];
static pthread_once_t sbox_once = PTHREAD_ONCE_INIT;

static uint8_t xtime(uint8_t b)
{
    return (uint8_t)((b << 1) ^ ((b & 0x80) ? 0x1b : 0));
}

static uint8_t gf8_mul(uint8_t a, uint8_t b)
{
    uint8_t r = 0;
    while (b) {
        if (b & 1)
            r ^= a;
        a = xtime(a);
        b >>= 1;
    }
    return r;
}

/* The S-box from its definition: the multiplicative inverse in GF(2^8), then the affine
 * map; nothing typed in that could be wrong. */
static void make_sbox(void)
{
    for (int x = 0; x < 256; x++) {
        uint8_t inv = 0;
        for (int y = 1; y < 256 && x; y++)
            if (gf8_mul((uint8_t)x, (uint8_t)y) == 1) {
                inv = (uint8_t)y;
                break;
            }
        uint8_t s = inv;
        for (int k = 1; k <= 4; k++)
            s ^= (uint8_t)((inv << k) | (inv >> (8 - k)));
        sbox[x] = (uint8_t)(s ^ 0x63);
    }
}

static void aes_expand(uint8_t rk[176], const uint8_t key[16])
{
    pthread_once(&sbox_once, make_sbox);
    memcpy(rk, key, 16);
    uint8_t rcon = 1;
    for (int i = 4; i < 44; i++) {
        uint8_t t[4];
        memcpy(t, rk + 4 * (i - 1), 4);
        if (i % 4 == 0) {
            uint8_t first = t[0];
            t[0] = (uint8_t)(sbox[t[1]] ^ rcon);
            t[1] = sbox[t[2]];
            t[2] = sbox[t[3]];
            t[3] = sbox[first];
            rcon = xtime(rcon);
        }
        for (int k = 0; k < 4; k++)
            rk[4 * i + k] = rk[4 * (i - 4) + k] ^ t[k];
    }
}

static void aes_encrypt_portable(const uint8_t rk[176], const uint8_t in[16], uint8_t out[16])
{
    uint8_t s[16];
    for (int k = 0; k < 16; k++)
        s[k] = in[k] ^ rk[k];
    for (int round = 1; round <= 10; round++) {
        uint8_t t[16];
        /* SubBytes and ShiftRows: byte (row r, column c) is s[4c + r]. */
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 4; r++)
                t[4 * c + r] = sbox[s[4 * ((c + r) % 4) + r]];
        if (round < 10) {
            for (int c = 0; c < 4; c++) {
                uint8_t *col = t + 4 * c;
                uint8_t a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
                uint8_t all = a0 ^ a1 ^ a2 ^ a3;
                col[0] = a0 ^ all ^ xtime(a0 ^ a1);
                col[1] = a1 ^ all ^ xtime(a1 ^ a2);
                col[2] = a2 ^ all ^ xtime(a2 ^ a3);
                col[3] = a3 ^ all ^ xtime(a3 ^ a0);
            }
        }
        for (int k = 0; k < 16; k++)
            s[k] = t[k] ^ rk[16 * round + k];
    }
    memcpy(out, s, 16);
}

/* ---- GHASH, portable (SP 800-38D, algorithm 1) ---- */

static uint64_t load_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void store_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* x = x * h in GF(2^128) with GCM's bit order (the first bit is the x^0 coefficient). */
static void gf128_mul_portable(uint8_t x[16], const uint8_t h[16])
{
    uint64_t zh = 0, zl = 0, vh = load_be64(h), vl = load_be64(h + 8);
    uint64_t xh = load_be64(x), xl = load_be64(x + 8);
    for (int i = 0; i < 128; i++) {
        uint64_t bit = i < 64 ? (xh >> (63 - i)) & 1 : (xl >> (127 - i)) & 1;
        uint64_t mask = 0 - bit;
        zh ^= vh & mask;
        zl ^= vl & mask;
        uint64_t carry = vl & 1;
        vl = (vl >> 1) | (vh << 63);
        vh = (vh >> 1) ^ ((0 - carry) & 0xE100000000000000ull);
    }
    store_be64(x, zh);
    store_be64(x + 8, zl);
}

/* Feeds 16-byte blocks of a gathered input to a block function, zero-padding the last
 * one: how both implementations walk the additional data. */
struct blocks {
    const struct iovec *iov;
    int n, i;
    size_t off;
};

/* The next up to `max` whole blocks lying in one piece: returns a pointer to them and
 * their count, or copies one block that straddles pieces (or the zero-padded tail) into
 * tmp and returns it with count 1. NULL at the end. */
static const uint8_t *next_blocks(struct blocks *b, uint8_t tmp[16], size_t max, size_t *count)
{
    while (b->i < b->n && b->off == b->iov[b->i].iov_len) {
        b->i++;
        b->off = 0;
    }
    if (b->i == b->n)
        return NULL;
    const uint8_t *p = (const uint8_t *)b->iov[b->i].iov_base + b->off;
    size_t left = b->iov[b->i].iov_len - b->off;
    if (left >= 16) {
        size_t k = left / 16 < max ? left / 16 : max;
        b->off += k * 16;
        *count = k;
        return p;
    }
    size_t got = 0;
    memset(tmp, 0, 16);
    while (got < 16 && b->i < b->n) {
        left = b->iov[b->i].iov_len - b->off;
        size_t take = left < 16 - got ? left : 16 - got;
        memcpy(tmp + got, (const uint8_t *)b->iov[b->i].iov_base + b->off, take);
        got += take;
        b->off += take;
        if (b->off == b->iov[b->i].iov_len) {
            b->i++;
            b->off = 0;
        }
    }
    *count = 1;
    return tmp;
}

static uint64_t iov_bytes(const struct iovec *iov, int n)
{
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        t += iov[i].iov_len;
    return t;
}

/* The GHASH input that follows the data: [bits of the data]_64 || [bits of nothing]_64,
 * or for J0 0^64 || [bits of the IV]_64. */
static void length_block(uint8_t out[16], uint64_t first_bits, uint64_t second_bits)
{
    store_be64(out, first_bits);
    store_be64(out + 8, second_bits);
}

static void ghash_portable(const uint8_t h[16], uint8_t y[16], const struct iovec *iov, int n)
{
    struct blocks b = {iov, n, 0, 0};
    uint8_t tmp[16];
    size_t k;
    const uint8_t *p;
    while ((p = next_blocks(&b, tmp, 64, &k)))
        for (size_t j = 0; j < k; j++) {
            for (int i = 0; i < 16; i++)
                y[i] ^= p[16 * j + i];
            gf128_mul_portable(y, h);
        }
}

static void tag_portable(const struct pme_gmac *g, const uint8_t *iv, size_t ivlen,
                         const struct iovec *aad, int n, uint8_t tag[16])
{
    uint8_t j0[16] = {0}, y[16] = {0}, lens[16], ek[16];
    struct iovec ivv[2] = {{(void *)iv, ivlen}, {lens, 16}};
    if (ivlen == 12) {
        memcpy(j0, iv, 12);
        j0[15] = 1;
    } else {
        /* The IV zero-padded to whole blocks, then its length: ghash it in two runs so
         * that the padding falls between them. */
        ghash_portable(g->h, j0, ivv, 1);
        length_block(lens, 0, (uint64_t)ivlen * 8);
        ghash_portable(g->h, j0, ivv + 1, 1);
    }
    ghash_portable(g->h, y, aad, n);
    length_block(lens, iov_bytes(aad, n) * 8, 0);
    struct iovec lv = {lens, 16};
    ghash_portable(g->h, y, &lv, 1);
    aes_encrypt_portable(g->rk, j0, ek);
    for (int i = 0; i < 16; i++)
        tag[i] = y[i] ^ ek[i];
}

/* ---- the fast path: AES-NI and PCLMULQDQ ---- */

#if defined(__x86_64__)
#define FAST __attribute__((target("aes,pclmul,ssse3,sse4.1")))
#define FAST_INLINE FAST inline __attribute__((always_inline))
#define GMAC_POWERS ((int)(sizeof(((struct pme_gmac *)0)->hpow) / 16))
#define GMAC_WIDE_REGS (GMAC_POWERS / 4)

static int cpu_impl = -1;

FAST_INLINE static __m128i bswap128(__m128i v)
{
    const __m128i rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_shuffle_epi8(v, rev);
}

FAST_INLINE static __m128i aes_ni(const uint8_t rk[176], __m128i b)
{
    const __m128i *k = (const __m128i *)rk;
    b = _mm_xor_si128(b, _mm_load_si128(&k[0]));
    for (int r = 1; r < 10; r++)
        b = _mm_aesenc_si128(b, _mm_load_si128(&k[r]));
    return _mm_aesenclast_si128(b, _mm_load_si128(&k[10]));
}

/*
 * Blocks are kept byte-reversed, so that the 128-bit integer's bit i is the coefficient
 * of x^(127-i): carry-less products of such values are the bit-reversed products, one
 * bit short, hence the shift by one before the reduction. The 256-bit product of two
 * values is formed first and reduced later, so that the sum of several products (the
 * aggregated form, X1*H^4 + X2*H^3 + X3*H^2 + X4*H) costs one reduction.
 */
struct u256 {
    __m128i lo, hi;
};

FAST_INLINE static struct u256 clmul(__m128i a, __m128i b)
{
    __m128i ll = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i hh = _mm_clmulepi64_si128(a, b, 0x11);
    __m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01),
                                _mm_clmulepi64_si128(a, b, 0x10));
    struct u256 r = {_mm_xor_si128(ll, _mm_slli_si128(mid, 8)),
                     _mm_xor_si128(hh, _mm_srli_si128(mid, 8))};
    return r;
}

FAST_INLINE static struct u256 add256(struct u256 a, struct u256 b)
{
    struct u256 r = {_mm_xor_si128(a.lo, b.lo), _mm_xor_si128(a.hi, b.hi)};
    return r;
}

/* The field element of a bit-reversed 256-bit product: shift left by one, then fold the
 * low half into the high half with x^128 = x^7 + x^2 + x + 1 (in reversed form the
 * folding multiplies by the reversed polynomial, done here with shifts). */
FAST_INLINE static __m128i reduce(struct u256 p)
{
    /* [hi:lo] <<= 1 across 32-bit lanes and across the halves. */
    __m128i lo_carry = _mm_srli_epi32(p.lo, 31), hi_carry = _mm_srli_epi32(p.hi, 31);
    __m128i lo = _mm_or_si128(_mm_slli_epi32(p.lo, 1), _mm_slli_si128(lo_carry, 4));
    __m128i hi = _mm_or_si128(_mm_slli_epi32(p.hi, 1), _mm_slli_si128(hi_carry, 4));
    hi = _mm_or_si128(hi, _mm_srli_si128(lo_carry, 12));
    /* First phase: the x^127..x^96 terms of lo folded with x^7, x^2, x (as 31, 30, 25
     * bit shifts in reversed form). */
    __m128i a = _mm_xor_si128(_mm_xor_si128(_mm_slli_epi32(lo, 31), _mm_slli_epi32(lo, 30)),
                              _mm_slli_epi32(lo, 25));
    __m128i spill = _mm_srli_si128(a, 4);
    lo = _mm_xor_si128(lo, _mm_slli_si128(a, 12));
    /* Second phase: the rest of lo, shifted right by 1, 2 and 7, plus the spill. */
    __m128i b = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi32(lo, 1), _mm_srli_epi32(lo, 2)),
                              _mm_srli_epi32(lo, 7));
    b = _mm_xor_si128(b, spill);
    lo = _mm_xor_si128(lo, b);
    return _mm_xor_si128(hi, lo);
}

/* The wide path: up to 32 blocks per reduction, 4 in each 512-bit register. Block i of
 * a group of n (X1 carrying y) is multiplied by H^(n-i); the lanes' products are summed
 * and folded to one 256-bit product, reduced once. Hashing is one chain of dependent
 * reductions, so the longer the group the fewer of them: 16 blocks ran at 0.15 cycles
 * a byte here, 32 at about half that. g->hpow holds H^32 .. H^1 in that order, so that
 * the last n/4 registers of it cover a group of n blocks. */
#define WIDE __attribute__((target("aes,pclmul,ssse3,sse4.1,avx2,avx512f,avx512bw,avx512vl,vpclmulqdq")))

WIDE static __m128i fold_lanes(__m512i z)
{
    __m256i t = _mm256_xor_si256(_mm512_castsi512_si256(z), _mm512_extracti64x4_epi64(z, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

/* Hash `blocks` (a multiple of 4) blocks at p into y. */
WIDE static __m128i ghash_wide(const struct pme_gmac *g, __m128i y, const uint8_t *p,
                               size_t blocks)
{
    const __m512i rev = _mm512_broadcast_i32x4(
        _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const __m512i *hz = (const __m512i *)g->hpow;
    while (blocks) {
        int regs = blocks >= 4 * GMAC_WIDE_REGS ? GMAC_WIDE_REGS : (int)(blocks / 4);
        const __m512i *h = hz + GMAC_WIDE_REGS - regs;
        __m512i x = _mm512_shuffle_epi8(_mm512_loadu_si512(p), rev);
        x = _mm512_xor_si512(x, _mm512_zextsi128_si512(y));
        /* Unaligned loads: the key lives where its owner put it (16-byte aligned). */
        __m512i h0 = _mm512_loadu_si512(h);
        __m512i lo = _mm512_clmulepi64_epi128(x, h0, 0x00);
        __m512i hi = _mm512_clmulepi64_epi128(x, h0, 0x11);
        __m512i mid = _mm512_xor_si512(_mm512_clmulepi64_epi128(x, h0, 0x01),
                                       _mm512_clmulepi64_epi128(x, h0, 0x10));
        for (int r = 1; r < regs; r++) {
            x = _mm512_shuffle_epi8(_mm512_loadu_si512(p + 64 * r), rev);
            __m512i hr = _mm512_loadu_si512(&h[r]);
            lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x, hr, 0x00));
            hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x, hr, 0x11));
            mid = _mm512_ternarylogic_epi64(mid, _mm512_clmulepi64_epi128(x, hr, 0x01),
                                            _mm512_clmulepi64_epi128(x, hr, 0x10), 0x96);
        }
        __m128i m = fold_lanes(mid);
        struct u256 s = {_mm_xor_si128(fold_lanes(lo), _mm_slli_si128(m, 8)),
                         _mm_xor_si128(fold_lanes(hi), _mm_srli_si128(m, 8))};
        y = reduce(s);
        p += 64 * regs;
        blocks -= 4 * (size_t)regs;
    }
    return y;
}

/* The same on 256-bit registers (AVX2 and VPCLMULQDQ, without AVX-512): 2 blocks in
 * each, up to 32 blocks per reduction. CPUs that have VPCLMULQDQ but not AVX-512 (this
 * project's CI machines among them) otherwise fall back to the 128-bit path's 4 blocks
 * per reduction, which made hashing the largest single cost of a MAC-checked stream. */
#define YMM __attribute__((target("aes,pclmul,ssse3,sse4.1,avx2,vpclmulqdq")))
#define GMAC_YMM_REGS (GMAC_POWERS / 2)

YMM static __m128i fold_halves(__m256i z)
{
    return _mm_xor_si128(_mm256_castsi256_si128(z), _mm256_extracti128_si256(z, 1));
}

/* Hash `blocks` (a multiple of 2) blocks at p into y. */
YMM static __m128i ghash_ymm(const struct pme_gmac *g, __m128i y, const uint8_t *p,
                             size_t blocks)
{
    const __m256i rev = _mm256_broadcastsi128_si256(
        _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const __m256i *hy = (const __m256i *)g->hpow;
    while (blocks) {
        int regs = blocks >= 2 * GMAC_YMM_REGS ? GMAC_YMM_REGS : (int)(blocks / 2);
        const __m256i *h = hy + GMAC_YMM_REGS - regs;
        __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)p), rev);
        x = _mm256_xor_si256(x, _mm256_zextsi128_si256(y));
        __m256i h0 = _mm256_loadu_si256(h);
        __m256i lo = _mm256_clmulepi64_epi128(x, h0, 0x00);
        __m256i hi = _mm256_clmulepi64_epi128(x, h0, 0x11);
        __m256i mid = _mm256_xor_si256(_mm256_clmulepi64_epi128(x, h0, 0x01),
                                       _mm256_clmulepi64_epi128(x, h0, 0x10));
        for (int r = 1; r < regs; r++) {
            x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p + 32 * r)), rev);
            __m256i hr = _mm256_loadu_si256(&h[r]);
            lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(x, hr, 0x00));
            hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(x, hr, 0x11));
            mid = _mm256_xor_si256(mid, _mm256_xor_si256(_mm256_clmulepi64_epi128(x, hr, 0x01),
                                                         _mm256_clmulepi64_epi128(x, hr, 0x10)));
        }
        __m128i m = fold_halves(mid);
        struct u256 s = {_mm_xor_si128(fold_halves(lo), _mm_slli_si128(m, 8)),
                         _mm_xor_si128(fold_halves(hi), _mm_srli_si128(m, 8))};
        y = reduce(s);
        p += 32 * regs;
        blocks -= 2 * (size_t)regs;
    }
    return y;
}

FAST static void ghash_fast(const struct pme_gmac *g, __m128i *yp, const struct iovec *iov,
                            int n)
{
    const __m128i *hp = (const __m128i *)g->hpow + GMAC_POWERS - 4;
    __m128i h4 = _mm_load_si128(&hp[0]), h3 = _mm_load_si128(&hp[1]);
    __m128i h2 = _mm_load_si128(&hp[2]), h1 = _mm_load_si128(&hp[3]);
    __m128i y = *yp;
    struct blocks b = {iov, n, 0, 0};
    uint8_t tmp[16];
    size_t k;
    const uint8_t *p;
    while ((p = next_blocks(&b, tmp, SIZE_MAX / 16, &k))) {
        size_t j = 0;
        if (g->impl == PME_GMAC_VPCLMUL && k >= 8) {
            j = k & ~(size_t)3;
            y = ghash_wide(g, y, p, j);
        } else if (g->impl == PME_GMAC_VPCLMUL256 && k >= 8) {
            j = k & ~(size_t)1;
            y = ghash_ymm(g, y, p, j);
        }
        for (; j + 4 <= k; j += 4) {
            const __m128i *q = (const __m128i *)(p + 16 * j);
            __m128i x1 = _mm_xor_si128(y, bswap128(_mm_loadu_si128(q)));
            struct u256 s = clmul(x1, h4);
            s = add256(s, clmul(bswap128(_mm_loadu_si128(q + 1)), h3));
            s = add256(s, clmul(bswap128(_mm_loadu_si128(q + 2)), h2));
            s = add256(s, clmul(bswap128(_mm_loadu_si128(q + 3)), h1));
            y = reduce(s);
        }
        for (; j < k; j++) {
            __m128i x = bswap128(_mm_loadu_si128((const __m128i *)(p + 16 * j)));
            y = reduce(clmul(_mm_xor_si128(y, x), h1));
        }
    }
    *yp = y;
}

/* GHASH, from zero, of the data gathered from iov[0..n) (zero-padded) followed by the
 * length block `lens`, when that is nblocks <= GMAC_POWERS blocks in all: block i of
 * nblocks is multiplied by H^(nblocks-i) and the products are summed, then reduced once.
 * The products do not depend on each other, so a short frame's MAC (a small message:
 * 6 to 10 blocks with the IV's) is not a chain of dependent reductions; as a chain it
 * cost about 0.1 us per frame, sent and checked, on a ping-pong's path. */
FAST static __m128i ghash_short(const struct pme_gmac *g, const struct iovec *iov, int n,
                                size_t nblocks, const uint8_t lens[16])
{
    const __m128i *hp = (const __m128i *)g->hpow + GMAC_POWERS - nblocks;
    struct blocks b = {iov, n, 0, 0};
    struct u256 s = {_mm_setzero_si128(), _mm_setzero_si128()};
    uint8_t tmp[16];
    size_t k;
    const uint8_t *p;
    while ((p = next_blocks(&b, tmp, SIZE_MAX / 16, &k))) {
        for (size_t j = 0; j < k; j++, hp++) {
            __m128i x = bswap128(_mm_loadu_si128((const __m128i *)(p + 16 * j)));
            s = add256(s, clmul(x, _mm_load_si128(hp)));
        }
    }
    s = add256(s, clmul(bswap128(_mm_loadu_si128((const __m128i *)lens)), _mm_load_si128(hp)));
    return reduce(s);
}

/* GHASH from zero of iov[0..n) (bytes long) and the length block lens. */
FAST static __m128i ghash_with_lengths(const struct pme_gmac *g, const struct iovec *iov,
                                       int n, uint64_t bytes, const uint8_t lens[16])
{
    size_t nblocks = (size_t)((bytes + 15) / 16) + 1;
    if (nblocks <= (size_t)GMAC_POWERS)
        return ghash_short(g, iov, n, nblocks, lens);
    __m128i y = _mm_setzero_si128();
    ghash_fast(g, &y, iov, n);
    struct iovec lv = {(void *)lens, 16};
    ghash_fast(g, &y, &lv, 1);
    return y;
}

FAST static void tag_fast(const struct pme_gmac *g, const uint8_t *iv, size_t ivlen,
                          const struct iovec *aad, int n, uint8_t tag[16])
{
    uint8_t lens[16];
    __m128i j0;
    if (ivlen == 12) {
        uint8_t b[16] = {0};
        memcpy(b, iv, 12);
        b[15] = 1;
        j0 = _mm_loadu_si128((const __m128i *)b);
    } else {
        struct iovec ivv = {(void *)iv, ivlen};
        length_block(lens, 0, (uint64_t)ivlen * 8);
        j0 = bswap128(ghash_with_lengths(g, &ivv, 1, ivlen, lens));
    }
    uint64_t bytes = iov_bytes(aad, n);
    length_block(lens, bytes * 8, 0);
    __m128i y = ghash_with_lengths(g, aad, n, bytes, lens);
    __m128i t = _mm_xor_si128(bswap128(y), aes_ni(g->rk, j0));
    _mm_storeu_si128((__m128i *)tag, t);
}

FAST static void init_fast(struct pme_gmac *g)
{
    __m128i h = bswap128(_mm_loadu_si128((const __m128i *)g->h));
    __m128i *hp = (__m128i *)g->hpow;
    hp[GMAC_POWERS - 1] = h;
    for (int i = GMAC_POWERS - 2; i >= 0; i--)
        hp[i] = reduce(clmul(hp[i + 1], h));
}

int pme_gmac_hw(void)
{
    if (cpu_impl < 0) {
        __builtin_cpu_init();
        bool narrow = __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul") &&
                      __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1");
        /* libgcc's answers for AVX-512 include the kernel's saving of its registers. */
        bool wide = narrow && __builtin_cpu_supports("avx2") &&
                    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
        bool ymm = narrow && __builtin_cpu_supports("avx2") &&
                   __builtin_cpu_supports("vpclmulqdq");
        cpu_impl = wide   ? PME_GMAC_VPCLMUL
                   : ymm  ? PME_GMAC_VPCLMUL256
                   : narrow ? PME_GMAC_PCLMUL
                            : PME_GMAC_PORTABLE;
    }
    return cpu_impl;
}
#else
int pme_gmac_hw(void)
{
    return PME_GMAC_PORTABLE;
}
#endif

/* ---- the interface ---- */

void pme_gmac_init(struct pme_gmac *g, const uint8_t key[16], int max_impl)
{
    memset(g, 0, sizeof(*g));
    aes_expand(g->rk, key);
    uint8_t zero[16] = {0};
    aes_encrypt_portable(g->rk, zero, g->h);
    int hw = pme_gmac_hw();
    g->impl = max_impl < hw ? max_impl : hw;
#if defined(__x86_64__)
    if (g->impl != PME_GMAC_PORTABLE)
        init_fast(g);
#endif
}

void pme_gmac_wipe(struct pme_gmac *g)
{
    volatile uint8_t *p = (volatile uint8_t *)g;
    for (size_t i = 0; i < sizeof(*g); i++)
        p[i] = 0;
}

void pme_gmac_tag(const struct pme_gmac *g, const uint8_t *iv, size_t ivlen,
                  const struct iovec *aad, int n, uint8_t tag[16])
{
#if defined(__x86_64__)
    if (g->impl != PME_GMAC_PORTABLE) {
        tag_fast(g, iv, ivlen, aad, n, tag);
        return;
    }
#endif
    tag_portable(g, iv, ivlen, aad, n, tag);
}

void pme_gmac_aes_block(const struct pme_gmac *g, const uint8_t in[16], uint8_t out[16])
{
    aes_encrypt_portable(g->rk, in, out);
}
