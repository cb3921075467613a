/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpibench.h - PME's MPI benchmarks: the interface between the driver (mpibench.c) and
 * the benchmarks (pt2pt.c, coll.c, halo.c, isort.c, wavefront.c, transpose.c, rma.c).
 * Plain C99 and MPI-3, any mpicc.
 */
#ifndef MPIBENCH_H
#define MPIBENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* What a benchmark's value means, for the driver's arithmetic and the runner's tables. */
enum bench_kind {
    KIND_LATENCY, /* microseconds per operation, lower is better */
    KIND_BANDWIDTH, /* MB/s (10^6 bytes per second), higher is better */
    KIND_RATE /* millions of messages per second, higher is better */
};

struct bench_opts {
    double target_s; /* measured time per size */
    double warmup_s; /* warm-up (and calibration) time per size */
    long max_iters; /* cap on the measured iterations (all batches) */
    int window; /* messages in flight in bw, bibw, msgrate; operations per flush in
                 * putbw, getbw */
    size_t max_window_bytes; /* receive slots of one window, per rank */
    long check_every; /* ping-pong: verify the payload every this many round trips */
};

/* One benchmark at one size on one communicator. The driver calls setup once per size,
 * then run() several times (warm-up, calibration, the measured run), then verify(). */
struct bench_ctx {
    MPI_Comm comm;
    int rank, nranks;
    size_t size; /* message bytes, or the problem size (halo edge, keys per rank) */
    const struct bench_opts *opts;
    int active; /* does this rank do the work (and count its CPU time)? */
    double bytes_per_iter; /* payload bytes all ranks move per iteration, for CPU per GB */
    double ops_per_iter; /* operations per iteration the value is expressed in */
    void *state; /* the benchmark's own */
};

struct bench {
    const char *name;
    enum bench_kind kind;
    const char *unit;
    const char *sizes; /* default sizes */
    int message_sizes; /* sizes are message bytes (mpibench -s applies) */
    const char *what; /* one line for --list */
    /* Allocate and prepare; return 0, or 1 to skip this size (reason printed by rank 0),
     * or -1 on a fatal error. Must be called by every rank. */
    int (*setup)(struct bench_ctx *c);
    /* Run ITERS iterations; return the seconds this rank measured (0 if inactive). */
    double (*run)(struct bench_ctx *c, long iters);
    /* Optional, before the measured run (not timed): e.g. clear receive buffers so that
     * verify() sees only what the measured run delivered. */
    void (*prepare)(struct bench_ctx *c);
    /* Check the results of the last run; return the number of errors on this rank. */
    long (*verify)(struct bench_ctx *c);
    void (*teardown)(struct bench_ctx *c);
};

extern const struct bench bench_pingpong, bench_bw, bench_bibw, bench_msgrate;
extern const struct bench bench_allreduce, bench_reduce, bench_alltoall, bench_bcast,
    bench_barrier;
extern const struct bench bench_halo2d, bench_halo3d, bench_isort, bench_wavefront,
    bench_transpose;
extern const struct bench bench_put, bench_get, bench_putbw, bench_getbw, bench_acc,
    bench_epochput, bench_epochget, bench_epochacc;

/* Helpers shared by the benchmarks. */
void *bench_alloc(size_t bytes); /* page-aligned, touched, aborts on failure */
/* Messages (or one-sided operations) of c->size bytes in a window: -w, fewer when their
 * slots would take more than max_window_bytes (at least 1). */
int bench_window(const struct bench_ctx *c);
/* The pair of ranks that measure between nodes, 0 and N/2 (with hydra's block placement,
 * on different nodes): the other rank of it, or -1 for a rank outside it. */
int bench_pair_peer(const struct bench_ctx *c);
void bench_free(void *p);
/* The byte at offset i of a buffer tagged by seed: a pattern no other seed repeats. */
static inline unsigned char pattern_byte(uint64_t seed, size_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t)(i >> 8) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (unsigned char)(x + i * 7u);
}
void pattern_fill(void *buf, size_t n, uint64_t seed);
/* Number of bytes that differ from the pattern; the first few are reported on stderr. */
long pattern_check(const void *buf, size_t n, uint64_t seed, const char *what);
void bench_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
