/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_acc.h - the arithmetic of one-sided accumulates: combining elements of one of
 * pme_wire.h's types (PME_DT_*) with one of its operations (PME_AOP_*), as MPI's
 * predefined reductions do. A leaf: no endpoint, no frames.
 */
#ifndef PME_RMA_ACC_H
#define PME_RMA_ACC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of one element of dtype, 0 if dtype is not one. */
size_t pme_dtype_size(unsigned dtype);
/* Whether MPI allows aop on dtype (no bitwise operation on floating point). */
bool pme_acc_valid(unsigned aop, unsigned dtype);
/* dst[i] = dst[i] aop src[i] for the n elements; with old, the elements of dst are copied
 * there first. dst, src and old need no alignment. aop and dtype must be valid. */
void pme_acc_apply(unsigned aop, unsigned dtype, uint8_t *dst, const uint8_t *src, size_t n,
                   uint8_t *old);
/* One element: old = *dst; *dst = *swap if *dst equals *compare (bit for bit). */
void pme_acc_cas(unsigned dtype, uint8_t *dst, const uint8_t *compare, const uint8_t *swap,
                 uint8_t *old);

#endif
