// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_gmac.c - the frame MAC: AES-128 against FIPS-197's example, GMAC against the GCM
 * specification's first test case, and every implementation the CPU runs (portable,
 * AES-NI/PCLMULQDQ, VPCLMULQDQ on AVX2 and on AVX-512) against OpenSSL's AES-128-GCM on random keys, IVs of
 * every length PME could use and additional data gathered from random pieces (lengths
 * up to 12000 bytes, so that the wide path's 256-byte groups meet every tail and
 * straddle); a one-bit change anywhere changes the tag.
 * pme-test: tier=default cpu=100 time=1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "gmac.h"
#include "pme_test.h"

static void hex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        CHECK(sscanf(s + 2 * i, "%2x", &v) == 1, "hex");
        out[i] = (uint8_t)v;
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void openssl_gmac(const uint8_t key[16], const uint8_t *iv, size_t ivlen,
                         const uint8_t *aad, size_t len, uint8_t tag[16])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l;
    CHECK(c && EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL) == 1, "evp init");
    CHECK(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, (int)ivlen, NULL) == 1, "ivlen");
    CHECK(EVP_EncryptInit_ex(c, NULL, NULL, key, iv) == 1, "key");
    if (len)
        CHECK(EVP_EncryptUpdate(c, NULL, &l, aad, (int)len) == 1, "aad");
    CHECK(EVP_EncryptFinal_ex(c, tag, &l) == 1, "final");
    CHECK(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1, "tag");
    EVP_CIPHER_CTX_free(c);
}

/* Cut buf into up to 6 pieces at random places. */
static int split(uint8_t *buf, size_t len, struct iovec *iov)
{
    int n = 1 + (int)(next_rand() % 6);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t take = i == n - 1 ? len - off : (len - off ? next_rand() % (len - off + 1) : 0);
        iov[i].iov_base = buf + off;
        iov[i].iov_len = take;
        off += take;
    }
    return n;
}

int main(void)
{
    /* On the heap, 16 bytes past a 64-byte boundary: where an endpoint may hold its key,
     * not where the compiler would align it. (aligned_alloc wants a multiple of the
     * alignment: AddressSanitizer refuses anything else.) */
    size_t bytes = (16 + sizeof(struct pme_gmac[PME_GMAC_BEST + 1]) + 63) & ~(size_t)63;
    uint8_t *heap = aligned_alloc(64, bytes);
    CHECK(heap, "out of memory");
    struct pme_gmac *g = (struct pme_gmac *)(heap + 16);
    uint8_t key[16], in[16], out[16], want[16], tag[16];

    /* FIPS-197, appendix C.1 */
    hex("000102030405060708090a0b0c0d0e0f", key, 16);
    hex("00112233445566778899aabbccddeeff", in, 16);
    hex("69c4e0d86a7b0430d8cdb78070b4c55a", want, 16);
    pme_gmac_init(&g[0], key, PME_GMAC_PORTABLE);
    pme_gmac_aes_block(&g[0], in, out);
    CHECK(!memcmp(out, want, 16), "AES-128 does not match FIPS-197 C.1");

    /* GCM test case 1: zero key, zero 96-bit IV, nothing to authenticate. */
    memset(key, 0, 16);
    uint8_t iv[64] = {0};
    hex("58e2fccefa7e3061367f1d57a4e7455a", want, 16);
    int hw = pme_gmac_hw();
    for (int impl = 0; impl <= hw; impl++) {
        pme_gmac_init(&g[impl], key, impl);
        CHECK(g[impl].impl == impl, "implementation %d not chosen", impl);
        pme_gmac_tag(&g[impl], iv, 12, NULL, 0, tag);
        CHECK(!memcmp(tag, want, 16), "GCM test case 1 fails (implementation %d)", impl);
    }
    static const char *const names[] = {"portable only", "AES-NI/PCLMULQDQ",
                                        "AES-NI/PCLMULQDQ and VPCLMULQDQ on AVX2",
                                        "AES-NI/PCLMULQDQ and VPCLMULQDQ on AVX-512"};
    printf("AES and GMAC match the standards' examples; this CPU runs: %s\n", names[hw]);

    static uint8_t data[12000];
    for (int round = 0; round < 3000; round++) {
        for (int i = 0; i < 16; i++)
            key[i] = (uint8_t)next_rand();
        size_t ivlen = round % 3 == 0 ? 12 : 1 + next_rand() % 40;
        for (size_t i = 0; i < ivlen; i++)
            iv[i] = (uint8_t)next_rand();
        /* every length to 199, then 400 to 599 (the fast paths hash up to 496 bytes
         * with one reduction and longer ones in groups), then any */
        size_t len = round < 200   ? (size_t)round
                     : round < 400 ? (size_t)round + 200
                                   : next_rand() % sizeof(data);
        for (size_t i = 0; i < len; i++)
            data[i] = (uint8_t)next_rand();
        openssl_gmac(key, iv, ivlen, data, len, want);
        struct iovec v[6];
        int n = split(data, len, v);
        for (int impl = 0; impl <= hw; impl++) {
            pme_gmac_init(&g[impl], key, impl);
            pme_gmac_tag(&g[impl], iv, ivlen, v, n, tag);
            CHECK(!memcmp(tag, want, 16),
                  "GMAC implementation %d differs from OpenSSL (len %zu, iv %zu, %d pieces)",
                  impl, len, ivlen, n);
        }
        if (len) {
            size_t bit = next_rand() % (len * 8);
            data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            pme_gmac_tag(&g[hw], iv, ivlen, v, n, tag);
            CHECK(memcmp(tag, want, 16), "a flipped bit left the tag unchanged");
        }
    }
    for (int impl = 0; impl <= hw; impl++)
        pme_gmac_wipe(&g[impl]);
    free(heap);
    printf("3000 random cases agree with OpenSSL's AES-128-GCM\n");
    return 0;
}
