// SPDX-License-Identifier: BSD-3-Clause
/*
 * isort.c - the integer bucket sort of NAS IS: every rank holds `size` keys drawn from a
 * bell-shaped distribution (the mean of four uniform numbers, as NAS IS does) over
 * [0, maxkey), maxkey = total keys / 16 rounded to a power of two, at least 2^10. One
 * iteration sorts them all over the ranks:
 *
 *   1. count the local keys per bucket (1024 buckets of equal key ranges);
 *   2. MPI_Allreduce of the bucket counts;
 *   3. give each rank a run of whole buckets holding about total/N keys;
 *   4. order the local keys by bucket; MPI_Alltoall of the send counts;
 *   5. MPI_Alltoallv of the keys;
 *   6. counting sort of the received keys over this rank's key range.
 *
 * Checked after the measured run: each rank's keys are sorted and within its range, no
 * key of a rank is smaller than one of a rank before it (MPI_Exscan of the maxima), the
 * number of keys is conserved, every bucket holds as many keys as the global count
 * said, and the sum and the sum of squares of all keys are those of the input.
 */
#include "mpibench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS_LOG 10

struct isort {
    long nkeys; /* per rank */
    uint32_t maxkey;
    int shift, nbuckets;
    uint32_t *keys, *bucketed, *recv, *sorted, *cnt;
    long cap; /* of recv and sorted */
    long *bcount, *gcount, *bptr;
    int *bstart; /* rank r owns buckets [bstart[r], bstart[r+1]) */
    int *scount, *sdispl, *rcount, *rdispl;
    long nrecv;
    uint64_t sum0, sq0; /* global sum and sum of squares of the input */
};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int isort_setup(struct bench_ctx *c)
{
    if (c->size < 1 || c->size > (size_t)1 << 28) {
        if (c->rank == 0)
            printf("# skip isort %zu: 1 to 2^28 keys per rank\n", c->size);
        return 1;
    }
    struct isort *s = calloc(1, sizeof(*s));
    c->state = s;
    s->nkeys = (long)c->size;
    uint64_t total = (uint64_t)s->nkeys * (uint64_t)c->nranks, mk = 1024;
    while (mk * 16 < total && mk < (1u << 31))
        mk <<= 1;
    s->maxkey = (uint32_t)mk;
    int log = 0;
    while ((1ull << log) < mk)
        log++;
    s->nbuckets = 1 << NBUCKETS_LOG;
    s->shift = log - NBUCKETS_LOG;

    s->keys = bench_alloc((size_t)s->nkeys * sizeof(uint32_t));
    s->bucketed = bench_alloc((size_t)s->nkeys * sizeof(uint32_t));
    uint64_t seed = 314159265ull + (uint64_t)c->rank * 0x100000001ull, sum = 0, sq = 0;
    for (long i = 0; i < s->nkeys; i++) {
        uint64_t k = 0;
        for (int j = 0; j < 4; j++)
            k += splitmix(&seed) % (mk / 4);
        s->keys[i] = (uint32_t)k;
        sum += k;
        sq += k * k;
    }
    uint64_t loc[2] = {sum, sq}, glob[2];
    MPI_Allreduce(loc, glob, 2, MPI_UINT64_T, MPI_SUM, c->comm);
    s->sum0 = glob[0];
    s->sq0 = glob[1];

    s->bcount = calloc((size_t)s->nbuckets, sizeof(long));
    s->gcount = calloc((size_t)s->nbuckets, sizeof(long));
    s->bptr = calloc((size_t)s->nbuckets, sizeof(long));
    s->bstart = calloc((size_t)c->nranks + 1, sizeof(int));
    s->scount = calloc((size_t)c->nranks, sizeof(int));
    s->sdispl = calloc((size_t)c->nranks, sizeof(int));
    s->rcount = calloc((size_t)c->nranks, sizeof(int));
    s->rdispl = calloc((size_t)c->nranks, sizeof(int));
    c->bytes_per_iter = (double)total * sizeof(uint32_t);
    return 0;
}

static void isort_once(struct bench_ctx *c, struct isort *s)
{
    int nr = c->nranks;
    memset(s->bcount, 0, (size_t)s->nbuckets * sizeof(long));
    for (long i = 0; i < s->nkeys; i++)
        s->bcount[s->keys[i] >> s->shift]++;
    MPI_Allreduce(s->bcount, s->gcount, s->nbuckets, MPI_LONG, MPI_SUM, c->comm);

    /* Bucket b goes to the rank whose share of the keys it starts in. */
    long total = 0, acc = 0;
    for (int b = 0; b < s->nbuckets; b++)
        total += s->gcount[b];
    int r = 0;
    s->bstart[0] = 0;
    for (int b = 0; b < s->nbuckets; b++) {
        int owner = total ? (int)((double)acc * nr / (double)total) : 0;
        while (r < owner && r < nr - 1)
            s->bstart[++r] = b;
        acc += s->gcount[b];
    }
    while (r < nr)
        s->bstart[++r] = s->nbuckets;

    /* Local keys in bucket order; what goes to whom. */
    long pos = 0;
    for (int b = 0; b < s->nbuckets; b++) {
        s->bptr[b] = pos;
        pos += s->bcount[b];
    }
    for (long i = 0; i < s->nkeys; i++) {
        uint32_t k = s->keys[i];
        s->bucketed[s->bptr[k >> s->shift]++] = k;
    }
    for (int q = 0; q < nr; q++) {
        long n = 0;
        for (int b = s->bstart[q]; b < s->bstart[q + 1]; b++)
            n += s->bcount[b];
        s->scount[q] = (int)n;
        s->sdispl[q] = q ? s->sdispl[q - 1] + s->scount[q - 1] : 0;
    }
    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, c->comm);
    s->nrecv = 0;
    for (int q = 0; q < nr; q++) {
        s->rdispl[q] = (int)s->nrecv;
        s->nrecv += s->rcount[q];
    }
    if (s->nrecv > s->cap) {
        bench_free(s->recv);
        bench_free(s->sorted);
        s->cap = s->nrecv + s->nrecv / 8 + 16;
        s->recv = bench_alloc((size_t)s->cap * sizeof(uint32_t));
        s->sorted = bench_alloc((size_t)s->cap * sizeof(uint32_t));
    }
    MPI_Alltoallv(s->bucketed, s->scount, s->sdispl, MPI_UINT32_T, s->recv, s->rcount, s->rdispl,
                  MPI_UINT32_T, c->comm);

    /* Counting sort over this rank's key range. */
    uint32_t lo = (uint32_t)s->bstart[c->rank] << s->shift;
    uint32_t hi = (uint32_t)s->bstart[c->rank + 1] << s->shift;
    size_t range = hi - lo;
    if (!s->cnt)
        s->cnt = bench_alloc(((size_t)s->maxkey + 1) * sizeof(uint32_t));
    memset(s->cnt, 0, (range + 1) * sizeof(uint32_t));
    for (long i = 0; i < s->nrecv; i++)
        s->cnt[s->recv[i] - lo]++;
    long out = 0;
    for (size_t k = 0; k < range; k++)
        for (uint32_t j = s->cnt[k]; j > 0; j--)
            s->sorted[out++] = lo + (uint32_t)k;
}

static double isort_run(struct bench_ctx *c, long iters)
{
    struct isort *s = c->state;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        isort_once(c, s);
    return MPI_Wtime() - t0;
}

static long isort_verify(struct bench_ctx *c)
{
    struct isort *s = c->state;
    long bad = 0;
    uint32_t lo = (uint32_t)s->bstart[c->rank] << s->shift;
    uint32_t hi = (uint32_t)s->bstart[c->rank + 1] << s->shift;
    uint64_t sum = 0, sq = 0;
    for (long i = 0; i < s->nrecv; i++) {
        uint32_t k = s->sorted[i];
        if (k < lo || k >= hi || (i && k < s->sorted[i - 1])) {
            if (bad < 3)
                bench_complain("isort %ld: key %ld (%u) out of order or outside [%u, %u)",
                               s->nkeys, i, k, lo, hi);
            bad++;
        }
        sum += k;
        sq += (uint64_t)k * k;
    }
    /* Each of my buckets holds as many keys as the global count. */
    long b = s->bstart[c->rank], i = 0;
    for (; b < s->bstart[c->rank + 1]; b++) {
        long n = 0;
        while (i < s->nrecv && (s->sorted[i] >> s->shift) == (uint32_t)b)
            n++, i++;
        if (n != s->gcount[b]) {
            if (bad < 3)
                bench_complain("isort %ld: bucket %ld has %ld keys, the global count says %ld",
                               s->nkeys, b, n, s->gcount[b]);
            bad++;
        }
    }
    /* No key of mine is below a key of a lower rank. */
    long mymax = s->nrecv ? (long)s->sorted[s->nrecv - 1] : -1, before = -1;
    MPI_Exscan(&mymax, &before, 1, MPI_LONG, MPI_MAX, c->comm);
    if (c->rank == 0)
        before = -1;
    if (s->nrecv && before > (long)s->sorted[0]) {
        bench_complain("isort %ld: a lower rank holds key %ld above my smallest %u", s->nkeys,
                       before, s->sorted[0]);
        bad++;
    }
    /* Conservation: count, sum, sum of squares. */
    uint64_t loc[3] = {(uint64_t)s->nrecv, sum, sq}, glob[3];
    MPI_Allreduce(loc, glob, 3, MPI_UINT64_T, MPI_SUM, c->comm);
    if (c->rank == 0 && (glob[0] != (uint64_t)s->nkeys * (uint64_t)c->nranks ||
                         glob[1] != s->sum0 || glob[2] != s->sq0)) {
        bench_complain("isort %ld: %llu keys (expected %llu), checksums %s", s->nkeys,
                       (unsigned long long)glob[0],
                       (unsigned long long)s->nkeys * (unsigned long long)c->nranks,
                       glob[1] == s->sum0 && glob[2] == s->sq0 ? "agree" : "differ");
        bad++;
    }
    return bad;
}

static void isort_teardown(struct bench_ctx *c)
{
    struct isort *s = c->state;
    if (!s)
        return;
    bench_free(s->keys);
    bench_free(s->bucketed);
    bench_free(s->recv);
    bench_free(s->sorted);
    bench_free(s->cnt);
    free(s->bcount);
    free(s->gcount);
    free(s->bptr);
    free(s->bstart);
    free(s->scount);
    free(s->sdispl);
    free(s->rcount);
    free(s->rdispl);
    free(s);
    c->state = NULL;
}

const struct bench bench_isort = {
    .name = "isort",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "1k..1m",
    .what = "NAS IS bucket sort: allreduce, alltoall, alltoallv; size = keys per rank",
    .setup = isort_setup,
    .run = isort_run,
    .verify = isort_verify,
    .teardown = isort_teardown,
};
