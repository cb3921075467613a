// SPDX-License-Identifier: BSD-3-Clause
/*
 * halo.c - the lattice kernel of the GigE-mesh QCD machines: a periodic 2D or 3D grid
 * split over a Cartesian grid of ranks (MPI_Dims_create, MPI_Cart_create), each rank
 * holding an n^d block (n = the benchmark's size). One iteration is one step:
 *
 *   1. exchange the 2d faces with the neighbours (Irecv/Isend/Waitall, packed faces);
 *   2. apply the (2d+1)-point sum stencil  v(x) = u(x) + sum_{y next to x} u(y)  mod p;
 *   3. a global sum of the new field (MPI_Allreduce), as a solver's dot product.
 *
 * The answer is known for any number of steps. Arithmetic is modulo the prime
 * p = 123863041 (p - 1 = 2^17 * 3^3 * 5 * 7), and the initial field is
 *
 *   u0(x) = 1 + prod_k w_k^(x_k)
 *
 * with w_k of order L_k (the global extent of dimension k) when L_k divides p - 1, else
 * of order gcd(L_k, p - 1), so that u0 is periodic. Both terms are eigenvectors of the
 * stencil, so after t steps u_t(x) = mu^t + lambda^t * prod_k w_k^(x_k), with mu = 2d+1
 * and lambda = 1 + sum_k (w_k + 1/w_k). A wrong, stale or misplaced halo value changes
 * the field (checked at every point after the measured run), and every step's global
 * sum must equal mu^t * cells + lambda^t * prod_k (w_k == 1 ? L_k : 0).
 */
#include "mpibench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 123863041u
#define GENERATOR 38u

static uint32_t mulmod(uint64_t a, uint64_t b)
{
    return (uint32_t)(a * b % P);
}

static uint32_t powmod(uint64_t b, uint64_t e)
{
    uint64_t r = 1;
    b %= P;
    while (e) {
        if (e & 1)
            r = r * b % P;
        b = b * b % P;
        e >>= 1;
    }
    return (uint32_t)r;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

struct halo {
    int d, n, e; /* dimensions, local edge, padded edge n+2 */
    MPI_Comm cart;
    int dims[3], coords[3], nb[3][2]; /* neighbours: [k][0] minus, [k][1] plus */
    uint32_t *u, *v; /* padded blocks, (n+2)^d */
    uint32_t *sface[3][2], *rface[3][2];
    size_t face; /* points in a face, n^(d-1) */
    long stride[3]; /* index step along each dimension */
    uint32_t w[3], lambda, mu;
    uint32_t *wpow[3]; /* wpow[k][x] = w_k^(global x) for this rank's x, x in 0..n-1 */
    uint64_t cells, charsum; /* global cells, sum of the character over the grid (mod P) */
    long steps, errors;
    MPI_Request req[12];
};

static long idx(const struct halo *h, int i0, int i1, int i2)
{
    return (long)i0 * h->stride[0] + (long)i1 * h->stride[1] + (long)i2 * h->stride[2];
}

/* Visit the face of dimension k at padded coordinate `at`: call f on each point's index. */
#define FOR_FACE(h, k, at, body)                                                              \
    do {                                                                                      \
        int lo_[3] = {1, 1, 1}, hi_[3] = {(h)->n, (h)->n, (h)->n};                            \
        for (int z_ = (h)->d; z_ < 3; z_++)                                                   \
            lo_[z_] = hi_[z_] = 0;                                                            \
        lo_[k] = hi_[k] = (at);                                                               \
        size_t f_ = 0;                                                                        \
        for (int a_ = lo_[0]; a_ <= hi_[0]; a_++)                                             \
            for (int b_ = lo_[1]; b_ <= hi_[1]; b_++)                                         \
                for (int c_ = lo_[2]; c_ <= hi_[2]; c_++, f_++) {                             \
                    long at_ = idx((h), a_, b_, c_);                                          \
                    body;                                                                     \
                }                                                                             \
    } while (0)

static int halo_setup(struct bench_ctx *c, int d)
{
    if (c->size < 2 || c->size > 1 << 16) {
        if (c->rank == 0)
            printf("# skip halo%dd %zu: the edge must be 2 to 65536\n", d, c->size);
        return 1;
    }
    struct halo *h = calloc(1, sizeof(*h));
    c->state = h;
    h->d = d;
    h->n = (int)c->size;
    h->e = h->n + 2;
    int periods[3] = {1, 1, 1};
    MPI_Dims_create(c->nranks, d, h->dims);
    MPI_Cart_create(c->comm, d, h->dims, periods, 0, &h->cart);
    int me;
    MPI_Comm_rank(h->cart, &me);
    MPI_Cart_coords(h->cart, me, d, h->coords);
    for (int k = 0; k < d; k++)
        MPI_Cart_shift(h->cart, k, 1, &h->nb[k][0], &h->nb[k][1]);

    size_t points = 1;
    h->face = 1;
    for (int k = 0; k < d; k++)
        points *= (size_t)h->e;
    for (int k = 0; k < d - 1; k++)
        h->face *= (size_t)h->n;
    for (int k = 0; k < 3; k++)
        h->stride[k] = 0;
    /* row-major: the last dimension is contiguous */
    long s = 1;
    for (int k = d - 1; k >= 0; k--) {
        h->stride[k] = s;
        s *= h->e;
    }
    h->u = bench_alloc(points * sizeof(uint32_t));
    h->v = bench_alloc(points * sizeof(uint32_t));
    for (int k = 0; k < d; k++)
        for (int j = 0; j < 2; j++) {
            h->sface[k][j] = bench_alloc(h->face * sizeof(uint32_t));
            h->rface[k][j] = bench_alloc(h->face * sizeof(uint32_t));
        }

    /* The characters and their eigenvalue. */
    h->mu = (uint32_t)(2 * d + 1);
    uint64_t lambda = 1, charsum = 1;
    h->cells = 1;
    for (int k = 0; k < 3; k++)
        h->w[k] = 1;
    for (int k = 0; k < d; k++) {
        uint64_t L = (uint64_t)h->dims[k] * (uint64_t)h->n;
        uint64_t order = gcd(L, P - 1);
        h->w[k] = powmod(GENERATOR, (P - 1) / order);
        lambda += h->w[k] + powmod(h->w[k], P - 2);
        charsum = h->w[k] == 1 ? charsum * (L % P) % P : 0;
        h->cells *= L;
        h->wpow[k] = malloc((size_t)h->n * sizeof(uint32_t));
        uint32_t x0 = powmod(h->w[k], (uint64_t)h->coords[k] * (uint64_t)h->n);
        for (int x = 0; x < h->n; x++)
            h->wpow[k][x] = x ? mulmod(h->wpow[k][x - 1], h->w[k]) : x0;
    }
    h->lambda = (uint32_t)(lambda % P);
    h->charsum = charsum;
    for (int k = d; k < 3; k++) {
        h->wpow[k] = malloc(sizeof(uint32_t));
        h->wpow[k][0] = 1;
    }

    /* u0 = 1 + character, interior points only (the ghosts are filled by exchanges). */
    int hi2 = d == 3 ? h->n : 1, hi1 = d >= 2 ? h->n : 1;
    for (int a = 1; a <= h->n; a++)
        for (int b = 1; b <= hi1; b++)
            for (int q = 1; q <= hi2; q++) {
                int i2 = d == 3 ? q : 0;
                uint32_t ch = mulmod(mulmod(h->wpow[0][a - 1], h->wpow[1][b - 1]),
                                     h->wpow[2][d == 3 ? q - 1 : 0]);
                h->u[idx(h, a, b, i2)] = (ch + 1) % P;
            }
    h->steps = 0;

    /* bytes per step: every rank sends 2d faces */
    c->bytes_per_iter = (double)c->nranks * 2.0 * d * (double)h->face * sizeof(uint32_t);
    return 0;
}

static int halo2d_setup(struct bench_ctx *c)
{
    return halo_setup(c, 2);
}

static int halo3d_setup(struct bench_ctx *c)
{
    return halo_setup(c, 3);
}

static void halo_exchange(struct halo *h)
{
    int nr = 0, count = (int)h->face;
    for (int k = 0; k < h->d; k++) {
        /* tag 2k+1: travelling towards plus; 2k: towards minus */
        MPI_Irecv(h->rface[k][0], count, MPI_UINT32_T, h->nb[k][0], 2 * k + 1, h->cart,
                  &h->req[nr++]);
        MPI_Irecv(h->rface[k][1], count, MPI_UINT32_T, h->nb[k][1], 2 * k, h->cart,
                  &h->req[nr++]);
    }
    for (int k = 0; k < h->d; k++) {
        uint32_t *lo = h->sface[k][0], *hi = h->sface[k][1];
        FOR_FACE(h, k, 1, lo[f_] = h->u[at_]);
        FOR_FACE(h, k, h->n, hi[f_] = h->u[at_]);
        MPI_Isend(hi, count, MPI_UINT32_T, h->nb[k][1], 2 * k + 1, h->cart, &h->req[nr++]);
        MPI_Isend(lo, count, MPI_UINT32_T, h->nb[k][0], 2 * k, h->cart, &h->req[nr++]);
    }
    MPI_Waitall(nr, h->req, MPI_STATUSES_IGNORE);
    for (int k = 0; k < h->d; k++) {
        const uint32_t *lo = h->rface[k][0], *hi = h->rface[k][1];
        FOR_FACE(h, k, 0, h->u[at_] = lo[f_]);
        FOR_FACE(h, k, h->n + 1, h->u[at_] = hi[f_]);
    }
}

/* v = stencil(u) on the interior; returns the local sum of v. */
static uint64_t halo_compute(struct halo *h)
{
    uint64_t sum = 0;
    const uint32_t *u = h->u;
    uint32_t *v = h->v;
    int n = h->n;
    if (h->d == 2) {
        long e = h->e;
        for (int a = 1; a <= n; a++) {
            const uint32_t *row = u + a * e;
            for (int b = 1; b <= n; b++) {
                uint32_t x = (uint32_t)(((uint64_t)row[b] + row[b - 1] + row[b + 1] + row[b - e] +
                                         row[b + e]) %
                                        P);
                v[a * e + b] = x;
                sum += x;
            }
        }
    } else {
        long s0 = h->stride[0], s1 = h->stride[1];
        for (int a = 1; a <= n; a++)
            for (int b = 1; b <= n; b++) {
                long base = a * s0 + b * s1;
                const uint32_t *r = u + base;
                for (int q = 1; q <= n; q++) {
                    uint32_t x = (uint32_t)(((uint64_t)r[q] + r[q - 1] + r[q + 1] + r[q - s1] +
                                             r[q + s1] + r[q - s0] + r[q + s0]) %
                                            P);
                    v[base + q] = x;
                    sum += x;
                }
            }
    }
    return sum;
}

static uint32_t expected_sum(const struct halo *h, long t)
{
    return (uint32_t)(((uint64_t)powmod(h->mu, (uint64_t)t) * (h->cells % P) +
                       (uint64_t)powmod(h->lambda, (uint64_t)t) * h->charsum) %
                      P);
}

static double halo_run(struct bench_ctx *c, long iters)
{
    struct halo *h = c->state;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        halo_exchange(h);
        uint64_t local = halo_compute(h), global;
        MPI_Allreduce(&local, &global, 1, MPI_UINT64_T, MPI_SUM, h->cart);
        uint32_t *t = h->u;
        h->u = h->v;
        h->v = t;
        h->steps++;
        if (global % P != expected_sum(h, h->steps)) {
            if (h->errors < 3)
                bench_complain("halo%dd %d: global sum after step %ld is %llu, expected %u",
                               h->d, h->n, h->steps, (unsigned long long)(global % P),
                               expected_sum(h, h->steps));
            h->errors++;
        }
    }
    return MPI_Wtime() - t0;
}

static long halo_verify(struct bench_ctx *c)
{
    struct halo *h = c->state;
    long bad = h->errors;
    uint32_t mt = powmod(h->mu, (uint64_t)h->steps), lt = powmod(h->lambda, (uint64_t)h->steps);
    int d = h->d, hi1 = h->n, hi2 = d == 3 ? h->n : 1;
    for (int a = 1; a <= h->n; a++)
        for (int b = 1; b <= hi1; b++)
            for (int q = 1; q <= hi2; q++) {
                uint32_t ch = mulmod(mulmod(h->wpow[0][a - 1], h->wpow[1][b - 1]),
                                     h->wpow[2][d == 3 ? q - 1 : 0]);
                uint32_t want = (uint32_t)(((uint64_t)mt + (uint64_t)lt * ch) % P);
                uint32_t got = h->u[idx(h, a, b, d == 3 ? q : 0)];
                if (got != want) {
                    if (bad - h->errors < 3)
                        bench_complain("halo%dd %d: point (%d,%d,%d) is %u after %ld steps, "
                                       "expected %u",
                                       d, h->n, a - 1, b - 1, q - 1, got, h->steps, want);
                    bad++;
                }
            }
    return bad;
}

static void halo_teardown(struct bench_ctx *c)
{
    struct halo *h = c->state;
    if (!h)
        return;
    for (int k = 0; k < 3; k++) {
        free(h->wpow[k]);
        for (int j = 0; j < 2; j++) {
            bench_free(h->sface[k][j]);
            bench_free(h->rface[k][j]);
        }
    }
    bench_free(h->u);
    bench_free(h->v);
    MPI_Comm_free(&h->cart);
    free(h);
    c->state = NULL;
}

const struct bench bench_halo2d = {
    .name = "halo2d",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "16..1024",
    .what = "2D periodic halo exchange + 5-point stencil + global sum; size = local edge",
    .setup = halo2d_setup,
    .run = halo_run,
    .verify = halo_verify,
    .teardown = halo_teardown,
};

const struct bench bench_halo3d = {
    .name = "halo3d",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "4..64",
    .what = "3D periodic halo exchange + 7-point stencil + global sum; size = local edge",
    .setup = halo3d_setup,
    .run = halo_run,
    .verify = halo_verify,
    .teardown = halo_teardown,
};
