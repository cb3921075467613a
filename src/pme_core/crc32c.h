/* SPDX-License-Identifier: BSD-3-Clause */
/* crc32c.h - CRC32C (Castagnoli), in hardware where the CPU has it. */
#ifndef PME_CRC32C_H
#define PME_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC32C over buf. Start with crc = 0; the result needs no final step. */
uint32_t pme_crc32c(uint32_t crc, const void *buf, size_t len);
/* The portable table implementation, for tests and CPUs without SSE4.2. */
uint32_t pme_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* 0: tables; 1: the crc32 instruction; 2: and AVX-512 folding for long buffers. */
int pme_crc32c_hw(void);
/* A phrase naming the implementation in use. */
const char *pme_crc32c_impl(void);

#endif
