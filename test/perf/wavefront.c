// SPDX-License-Identifier: BSD-3-Clause
/*
 * wavefront.c - the pipelined sweeps of NAS LU's solver (its blts and buts): small
 * messages, each followed by computation. The ranks form a 2D grid (MPI_Dims_create);
 * each owns an n x n block of columns of a global (px n) x (py n) x WF_PLANES domain
 * (n = the benchmark's size). One iteration is two sweeps:
 *
 *   forward, plane by plane: receive the boundary column from the west neighbour and
 *   the boundary row from the north one, compute the block in order (each cell needs
 *   its west and north cells and itself one plane back), send the east column and the
 *   south row on, and go on to the next plane;
 *   backward, from the last plane, the same from the east and south, each cell also
 *   reading the forward sweep's value of itself.
 *
 * A rank thus sends and then computes: a message that waits for the sender's next
 * call into MPI holds back every rank downstream of it for a plane's computation,
 * which is why a transport must not delay messages (Nagle's algorithm and TCP's
 * TCP_NODELAY). Each cell does WF_WORK steps of a 64-bit LCG on top of the recurrence,
 * a few dozen nanoseconds, so that computing a plane of a 32 x 32 block takes about as
 * long as a small message's trip.
 *
 * Every iteration starts from values that depend on its number only, so its result
 * is a function of that number: after the measured run, rank 0 computes the last
 * iteration of the whole domain alone, and every rank's checksum of its block must
 * equal the one rank 0 computed for that block.
 */
#include "mpibench.h"

#include <stdio.h>
#include <stdlib.h>

#define WF_PLANES 32
#define WF_WORK 16
#define WF_P 2147483647u /* 2^31 - 1 */

struct wavefront {
    MPI_Comm cart;
    int n, dims[2], coords[2];
    int west, east, north, south; /* MPI_PROC_NULL at the domain's edges */
    uint32_t *fwd, *bwd; /* [plane][i][j], i along x (west to east), j along y */
    uint32_t *col_in, *row_in, *col_out, *row_out; /* boundaries, n values each */
    long iters; /* iterations run so far: the last one's number is iters - 1 */
    uint64_t sum; /* checksum of this rank's block after the last iteration */
};

/* What the domain's edges and the plane before the first hold in iteration t. */
static uint32_t edge_value(long t, int gx, int gy, int k)
{
    return (uint32_t)(((uint64_t)t * 7919u + (uint64_t)(gx + 2) * 104729u +
                       (uint64_t)(gy + 2) * 1299709u + (uint64_t)(k + 2) * 15485863u) %
                      WF_P);
}

/* One cell: the recurrence over its neighbours upstream, then the cell's own work. */
static uint32_t cell(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint64_t x = ((uint64_t)a + 3u * (uint64_t)b + 5u * (uint64_t)c + 7u * (uint64_t)d) % WF_P;
    uint64_t h = x;
    for (int r = 0; r < WF_WORK; r++)
        h = h * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((x + (h >> 33)) % WF_P);
}

/* Cell (i, j) of plane k of a block of bx x by cells: planes, then x, then y. */
static size_t at(int bx, int by, int k, int i, int j)
{
    return ((size_t)k * (size_t)bx + (size_t)i) * (size_t)by + (size_t)j;
}

/* The sweeps of iteration t over a block of bx x by cells at global offset (x0, y0):
 * forward into f, backward into b, the boundaries from the neighbours in the arrays
 * passed (or the domain's edge values). This is the one copy of the arithmetic: every
 * rank runs it on its block, and rank 0 on the whole domain at verification. */
struct sweep_io {
    int bx, by, x0, y0, gx, gy; /* the block's extent and origin, the domain's extent */
    uint32_t *f, *b;
};

static uint32_t fwd_west(const struct sweep_io *s, const uint32_t *in, long t, int k, int j)
{
    return s->x0 == 0 ? edge_value(t, -1, s->y0 + j, k) : in[j];
}

static uint32_t fwd_north(const struct sweep_io *s, const uint32_t *in, long t, int k, int i)
{
    return s->y0 == 0 ? edge_value(t, s->x0 + i, -1, k) : in[i];
}

static void forward_plane(const struct sweep_io *s, long t, int k, const uint32_t *col_in,
                          const uint32_t *row_in)
{
    int bx = s->bx, by = s->by;
    for (int i = 0; i < bx; i++)
        for (int j = 0; j < by; j++) {
            uint32_t w = i ? s->f[at(bx, by, k, i - 1, j)] : fwd_west(s, col_in, t, k, j);
            uint32_t no = j ? s->f[at(bx, by, k, i, j - 1)] : fwd_north(s, row_in, t, k, i);
            uint32_t back = k ? s->f[at(bx, by, k - 1, i, j)]
                              : edge_value(t, s->x0 + i, s->y0 + j, -1);
            s->f[at(bx, by, k, i, j)] = cell(w, no, back, (uint32_t)k);
        }
}

static void backward_plane(const struct sweep_io *s, long t, int k, const uint32_t *col_in,
                           const uint32_t *row_in)
{
    int bx = s->bx, by = s->by;
    for (int i = bx - 1; i >= 0; i--)
        for (int j = by - 1; j >= 0; j--) {
            uint32_t e = i < bx - 1 ? s->b[at(bx, by, k, i + 1, j)]
                         : s->x0 + bx == s->gx ? edge_value(t, s->gx, s->y0 + j, k)
                                               : col_in[j];
            uint32_t so = j < by - 1 ? s->b[at(bx, by, k, i, j + 1)]
                          : s->y0 + by == s->gy ? edge_value(t, s->x0 + i, s->gy, k)
                                                : row_in[i];
            uint32_t up = k < WF_PLANES - 1 ? s->b[at(bx, by, k + 1, i, j)]
                                            : edge_value(t, s->x0 + i, s->y0 + j, WF_PLANES);
            s->b[at(bx, by, k, i, j)] = cell(e, so, up, s->f[at(bx, by, k, i, j)]);
        }
}

/* The checksum of the n x n part at (ox, oy) of a backward result of bx x by cells. */
static uint64_t block_sum(const uint32_t *b, int bx, int by, int ox, int oy, int n)
{
    uint64_t sum = 0;
    for (int k = 0; k < WF_PLANES; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                sum = sum * 1000003u + b[at(bx, by, k, ox + i, oy + j)];
    return sum;
}

static int wavefront_setup(struct bench_ctx *c)
{
    if (c->size < 2 || c->size > 1024) {
        if (c->rank == 0)
            printf("# skip wavefront %zu: the edge must be 2 to 1024\n", c->size);
        return 1;
    }
    struct wavefront *w = calloc(1, sizeof(*w));
    c->state = w;
    w->n = (int)c->size;
    int periods[2] = {0, 0};
    MPI_Dims_create(c->nranks, 2, w->dims);
    MPI_Cart_create(c->comm, 2, w->dims, periods, 0, &w->cart);
    int me;
    MPI_Comm_rank(w->cart, &me);
    MPI_Cart_coords(w->cart, me, 2, w->coords);
    MPI_Cart_shift(w->cart, 0, 1, &w->west, &w->east);
    MPI_Cart_shift(w->cart, 1, 1, &w->north, &w->south);
    size_t cells = (size_t)WF_PLANES * (size_t)w->n * (size_t)w->n;
    w->fwd = bench_alloc(cells * sizeof(uint32_t));
    w->bwd = bench_alloc(cells * sizeof(uint32_t));
    w->col_in = bench_alloc((size_t)w->n * sizeof(uint32_t));
    w->row_in = bench_alloc((size_t)w->n * sizeof(uint32_t));
    w->col_out = bench_alloc((size_t)w->n * sizeof(uint32_t));
    w->row_out = bench_alloc((size_t)w->n * sizeof(uint32_t));
    /* Per iteration every rank but those on the far edges sends one column and one row
     * per plane each way. */
    c->bytes_per_iter = 2.0 * WF_PLANES * (double)w->n * sizeof(uint32_t) *
                        ((double)(w->dims[0] - 1) * w->dims[1] + (double)(w->dims[1] - 1) * w->dims[0]);
    return 0;
}

static void exchange_in(struct wavefront *w, int from_x, int from_y, int tag)
{
    MPI_Recv(w->col_in, w->n, MPI_UINT32_T, from_x, tag, w->cart, MPI_STATUS_IGNORE);
    MPI_Recv(w->row_in, w->n, MPI_UINT32_T, from_y, tag, w->cart, MPI_STATUS_IGNORE);
}

static void exchange_out(struct wavefront *w, const uint32_t *plane, int i_edge, int j_edge,
                         int to_x, int to_y, int tag)
{
    int n = w->n;
    for (int j = 0; j < n; j++)
        w->col_out[j] = plane[(size_t)i_edge * n + j];
    for (int i = 0; i < n; i++)
        w->row_out[i] = plane[(size_t)i * n + j_edge];
    MPI_Send(w->col_out, n, MPI_UINT32_T, to_x, tag, w->cart);
    MPI_Send(w->row_out, n, MPI_UINT32_T, to_y, tag, w->cart);
}

static double wavefront_run(struct bench_ctx *c, long iters)
{
    struct wavefront *w = c->state;
    int n = w->n;
    struct sweep_io s = {n, n, w->coords[0] * n, w->coords[1] * n, w->dims[0] * n,
                         w->dims[1] * n, w->fwd, w->bwd};
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        long t = w->iters++;
        for (int k = 0; k < WF_PLANES; k++) {
            exchange_in(w, w->west, w->north, 2 * k);
            forward_plane(&s, t, k, w->col_in, w->row_in);
            exchange_out(w, w->fwd + at(n, n, k, 0, 0), n - 1, n - 1, w->east, w->south, 2 * k);
        }
        for (int k = WF_PLANES - 1; k >= 0; k--) {
            exchange_in(w, w->east, w->south, 2 * k + 1);
            backward_plane(&s, t, k, w->col_in, w->row_in);
            exchange_out(w, w->bwd + at(n, n, k, 0, 0), 0, 0, w->west, w->north, 2 * k + 1);
        }
    }
    double dt = MPI_Wtime() - t0;
    w->sum = block_sum(w->bwd, n, n, 0, 0, n);
    return dt;
}

/* Rank 0 sweeps the whole domain alone for the last iteration's number. */
static long wavefront_verify(struct bench_ctx *c)
{
    struct wavefront *w = c->state;
    if (!w->iters)
        return 0;
    int n = w->n, nr = w->dims[0] * w->dims[1];
    uint64_t *sums = c->rank == 0 ? malloc((size_t)nr * sizeof(uint64_t)) : NULL;
    MPI_Gather(&w->sum, 1, MPI_UINT64_T, sums, 1, MPI_UINT64_T, 0, w->cart);
    long bad = 0;
    if (c->rank == 0) {
        int gx = w->dims[0] * n, gy = w->dims[1] * n;
        size_t cells = (size_t)WF_PLANES * (size_t)gx * (size_t)gy;
        uint32_t *f = malloc(cells * sizeof(uint32_t)), *b = malloc(cells * sizeof(uint32_t));
        struct sweep_io s = {gx, gy, 0, 0, gx, gy, f, b};
        long t = w->iters - 1;
        for (int k = 0; k < WF_PLANES; k++)
            forward_plane(&s, t, k, NULL, NULL);
        for (int k = WF_PLANES - 1; k >= 0; k--)
            backward_plane(&s, t, k, NULL, NULL);
        for (int r = 0; r < nr; r++) {
            int cc[2];
            MPI_Cart_coords(w->cart, r, 2, cc);
            uint64_t want = block_sum(b, gx, gy, cc[0] * n, cc[1] * n, n);
            if (sums[r] != want) {
                if (bad < 3)
                    bench_complain("wavefront %d: rank %d's block after iteration %ld differs "
                                   "from the whole domain swept alone",
                                   n, r, t);
                bad++;
            }
        }
        free(f);
        free(b);
        free(sums);
    }
    return bad;
}

static void wavefront_teardown(struct bench_ctx *c)
{
    struct wavefront *w = c->state;
    if (!w)
        return;
    bench_free(w->fwd);
    bench_free(w->bwd);
    bench_free(w->col_in);
    bench_free(w->row_in);
    bench_free(w->col_out);
    bench_free(w->row_out);
    MPI_Comm_free(&w->cart);
    free(w);
    c->state = NULL;
}

const struct bench bench_wavefront = {
    .name = "wavefront",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "16,32,64",
    .what = "LU-like pipelined sweeps, forward and back: small messages, then compute; "
            "size = local edge",
    .setup = wavefront_setup,
    .run = wavefront_run,
    .verify = wavefront_verify,
    .teardown = wavefront_teardown,
};
