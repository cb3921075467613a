// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma.c - one-sided benchmarks, passive target, between rank 0 (the origin) and rank N/2
 * (the target), in the manner of the OSU one-sided benchmarks:
 *
 *   put, get          one MPI_Put (MPI_Get), then MPI_Win_flush; a shared lock is held
 *                     over the batch (us per operation)
 *   putbw, getbw      a window of -w operations (default 64) into distinct slots, then
 *                     MPI_Win_flush (MB/s)
 *   acc               one MPI_Accumulate (MPI_SUM of MPI_INT), then MPI_Win_flush (us)
 *   epochput, epochget, epochacc
 *                     MPI_Win_lock (exclusive), one operation, MPI_Win_unlock: a whole
 *                     passive-target epoch per operation, the loop of MPICH's rma_contig
 *                     (us per epoch)
 *
 * The target sits in MPI_Recv until the origin says its batch is over: a library whose
 * one-sided path needs the target's progress (an active-message path, UCX over TCP)
 * gets it there, as OSU's target gets it in MPI_Barrier. Waiting in the driver's
 * sleeping loop instead would add up to its nap to every operation of such a library.
 */
#include "mpibench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_RMA_DONE 21

enum rma_op { OP_PUT, OP_GET, OP_ACC };

struct rma {
    enum rma_op op;
    int epoch; /* a lock/unlock epoch per operation, else a flush per iteration */
    int origin; /* this rank issues the operations */
    int peer; /* the other rank of the pair, or -1 */
    int nops; /* operations per iteration: 1, or the window */
    MPI_Win win;
    unsigned char *base; /* the target's window: nops slots of size bytes */
    unsigned char *obuf; /* the origin's buffer: the source of puts and accumulates,
                          * nops slots for gets */
    long done; /* origin: operations issued since prepare() */
};

static uint64_t rma_seed(size_t size, int from)
{
    return ((uint64_t)size << 8) ^ (uint64_t)(from + 41) * 0x100000001B3ull;
}

/* The addends of an accumulate: at most 16, so that the sum of mpibench's default cap of
 * measured iterations (-n, a million) still fits in an int. */
static int acc_addend(size_t size, size_t i)
{
    return (int)(pattern_byte(rma_seed(size, 0), i) & 15) + 1;
}

static void rma_fill_obuf(struct bench_ctx *c, struct rma *r)
{
    if (r->op == OP_ACC) {
        int *v = (int *)r->obuf;
        for (size_t i = 0; i < c->size / sizeof(int); i++)
            v[i] = acc_addend(c->size, i);
    } else if (r->op == OP_PUT) {
        pattern_fill(r->obuf, c->size, rma_seed(c->size, c->rank));
    }
}

static int rma_setup(struct bench_ctx *c, enum rma_op op, int epoch, int windowed)
{
    struct rma *r = calloc(1, sizeof(*r));
    c->state = r;
    r->op = op;
    r->epoch = epoch;
    r->win = MPI_WIN_NULL;
    r->peer = bench_pair_peer(c);
    r->origin = c->rank == 0;
    /* Both ranks of the pair count their CPU time: the target's progress is part of
     * what a library's one-sided path costs. */
    c->active = r->peer >= 0;
    r->nops = windowed ? bench_window(c) : 1;
    c->ops_per_iter = r->nops;
    c->bytes_per_iter = (double)r->nops * (double)c->size;
    if (op == OP_ACC && c->size % sizeof(int) != 0) {
        if (c->rank == 0)
            printf("# skip %s %zu: not a whole number of MPI_INT\n",
                   epoch ? "epochacc" : "acc", c->size);
        free(r); /* the driver tears down only what was set up */
        c->state = NULL;
        return 1;
    }
    size_t slots = (size_t)r->nops * c->size;
    size_t mine = c->active && !r->origin ? slots : 0;
    if (MPI_Win_allocate((MPI_Aint)mine, 1, MPI_INFO_NULL, c->comm, &r->base, &r->win) !=
        MPI_SUCCESS)
        return -1;
    if (!c->active)
        return 0;
    if (r->origin) {
        r->obuf = bench_alloc(op == OP_GET ? slots : c->size);
        rma_fill_obuf(c, r);
    } else if (op == OP_GET) {
        /* Every slot holds the target's pattern: what each get must bring back. */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, r->win);
        for (int w = 0; w < r->nops; w++)
            pattern_fill(r->base + (size_t)w * c->size, c->size, rma_seed(c->size, c->rank));
        MPI_Win_unlock(c->rank, r->win);
    }
    return 0;
}

static void rma_teardown(struct bench_ctx *c)
{
    struct rma *r = c->state;
    if (!r)
        return;
    if (r->win != MPI_WIN_NULL)
        MPI_Win_free(&r->win);
    bench_free(r->obuf);
    free(r);
    c->state = NULL;
}

/* Clear what the measured run writes, so that verify() sees only what it delivered:
 * the target's slots for puts and accumulates, the origin's for gets. */
static void rma_prepare(struct bench_ctx *c)
{
    struct rma *r = c->state;
    if (!c->active)
        return;
    r->done = 0;
    if (r->origin && r->op == OP_GET) {
        memset(r->obuf, 0, (size_t)r->nops * c->size);
    } else if (!r->origin && r->op != OP_GET) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, r->win);
        memset(r->base, 0, (size_t)r->nops * c->size);
        MPI_Win_unlock(c->rank, r->win);
    }
}

/* Operation w of an iteration: slot w of the target (puts, gets) and of the origin
 * (gets); an accumulate always adds into slot 0. */
static void rma_issue(struct bench_ctx *c, struct rma *r, int w)
{
    int n = (int)c->size;
    MPI_Aint disp = (MPI_Aint)w * (MPI_Aint)c->size;
    switch (r->op) {
    case OP_PUT: MPI_Put(r->obuf, n, MPI_BYTE, r->peer, disp, n, MPI_BYTE, r->win); break;
    case OP_GET:
        MPI_Get(r->obuf + (size_t)disp, n, MPI_BYTE, r->peer, disp, n, MPI_BYTE, r->win);
        break;
    case OP_ACC:
        MPI_Accumulate(r->obuf, n / (int)sizeof(int), MPI_INT, r->peer, 0, n / (int)sizeof(int),
                       MPI_INT, MPI_SUM, r->win);
        break;
    }
}

/* The origin's clock is the measurement; the target returns 0 (the driver takes the
 * slowest rank's time). The lock held over a flushed batch is left out of its time, as
 * OSU holds one over its whole loop: the epoch benchmarks measure what locking costs. */
static double rma_run(struct bench_ctx *c, long iters)
{
    struct rma *r = c->state;
    if (!c->active)
        return 0;
    if (!r->origin) {
        MPI_Recv(NULL, 0, MPI_BYTE, r->peer, TAG_RMA_DONE, c->comm, MPI_STATUS_IGNORE);
        return 0;
    }
    double t;
    if (r->epoch) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r->peer, 0, r->win);
            rma_issue(c, r, 0);
            MPI_Win_unlock(r->peer, r->win);
        }
        t = MPI_Wtime() - t0;
    } else {
        MPI_Win_lock(MPI_LOCK_SHARED, r->peer, 0, r->win);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            for (int w = 0; w < r->nops; w++)
                rma_issue(c, r, w);
            MPI_Win_flush(r->peer, r->win);
        }
        t = MPI_Wtime() - t0;
        MPI_Win_unlock(r->peer, r->win);
    }
    r->done += iters * r->nops;
    MPI_Send(NULL, 0, MPI_BYTE, r->peer, TAG_RMA_DONE, c->comm);
    return t;
}

/* Every slot of buf must hold the pattern of seed; slot 0 is checked byte by byte, the
 * others against it (and byte by byte where they differ). */
static long slots_check(const unsigned char *buf, int nslots, size_t size, uint64_t seed,
                        const char *what)
{
    long errors = pattern_check(buf, size, seed, what);
    for (int w = 1; w < nslots; w++) {
        const unsigned char *slot = buf + (size_t)w * size;
        if (errors || memcmp(slot, buf, size) != 0)
            errors += pattern_check(slot, size, seed, what);
    }
    return errors;
}

/* Each int of slot 0 must be the number of accumulates times its addend. */
static long acc_check(struct bench_ctx *c, const int *v, long count)
{
    long errors = 0;
    for (size_t i = 0; i < c->size / sizeof(int); i++) {
        long want = count * acc_addend(c->size, i);
        if (v[i] != want) {
            if (errors < 3)
                bench_complain("acc %zu: int %zu is %d, expected %ld (%ld accumulates)", c->size,
                               i, v[i], want, count);
            errors++;
        }
    }
    return errors;
}

/* Gets: the origin's slots hold the target's pattern. Puts: the target's slots hold the
 * origin's. Accumulates: the origin tells the target how many it issued. The target
 * reads its own window inside a lock of it, which makes the origin's writes visible. */
static long rma_verify(struct bench_ctx *c)
{
    struct rma *r = c->state;
    if (!c->active)
        return 0;
    if (r->op == OP_GET)
        return r->origin ? slots_check(r->obuf, r->nops, c->size, rma_seed(c->size, r->peer),
                                       "get slot")
                         : 0;
    long count = r->done;
    if (r->op == OP_ACC) {
        if (r->origin)
            MPI_Send(&count, 1, MPI_LONG, r->peer, TAG_RMA_DONE, c->comm);
        else
            MPI_Recv(&count, 1, MPI_LONG, r->peer, TAG_RMA_DONE, c->comm, MPI_STATUS_IGNORE);
    }
    if (r->origin)
        return 0;
    long errors;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, r->win);
    if (r->op == OP_PUT)
        errors = slots_check(r->base, r->nops, c->size, rma_seed(c->size, r->peer), "put slot");
    else
        errors = acc_check(c, (const int *)r->base, count);
    MPI_Win_unlock(c->rank, r->win);
    return errors;
}

/* Each benchmark: its setup (which operation, how synchronised) and its entry. */
#define RMA_BENCH(NAME, OP, EPOCH, WINDOWED, KIND, UNIT, SIZES, WHAT)                          \
    static int NAME##_setup(struct bench_ctx *c)                                              \
    {                                                                                         \
        return rma_setup(c, OP, EPOCH, WINDOWED);                                             \
    }                                                                                         \
    const struct bench bench_##NAME = {                                                       \
        .name = #NAME,                                                                        \
        .kind = KIND,                                                                         \
        .unit = UNIT,                                                                         \
        .sizes = SIZES,                                                                       \
        .message_sizes = 1,                                                                   \
        .what = WHAT,                                                                         \
        .setup = NAME##_setup,                                                                \
        .run = rma_run,                                                                       \
        .prepare = rma_prepare,                                                               \
        .verify = rma_verify,                                                                 \
        .teardown = rma_teardown,                                                             \
    }

RMA_BENCH(put, OP_PUT, 0, 0, KIND_LATENCY, "us", "0..4m",
          "one-sided put then flush, passive target (shared lock), rank 0 to N/2");
RMA_BENCH(get, OP_GET, 0, 0, KIND_LATENCY, "us", "0..4m", "one-sided get then flush, as put");
RMA_BENCH(putbw, OP_PUT, 0, 1, KIND_BANDWIDTH, "MB/s", "0..4m",
          "one-sided put bandwidth, windows of puts (-w) then a flush");
RMA_BENCH(getbw, OP_GET, 0, 1, KIND_BANDWIDTH, "MB/s", "0..4m",
          "one-sided get bandwidth, windows as putbw");
RMA_BENCH(acc, OP_ACC, 0, 0, KIND_LATENCY, "us", "4..4m",
          "accumulate (MPI_SUM of MPI_INT) then flush, as put");
RMA_BENCH(epochput, OP_PUT, 1, 0, KIND_LATENCY, "us", "0..4m",
          "lock (exclusive), put, unlock per operation");
RMA_BENCH(epochget, OP_GET, 1, 0, KIND_LATENCY, "us", "0..4m",
          "lock (exclusive), get, unlock per operation");
RMA_BENCH(epochacc, OP_ACC, 1, 0, KIND_LATENCY, "us", "4..4m",
          "lock (exclusive), accumulate, unlock per operation");
