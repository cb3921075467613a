/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pme_test.h - what every pme_core test program shares: checks that stop the test with
 * the place and the values, and helpers to drive loop-device endpoints.
 */
#ifndef PME_TEST_H
#define PME_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pme.h"

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#define CHECK_OK(expr)                                                            \
    do {                                                                          \
        int rc_ = (expr);                                                         \
        CHECK(rc_ >= 0, "%s returned %d (%s)", #expr, rc_, pme_strerror(rc_));    \
    } while (0)

#define SKIP(...)                                                                 \
    do {                                                                          \
        printf(__VA_ARGS__);                                                      \
        printf("\n");                                                             \
        exit(77);                                                                 \
    } while (0)

/* A test program's scenarios, by name: run all, or only the one named as the argument. */
struct scenario {
    const char *name;
    void (*fn)(void);
};

static inline int run_scenarios(int argc, char **argv, const struct scenario *all, size_t n)
{
    int ran = 0;
    for (size_t i = 0; i < n; i++)
        if (argc < 2 || !strcmp(argv[1], all[i].name)) {
            all[i].fn();
            ran++;
        }
    CHECK(ran, "no scenario named %s", argv[1]);
    return 0;
}

/* Seconds on the monotonic clock. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Deterministic test data: byte i of stream `seed`. */
static inline uint8_t pattern_byte(uint32_t seed, uint64_t i)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32 | seed);
    x ^= x >> 29;
    return (uint8_t)(x * 0xBF58476D1CE4E5B9ull >> 56);
}

static inline void pattern_fill(uint8_t *buf, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern_byte(seed, i);
}

/* Index of the first wrong byte, or -1. */
static inline long pattern_check(const uint8_t *buf, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(seed, i))
            return (long)i;
    return -1;
}

#endif
