/*
 * crc32c.c - CRC32C over frames.
 *
 * veth has no frame check sequence, so PME checks its own frames. On x86-64 with
 * SSE4.2 the crc32 instruction does 8 bytes per instruction, but each one waits for the
 * previous result (3 cycles). Large buffers are therefore cut into three lanes computed
 * together and joined with the "shift" of a CRC by a fixed number of bytes, which is a
 * linear map of the 32-bit state and so a lookup in four 256-entry tables.
 */
#include "crc32c.h"

#include <string.h>

#define POLY_REFLECTED 0x82f63b78u

static uint32_t table8[8][256];
/* Lane join: crc state advanced over LANE_BYTES and 2*LANE_BYTES zero bytes. */
#define LANE_BYTES 1024u
static uint32_t shift1[4][256], shift2[4][256];
static int have_hw = -1;

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

static void build_shift_table(uint32_t t[4][256], size_t zeros)
{
    /* By linearity, shift(x) = XOR over set bits of x of shift(bit). */
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++)
        basis[bit] = sw_zeros(1u << bit, zeros);
    for (int byte = 0; byte < 4; byte++)
        for (int v = 0; v < 256; v++) {
            uint32_t r = 0;
            for (int bit = 0; bit < 8; bit++)
                if (v & (1 << bit))
                    r ^= basis[byte * 8 + bit];
            t[byte][v] = r;
        }
}

static uint32_t apply_shift(uint32_t t[4][256], uint32_t crc)
{
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^
           t[3][crc >> 24];
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
    build_shift_table(shift1, LANE_BYTES);
    build_shift_table(shift2, 2 * LANE_BYTES);
#if defined(__x86_64__)
    have_hw = __builtin_cpu_supports("sse4.2");
#else
    have_hw = 0;
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

uint32_t pme_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    return ~sw_raw(~crc, buf, len);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t hw_raw(uint32_t crc, const uint8_t *p,
                                                          size_t len)
{
    uint64_t c0 = crc;
    while (len && ((uintptr_t)p & 7)) {
        c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
        len--;
    }
    /* Three lanes of LANE_BYTES each, joined by shifting the first two forward. */
    while (len >= 3 * LANE_BYTES) {
        uint64_t c1 = 0, c2 = 0;
        const uint8_t *a = p, *b = p + LANE_BYTES, *c = p + 2 * LANE_BYTES;
        for (size_t i = 0; i < LANE_BYTES; i += 8) {
            uint64_t wa, wb, wc;
            memcpy(&wa, a + i, 8);
            memcpy(&wb, b + i, 8);
            memcpy(&wc, c + i, 8);
            c0 = __builtin_ia32_crc32di(c0, wa);
            c1 = __builtin_ia32_crc32di(c1, wb);
            c2 = __builtin_ia32_crc32di(c2, wc);
        }
        c0 = apply_shift(shift2, (uint32_t)c0) ^ apply_shift(shift1, (uint32_t)c1) ^ c2;
        p += 3 * LANE_BYTES;
        len -= 3 * LANE_BYTES;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c0 = __builtin_ia32_crc32di(c0, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
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
