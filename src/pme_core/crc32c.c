// SPDX-License-Identifier: BSD-3-Clause
/*
 * crc32c.c - CRC32C over frames.
 *
 * veth has no frame check sequence, so PME checks its own frames. On x86-64 with
 * SSE4.2 the crc32 instruction does 8 bytes per instruction, but each one waits for the
 * previous result (3 cycles). Buffers are therefore cut into three lanes computed
 * together; the lanes are joined by "shifting" a CRC over the bytes that follow it,
 * which is multiplication by a constant modulo the CRC polynomial: one carry-less
 * multiply (PCLMULQDQ) and one crc32 instruction. The constants for each lane length
 * are derived at start-up from the table implementation, so nothing here is a magic
 * number that could be wrong: the unit tests compare both implementations.
 *
 * Where the CPU has VPCLMULQDQ on 512-bit registers (AVX-512), long buffers are folded
 * instead: four registers of 64 bytes each carry the running remainder forward 256
 * bytes at a time with carry-less multiplies, and the result is reduced with the crc32
 * instruction. The folding constants are found the same way, by solving the linear
 * condition "folding V forward by N bytes leaves the CRC unchanged" at start-up.
 */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define POLY_REFLECTED 0x82f63b78u

static uint32_t table8[8][256];
static int have_hw = -1;

/* Lane lengths, longest first; for each, the constants that shift a CRC over one and
 * over two lanes. */
static const uint32_t lane_len[] = {4096, 1024, 256, 64};
#define NLANES (sizeof(lane_len) / sizeof(lane_len[0]))
static uint64_t shift_k1[NLANES], shift_k2[NLANES];

static uint32_t sw_byte(uint32_t crc, uint8_t b)
{
    return table8[0][(crc ^ b) & 0xff] ^ (crc >> 8);
}

/* The state after feeding `zeros` zero bytes, as a function of the state: linear. */
static uint32_t sw_zeros(uint32_t crc, size_t zeros)
{
    while (zeros--)
        crc = sw_byte(crc, 0);
    return crc;
}

/* crc32 instruction on a 64-bit word from state 0, in software. */
static uint32_t sw_word(uint64_t w)
{
    uint32_t crc = 0;
    for (int i = 0; i < 8; i++)
        crc = sw_byte(crc, (uint8_t)(w >> (8 * i)));
    return crc;
}

/*
 * Find K with sw_word(clmul(1, K)) == target, i.e. sw_word(K) == target for a 32-bit K:
 * a 32x32 linear system over GF(2). Then for every c, crc32q(0, clmul(c, K)) shifts c
 * the same way, because both sides are c times a constant modulo the polynomial.
 */
static uint64_t solve_shift_constant(uint32_t target)
{
    uint32_t col[32];
    for (int i = 0; i < 32; i++)
        col[i] = sw_word(1ull << i);
    /* Gaussian elimination on the augmented system col * k = target. */
    uint64_t rows[32]; /* row r: bits 0..31 coefficients of k, bit 32 the right side */
    for (int r = 0; r < 32; r++) {
        uint64_t row = 0;
        for (int i = 0; i < 32; i++)
            if (col[i] >> r & 1)
                row |= 1ull << i;
        if (target >> r & 1)
            row |= 1ull << 32;
        rows[r] = row;
    }
    for (int c = 0, r = 0; c < 32 && r < 32; c++) {
        int piv = -1;
        for (int k = r; k < 32; k++)
            if (rows[k] >> c & 1) {
                piv = k;
                break;
            }
        if (piv < 0)
            continue;
        uint64_t t = rows[piv];
        rows[piv] = rows[r];
        rows[r] = t;
        for (int k = 0; k < 32; k++)
            if (k != r && (rows[k] >> c & 1))
                rows[k] ^= rows[r];
        r++;
    }
    uint64_t k = 0;
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++)
            if (rows[r] == ((1ull << c) | (rows[r] & (1ull << 32)))) {
                if (rows[r] >> 32 & 1)
                    k |= 1ull << c;
                break;
            }
    return k;
}

/* CRC state after 16 bytes (lo then hi) from state 0. */
static uint32_t sw_state16(uint64_t lo, uint64_t hi)
{
    uint32_t crc = sw_word(lo);
    for (int i = 0; i < 8; i++)
        crc = sw_byte(crc, (uint8_t)(hi >> (8 * i)));
    return crc;
}

/* Carry-less product of a and b (64 x 64 -> 128 bits), in software. */
static void clmul_sw(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = 0, h = 0;
    for (int i = 0; i < 64; i++)
        if (b >> i & 1) {
            l ^= a << i;
            if (i)
                h ^= a >> (64 - i);
        }
    *lo = l;
    *hi = h;
}

/*
 * The fold constant K for one half of a 16-byte lane moved N bytes ahead: for every
 * 64-bit x in that half, state16(clmul(x, K)) must equal shift_N(state16(x in place)).
 * Both sides are linear in x and the left side is linear in K, so K solves a linear
 * system over GF(2) (64 unknowns; equations from the basis vectors of x). Returns 1 and
 * K when the system is consistent.
 */
static int solve_fold_constant(size_t n, int high_half, uint64_t *k_out)
{
    /* unknown bits of K: 64; each equation row: 64 coefficient bits + 1 right side */
    enum { NEQ = 64 * 32 };
    static uint64_t coef[NEQ];
    static uint8_t rhs[NEQ];
    int neq = 0;
    for (int xb = 0; xb < 64; xb++) {
        uint64_t x = 1ull << xb;
        uint32_t want = sw_zeros(high_half ? sw_state16(0, x) : sw_state16(x, 0), n);
        /* column j: state16(clmul(x, e_j)) */
        uint32_t col[64];
        for (int j = 0; j < 64; j++) {
            uint64_t lo, hi;
            clmul_sw(x, 1ull << j, &lo, &hi);
            col[j] = sw_state16(lo, hi);
        }
        for (int r = 0; r < 32; r++) {
            uint64_t row = 0;
            for (int j = 0; j < 64; j++)
                if (col[j] >> r & 1)
                    row |= 1ull << j;
            coef[neq] = row;
            rhs[neq] = (uint8_t)(want >> r & 1);
            neq++;
        }
    }
    int rank = 0;
    int pivcol[64];
    for (int c = 0; c < 64 && rank < neq; c++) {
        int piv = -1;
        for (int r = rank; r < neq; r++)
            if (coef[r] >> c & 1) {
                piv = r;
                break;
            }
        if (piv < 0)
            continue;
        uint64_t tc = coef[piv];
        uint8_t tr = rhs[piv];
        coef[piv] = coef[rank];
        rhs[piv] = rhs[rank];
        coef[rank] = tc;
        rhs[rank] = tr;
        for (int r = 0; r < neq; r++)
            if (r != rank && (coef[r] >> c & 1)) {
                coef[r] ^= coef[rank];
                rhs[r] ^= rhs[rank];
            }
        pivcol[rank++] = c;
    }
    for (int r = rank; r < neq; r++)
        if (rhs[r])
            return 0; /* inconsistent */
    uint64_t k = 0;
    for (int r = 0; r < rank; r++)
        if (rhs[r])
            k |= 1ull << pivcol[r];
    *k_out = k;
    return 1;
}

/* Fold distances used: the main loop (256), register to register (192, 128, 64) and
 * lane to lane inside a register (48, 32, 16). */
static const size_t fold_dist[] = {256, 192, 128, 64, 48, 32, 16};
#define NFOLD (sizeof(fold_dist) / sizeof(fold_dist[0]))
static uint64_t fold_k[NFOLD][2];
static int have_fold;

static void crc32c_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
        table8[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            table8[t][i] = (table8[t - 1][i] >> 8) ^ table8[0][table8[t - 1][i] & 0xff];
#if defined(__x86_64__)
    have_hw = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
#else
    have_hw = 0;
#endif
    if (have_hw)
        for (size_t i = 0; i < NLANES; i++) {
            shift_k1[i] = solve_shift_constant(sw_zeros(1, lane_len[i]));
            shift_k2[i] = solve_shift_constant(sw_zeros(1, 2 * lane_len[i]));
        }
#if defined(__x86_64__)
    if (have_hw && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq")) {
        have_fold = 1;
        for (size_t i = 0; i < NFOLD && have_fold; i++)
            have_fold = solve_fold_constant(fold_dist[i], 0, &fold_k[i][0]) &&
                        solve_fold_constant(fold_dist[i], 1, &fold_k[i][1]);
    }
#endif
}

static uint32_t sw_raw(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len && ((uintptr_t)p & 7)) {
        crc = sw_byte(crc, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = table8[7][w & 0xff] ^ table8[6][(w >> 8) & 0xff] ^
              table8[5][(w >> 16) & 0xff] ^ table8[4][(w >> 24) & 0xff] ^
              table8[3][(w >> 32) & 0xff] ^ table8[2][(w >> 40) & 0xff] ^
              table8[1][(w >> 48) & 0xff] ^ table8[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = sw_byte(crc, *p++);
    return crc;
}

/* Tables and constants are built on first use (a few milliseconds), not at load. */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
#define ENSURE_INIT() pthread_once(&init_once, crc32c_init)

uint32_t pme_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    ENSURE_INIT();
    return ~sw_raw(~crc, buf, len);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2,pclmul"))) static inline uint64_t shift(uint64_t crc, uint64_t k)
{
    __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)crc),
                                        _mm_cvtsi64_si128((long long)k), 0);
    return _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

__attribute__((target("sse4.2,pclmul"))) static uint32_t hw_raw(uint32_t crc, const uint8_t *p,
                                                                 size_t len)
{
    uint64_t c0 = crc;
    /* Unaligned 8-byte loads cost nothing extra on x86-64: no alignment prologue, and
     * short inputs (headers) go straight to the word loop. */
    for (size_t l = 0; l < NLANES && len >= 3 * lane_len[NLANES - 1]; l++) {
        size_t lane = lane_len[l];
        while (len >= 3 * lane) {
            uint64_t c1 = 0, c2 = 0;
            const uint8_t *a = p, *b = p + lane, *c = p + 2 * lane;
            for (size_t i = 0; i < lane; i += 8) {
                uint64_t wa, wb, wc;
                memcpy(&wa, a + i, 8);
                memcpy(&wb, b + i, 8);
                memcpy(&wc, c + i, 8);
                c0 = _mm_crc32_u64(c0, wa);
                c1 = _mm_crc32_u64(c1, wb);
                c2 = _mm_crc32_u64(c2, wc);
            }
            c0 = shift(c0, shift_k2[l]) ^ shift(c1, shift_k1[l]) ^ c2;
            p += 3 * lane;
            len -= 3 * lane;
        }
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c0 = _mm_crc32_u64(c0, w);
        p += 8;
        len -= 8;
    }
    if (len >= 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        c0 = _mm_crc32_u32((uint32_t)c0, w);
        p += 4;
        len -= 4;
    }
    while (len--)
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
    return (uint32_t)c0;
}
#endif

#if defined(__x86_64__)
#define FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,sse4.2,pclmul")))

/* Move every 16-byte lane of v forward by the distance of constant pair `i`. */
FOLD_TARGET static inline __m512i fold512(__m512i v, size_t i)
{
    __m512i k = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)fold_k[i][1],
                                                      (long long)fold_k[i][0]));
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(v, k, 0x00),
                            _mm512_clmulepi64_epi128(v, k, 0x11));
}

FOLD_TARGET static inline __m128i fold128(__m128i v, size_t i)
{
    __m128i k = _mm_set_epi64x((long long)fold_k[i][1], (long long)fold_k[i][0]);
    return _mm_xor_si128(_mm_clmulepi64_si128(v, k, 0x00), _mm_clmulepi64_si128(v, k, 0x11));
}

/* len >= 256: fold the whole multiple of 64 bytes, finish with hw_raw. */
FOLD_TARGET static uint32_t fold_raw(uint32_t crc, const uint8_t *p, size_t len)
{
    /* The running state enters as if XORed into the first four data bytes. */
    __m512i a0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_castsi128_si512(
                                                             _mm_cvtsi32_si128((int)crc)));
    __m512i a1 = _mm512_loadu_si512(p + 64);
    __m512i a2 = _mm512_loadu_si512(p + 128);
    __m512i a3 = _mm512_loadu_si512(p + 192);
    p += 256;
    len -= 256;
    while (len >= 256) {
        a0 = _mm512_xor_si512(fold512(a0, 0), _mm512_loadu_si512(p));
        a1 = _mm512_xor_si512(fold512(a1, 0), _mm512_loadu_si512(p + 64));
        a2 = _mm512_xor_si512(fold512(a2, 0), _mm512_loadu_si512(p + 128));
        a3 = _mm512_xor_si512(fold512(a3, 0), _mm512_loadu_si512(p + 192));
        p += 256;
        len -= 256;
    }
    /* Registers to the last one: 192, 128 and 64 bytes ahead. */
    __m512i x = _mm512_xor_si512(_mm512_xor_si512(fold512(a0, 1), fold512(a1, 2)),
                                 _mm512_xor_si512(fold512(a2, 3), a3));
    /* Lanes to the last one: 48, 32 and 16 bytes ahead. */
    __m128i l0 = _mm512_extracti32x4_epi32(x, 0), l1 = _mm512_extracti32x4_epi32(x, 1);
    __m128i l2 = _mm512_extracti32x4_epi32(x, 2), l3 = _mm512_extracti32x4_epi32(x, 3);
    __m128i v = _mm_xor_si128(_mm_xor_si128(fold128(l0, 4), fold128(l1, 5)),
                              _mm_xor_si128(fold128(l2, 6), l3));
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(v);
    uint64_t hi = (uint64_t)_mm_extract_epi64(v, 1);
    uint32_t state = (uint32_t)_mm_crc32_u64(_mm_crc32_u64(0, lo), hi);
    return len ? hw_raw(state, p, len) : state;
}
#endif

uint32_t pme_crc32c(uint32_t crc, const void *buf, size_t len)
{
    ENSURE_INIT();
#if defined(__x86_64__)
    if (have_fold && len >= 512)
        return ~fold_raw(~crc, buf, len);
    if (have_hw)
        return ~hw_raw(~crc, buf, len);
#endif
    return pme_crc32c_sw(crc, buf, len);
}

int pme_crc32c_hw(void)
{
    ENSURE_INIT();
    return have_hw > 0 ? 1 + have_fold : 0;
}

const char *pme_crc32c_impl(void)
{
    static const char *const names[] = {"software tables", "crc32 instruction (SSE4.2)",
                                        "crc32 instruction and AVX-512 folding"};
    return names[pme_crc32c_hw()];
}
