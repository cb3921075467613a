// SPDX-License-Identifier: BSD-3-Clause
/*
 * transpose.c - the transpose of a distributed FFT (NAS FT's, a 2D FFT's): a global
 * N x N matrix of 64-bit words, N = size x ranks, split into bands of `size` rows, one
 * per rank. One iteration is
 *
 *   1. a pass over the local rows (each word goes through an affine map, as a butterfly
 *      pass touches every element);
 *   2. MPI_Alltoall of size x size blocks (block s of this band goes to rank s);
 *   3. the received blocks transposed into place: the band now holds the transposed
 *      matrix's rows.
 *
 * So every pair of ranks exchanges a block of size^2 words per iteration: 32 KiB at
 * size 64, 2 MiB at size 512. After t iterations word (i, j) is A_t(i, j) = f^t(A_0(j, i))
 * for odd t and f^t(A_0(i, j)) for even t, f the affine map: checked at every word of
 * every band after the measured run.
 */
#include "mpibench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TR_MUL 6364136223846793005ull
#define TR_ADD 1442695040888963407ull

struct transpose {
    int b, p, rank; /* band height (and block edge), ranks, this rank */
    size_t n; /* the matrix's edge, b * p */
    uint64_t *band, *send, *recv;
    long steps;
    uint64_t mul, add; /* f^steps(x) = mul * x + add */
};

static uint64_t initial(size_t i, size_t j, size_t n)
{
    uint64_t x = (uint64_t)i * n + j + 1;
    x ^= x >> 31;
    return x * 0xBF58476D1CE4E5B9ull;
}

static int transpose_setup(struct bench_ctx *c)
{
    if (c->size < 1 || c->size > 4096) {
        if (c->rank == 0)
            printf("# skip transpose %zu: the band height must be 1 to 4096\n", c->size);
        return 1;
    }
    struct transpose *t = calloc(1, sizeof(*t));
    c->state = t;
    t->b = (int)c->size;
    t->p = c->nranks;
    t->rank = c->rank;
    t->n = (size_t)t->b * (size_t)t->p;
    size_t words = (size_t)t->b * t->n;
    t->band = bench_alloc(words * sizeof(uint64_t));
    t->send = bench_alloc(words * sizeof(uint64_t));
    t->recv = bench_alloc(words * sizeof(uint64_t));
    for (int r = 0; r < t->b; r++)
        for (size_t j = 0; j < t->n; j++)
            t->band[(size_t)r * t->n + j] = initial((size_t)t->rank * t->b + r, j, t->n);
    t->mul = 1;
    t->add = 0;
    /* Every rank sends a block to every other one. */
    c->bytes_per_iter = (double)t->p * (t->p - 1) * (double)t->b * t->b * sizeof(uint64_t);
    return 0;
}

static double transpose_run(struct bench_ctx *c, long iters)
{
    struct transpose *t = c->state;
    size_t b = (size_t)t->b, n = t->n, blk = b * b;
    int count = (int)blk;
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        /* 1 and the packing: block s is columns [s b, s b + b) of the band's rows. */
        for (int s = 0; s < t->p; s++)
            for (size_t r = 0; r < b; r++) {
                const uint64_t *row = t->band + r * n + (size_t)s * b;
                uint64_t *out = t->send + (size_t)s * blk + r * b;
                for (size_t q = 0; q < b; q++)
                    out[q] = row[q] * TR_MUL + TR_ADD;
            }
        /* 2 */
        MPI_Alltoall(t->send, count, MPI_UINT64_T, t->recv, count, MPI_UINT64_T, c->comm);
        /* 3: block s came from rows [s b, s b + b) of the matrix, our columns; row r of
         * the new band, column s b + q, is the old word (s b + q, rank b + r). */
        for (int s = 0; s < t->p; s++) {
            const uint64_t *in = t->recv + (size_t)s * blk;
            for (size_t q = 0; q < b; q++)
                for (size_t r = 0; r < b; r++)
                    t->band[r * n + (size_t)s * b + q] = in[q * b + r];
        }
        t->mul *= TR_MUL;
        t->add = t->add * TR_MUL + TR_ADD;
        t->steps++;
    }
    return MPI_Wtime() - t0;
}

static long transpose_verify(struct bench_ctx *c)
{
    struct transpose *t = c->state;
    long bad = 0;
    for (size_t r = 0; r < (size_t)t->b; r++)
        for (size_t j = 0; j < t->n; j++) {
            size_t i = (size_t)t->rank * t->b + r;
            uint64_t a0 = t->steps % 2 ? initial(j, i, t->n) : initial(i, j, t->n);
            uint64_t want = t->mul * a0 + t->add;
            if (t->band[r * t->n + j] != want) {
                if (bad < 3)
                    bench_complain("transpose %d: word (%zu, %zu) is wrong after %ld "
                                   "iterations",
                                   t->b, i, j, t->steps);
                bad++;
            }
        }
    return bad;
}

static void transpose_teardown(struct bench_ctx *c)
{
    struct transpose *t = c->state;
    if (!t)
        return;
    bench_free(t->band);
    bench_free(t->send);
    bench_free(t->recv);
    free(t);
    c->state = NULL;
}

const struct bench bench_transpose = {
    .name = "transpose",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "64,128,256,512",
    .what = "distributed transpose as an FFT does it: a pass over the rows, MPI_Alltoall "
            "of size x size blocks of 8-byte words, the blocks transposed in place; size = "
            "rows per rank",
    .setup = transpose_setup,
    .run = transpose_run,
    .verify = transpose_verify,
    .teardown = transpose_teardown,
};
