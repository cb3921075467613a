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
 */
#include "crc32c.h"

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

__attribute__((constructor)) static void crc32c_init(void)
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

uint32_t pme_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
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

uint32_t pme_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
    if (have_hw)
        return ~hw_raw(~crc, buf, len);
#endif
    return pme_crc32c_sw(crc, buf, len);
}

int pme_crc32c_hw(void)
{
    return have_hw > 0;
}
