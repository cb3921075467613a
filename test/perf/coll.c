// SPDX-License-Identifier: BSD-3-Clause
/*
 * coll.c - collective latency: allreduce, reduce, alltoall, bcast, barrier. Every rank
 * times its own loop of back-to-back calls; the value is the slowest rank's time per
 * call.
 */
#include "mpibench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct coll {
    unsigned char *sbuf, *rbuf;
    size_t sbytes, rbytes;
    long errors;
};

static struct coll *coll_new(struct bench_ctx *c, size_t sbytes, size_t rbytes)
{
    struct coll *s = calloc(1, sizeof(*s));
    s->sbytes = sbytes;
    s->rbytes = rbytes;
    s->sbuf = bench_alloc(sbytes);
    s->rbuf = bench_alloc(rbytes);
    c->state = s;
    return s;
}

static void coll_teardown(struct bench_ctx *c)
{
    struct coll *s = c->state;
    if (!s)
        return;
    bench_free(s->sbuf);
    bench_free(s->rbuf);
    free(s);
    c->state = NULL;
}

static void coll_prepare(struct bench_ctx *c)
{
    struct coll *s = c->state;
    memset(s->rbuf, 0, s->rbytes);
}

/* ------------------------------------------------------------------ allreduce */

/* MPI_INT sums of size/4 elements: element i of rank r is (r+1)*(i%251+1), so the sum
 * is (i%251+1)*N(N+1)/2, exact for any N below 4000. */
static int allreduce_setup(struct bench_ctx *c)
{
    if (c->size < sizeof(int) || c->size % sizeof(int)) {
        if (c->rank == 0 && c->size != 0)
            printf("# skip allreduce %zu: not a whole number of MPI_INT\n", c->size);
        return 1;
    }
    struct coll *s = coll_new(c, c->size, c->size);
    int *in = (int *)s->sbuf;
    for (size_t i = 0; i < c->size / sizeof(int); i++)
        in[i] = (c->rank + 1) * (int)(i % 251 + 1);
    c->bytes_per_iter = (double)c->size * c->nranks;
    return 0;
}

static double allreduce_run(struct bench_ctx *c, long iters)
{
    struct coll *s = c->state;
    int n = (int)(c->size / sizeof(int));
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(s->sbuf, s->rbuf, n, MPI_INT, MPI_SUM, c->comm);
    return MPI_Wtime() - t0;
}

static long allreduce_verify(struct bench_ctx *c)
{
    struct coll *s = c->state;
    const int *out = (const int *)s->rbuf;
    long tri = (long)c->nranks * (c->nranks + 1) / 2, bad = 0;
    for (size_t i = 0; i < c->size / sizeof(int); i++) {
        long want = (long)(i % 251 + 1) * tri;
        if (out[i] != want) {
            if (bad < 3)
                bench_complain("allreduce %zu: element %zu is %d, expected %ld", c->size, i,
                               out[i], want);
            bad++;
        }
    }
    return bad;
}

const struct bench bench_allreduce = {
    .name = "allreduce",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "4..4m",
    .message_sizes = 1,
    .what = "MPI_Allreduce, MPI_SUM of size/4 MPI_INTs, checked element by element",
    .setup = allreduce_setup,
    .run = allreduce_run,
    .prepare = coll_prepare,
    .verify = allreduce_verify,
    .teardown = coll_teardown,
};

/* ------------------------------------------------------------------ reduce */

/* The same sums as allreduce, to rank 0 only. */
static double reduce_run(struct bench_ctx *c, long iters)
{
    struct coll *s = c->state;
    int n = (int)(c->size / sizeof(int));
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Reduce(s->sbuf, s->rbuf, n, MPI_INT, MPI_SUM, 0, c->comm);
    return MPI_Wtime() - t0;
}

static long reduce_verify(struct bench_ctx *c)
{
    return c->rank == 0 ? allreduce_verify(c) : 0;
}

const struct bench bench_reduce = {
    .name = "reduce",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "4..4m",
    .message_sizes = 1,
    .what = "MPI_Reduce to rank 0, MPI_SUM of size/4 MPI_INTs, checked element by element",
    .setup = allreduce_setup,
    .run = reduce_run,
    .prepare = coll_prepare,
    .verify = reduce_verify,
    .teardown = coll_teardown,
};

/* ------------------------------------------------------------------ alltoall */

static uint64_t block_seed(size_t size, int from, int to)
{
    return ((uint64_t)size << 24) ^ ((uint64_t)from << 12) ^ (uint64_t)to ^ 0xA2A2ull << 40;
}

/* size bytes from every rank to every rank; block (from, to) has its own pattern. */
static int alltoall_setup(struct bench_ctx *c)
{
    size_t total = c->size * (size_t)c->nranks;
    if (c->size > (size_t)1 << 30 || total / (size_t)c->nranks != c->size) {
        if (c->rank == 0)
            printf("# skip alltoall %zu: too large\n", c->size);
        return 1;
    }
    struct coll *s = coll_new(c, total, total);
    for (int to = 0; to < c->nranks; to++)
        pattern_fill(s->sbuf + (size_t)to * c->size, c->size, block_seed(c->size, c->rank, to));
    c->bytes_per_iter = (double)total * c->nranks;
    return 0;
}

static double alltoall_run(struct bench_ctx *c, long iters)
{
    struct coll *s = c->state;
    int n = (int)c->size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Alltoall(s->sbuf, n, MPI_BYTE, s->rbuf, n, MPI_BYTE, c->comm);
    return MPI_Wtime() - t0;
}

static long alltoall_verify(struct bench_ctx *c)
{
    struct coll *s = c->state;
    long bad = 0;
    for (int from = 0; from < c->nranks; from++)
        bad += pattern_check(s->rbuf + (size_t)from * c->size, c->size,
                             block_seed(c->size, from, c->rank), "alltoall block");
    return bad;
}

const struct bench bench_alltoall = {
    .name = "alltoall",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "0..4m",
    .message_sizes = 1,
    .what = "MPI_Alltoall, size bytes per pair, every block checked",
    .setup = alltoall_setup,
    .run = alltoall_run,
    .prepare = coll_prepare,
    .verify = alltoall_verify,
    .teardown = coll_teardown,
};

/* ------------------------------------------------------------------ bcast */

#define BCAST_SEED(size) (((uint64_t)(size) << 4) ^ 0xBCA57ull)

/* Root 0; the other ranks receive into a buffer cleared before the measured run. */
static int bcast_setup(struct bench_ctx *c)
{
    struct coll *s = coll_new(c, 0, c->size);
    if (c->rank == 0)
        pattern_fill(s->rbuf, c->size, BCAST_SEED(c->size));
    c->bytes_per_iter = (double)c->size * (c->nranks - 1);
    return 0;
}

static void bcast_prepare(struct bench_ctx *c)
{
    if (c->rank != 0)
        coll_prepare(c);
}

static double bcast_run(struct bench_ctx *c, long iters)
{
    struct coll *s = c->state;
    int n = (int)c->size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Bcast(s->rbuf, n, MPI_BYTE, 0, c->comm);
    return MPI_Wtime() - t0;
}

static long bcast_verify(struct bench_ctx *c)
{
    struct coll *s = c->state;
    return pattern_check(s->rbuf, c->size, BCAST_SEED(c->size), "bcast");
}

const struct bench bench_bcast = {
    .name = "bcast",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "0..4m",
    .message_sizes = 1,
    .what = "MPI_Bcast from rank 0, checked on every rank",
    .setup = bcast_setup,
    .run = bcast_run,
    .prepare = bcast_prepare,
    .verify = bcast_verify,
    .teardown = coll_teardown,
};

/* ------------------------------------------------------------------ barrier */

static int barrier_setup(struct bench_ctx *c)
{
    if (c->size != 0) {
        if (c->rank == 0)
            printf("# skip barrier %zu: a barrier has no size (use barrier@0)\n", c->size);
        return 1;
    }
    c->state = NULL;
    return 0;
}

static double barrier_run(struct bench_ctx *c, long iters)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Barrier(c->comm);
    return MPI_Wtime() - t0;
}

/* A barrier must hold everyone until the last rank arrives: rank 0 arrives 200 ms late,
 * so every other rank must wait well over 100 ms (the margin absorbs ranks leaving the
 * previous barrier at different times on a loaded machine). */
static long barrier_verify(struct bench_ctx *c)
{
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    if (c->rank == 0) {
        struct timespec late = {0, 200 * 1000 * 1000};
        nanosleep(&late, NULL);
    }
    MPI_Barrier(c->comm);
    double waited = MPI_Wtime() - t0;
    if (c->rank != 0 && waited < 0.100) {
        bench_complain("barrier: left after %.1f ms while rank 0 was 200 ms late", waited * 1e3);
        return 1;
    }
    return 0;
}

const struct bench bench_barrier = {
    .name = "barrier",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "0",
    .message_sizes = 0,
    .what = "MPI_Barrier; checked: no rank leaves before a late rank 0 arrives",
    .setup = barrier_setup,
    .run = barrier_run,
    .verify = barrier_verify,
};
