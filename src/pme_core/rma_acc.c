// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_acc.c - see rma_acc.h. Elements are read and written through memcpy: a window's
 * offsets need not be aligned for the type. Integer sums and products are computed in
 * the unsigned type of the same width, which wraps as MPI implementations do, without
 * the undefined behaviour of signed overflow.
 */
#include "rma_acc.h"

#include <string.h>

#include "pme_wire.h"

size_t pme_dtype_size(unsigned dtype)
{
    static const uint8_t size[PME_DT_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return dtype < PME_DT_COUNT ? size[dtype] : 0;
}

static bool is_float(unsigned dtype)
{
    return dtype == PME_DT_F32 || dtype == PME_DT_F64;
}

bool pme_acc_valid(unsigned aop, unsigned dtype)
{
    if (aop >= PME_AOP_COUNT || dtype >= PME_DT_COUNT)
        return false;
    /* MPI: logical and bitwise operations take integers (and logicals, bytes) only. */
    return !is_float(dtype) || aop <= PME_AOP_MIN;
}

/* One pass over the n elements: r = EXPR of a (the window's) and b (the origin's). */
#define EACH(T, EXPR)                                                                     \
    for (size_t i = 0; i < n; i++) {                                                      \
        T a, b, r;                                                                        \
        memcpy(&a, d + i * sizeof(T), sizeof(T));                                         \
        memcpy(&b, s + i * sizeof(T), sizeof(T));                                         \
        r = (T)(EXPR);                                                                    \
        memcpy(d + i * sizeof(T), &r, sizeof(T));                                         \
    }

/* SUM, PROD, MAX, MIN: every type; U is the unsigned type integers compute in. */
#define ARITH_CASES(T, U)                                                                 \
    case PME_AOP_SUM: EACH(T, (U)a + (U)b) break;                                         \
    case PME_AOP_PROD: EACH(T, (U)a * (U)b) break;                                        \
    case PME_AOP_MAX: EACH(T, a > b ? a : b) break;                                       \
    case PME_AOP_MIN: EACH(T, a < b ? a : b) break;

#define INT_FN(NAME, T, U)                                                                \
    static void NAME(unsigned aop, uint8_t *d, const uint8_t *s, size_t n)                \
    {                                                                                     \
        switch (aop) {                                                                    \
            ARITH_CASES(T, U)                                                             \
        case PME_AOP_LAND: EACH(T, a && b) break;                                         \
        case PME_AOP_LOR: EACH(T, a || b) break;                                          \
        case PME_AOP_LXOR: EACH(T, !a != !b) break;                                       \
        case PME_AOP_BAND: EACH(T, a & b) break;                                          \
        case PME_AOP_BOR: EACH(T, a | b) break;                                           \
        case PME_AOP_BXOR: EACH(T, a ^ b) break;                                          \
        default: break;                                                                   \
        }                                                                                 \
    }

#define FLOAT_FN(NAME, T)                                                                 \
    static void NAME(unsigned aop, uint8_t *d, const uint8_t *s, size_t n)                \
    {                                                                                     \
        switch (aop) {                                                                    \
            ARITH_CASES(T, T)                                                             \
        default: break;                                                                   \
        }                                                                                 \
    }

INT_FN(acc_i8, int8_t, uint32_t)
INT_FN(acc_u8, uint8_t, uint32_t)
INT_FN(acc_i16, int16_t, uint32_t)
INT_FN(acc_u16, uint16_t, uint32_t)
INT_FN(acc_i32, int32_t, uint32_t)
INT_FN(acc_u32, uint32_t, uint32_t)
INT_FN(acc_i64, int64_t, uint64_t)
INT_FN(acc_u64, uint64_t, uint64_t)
FLOAT_FN(acc_f32, float)
FLOAT_FN(acc_f64, double)

void pme_acc_apply(unsigned aop, unsigned dtype, uint8_t *dst, const uint8_t *src, size_t n,
                   uint8_t *old)
{
    static void (*const fn[PME_DT_COUNT])(unsigned, uint8_t *, const uint8_t *, size_t) = {
        acc_i8, acc_u8, acc_i16, acc_u16, acc_i32, acc_u32, acc_i64, acc_u64, acc_f32, acc_f64,
    };
    size_t bytes = n * pme_dtype_size(dtype);
    if (old)
        memcpy(old, dst, bytes);
    if (aop == PME_AOP_REPLACE)
        memcpy(dst, src, bytes);
    else if (aop != PME_AOP_NO_OP)
        fn[dtype](aop, dst, src, n);
}

void pme_acc_cas(unsigned dtype, uint8_t *dst, const uint8_t *compare, const uint8_t *swap,
                 uint8_t *old)
{
    size_t size = pme_dtype_size(dtype);
    memcpy(old, dst, size);
    if (!memcmp(dst, compare, size))
        memcpy(dst, swap, size);
}
