// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - placing a virtual topology (a cartesian grid or a graph) on the ranks of a
 * communicator whose nodes form a torus, so that neighbours in the virtual topology
 * are few links apart. Plain C (pme_topo_search.h says why); topo_map.c is its MPICH
 * side.
 *
 * The cost of a placement is the sum over the edges of weight times links between the
 * two ranks' nodes (0 on one node). Candidates, cheapest wins, the earlier on a tie:
 *   1. the identity (MPICH's order), so that a placement is never worse than it;
 *   2. when the ranks fill every node evenly: the vertices in row-major order over the
 *      torus's dimensions (and the ranks of a node as one more dimension) taken in
 *      every order, straight or as a snake (each line the other way round from the
 *      last): a grid whose dimensions match the torus's lands one link per edge;
 *   3. greedy: vertices in breadth-first order, each on the free rank nearest its
 *      placed neighbours, then improved by exchanging pairs while that lowers the cost
 *      (for up to MAX_SEARCH vertices).
 * Every process computes the same placement from the same inputs: no randomness.
 *
 * Memory comes from the C library, not MPL: this file includes nothing of MPICH, and
 * everything it allocates is freed before the call that allocated it returns.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pme_topo_search.h"

#define MAX_SEARCH 1024         /* vertices for which the greedy candidate is tried */
#define MAX_GRID_DIMS (MPIDI_PME_PLACE_MAX_DIMS + 1)

int MPIDI_PME_place_node(const MPIDI_PME_place_t * pl, const int coords[])
{
    int node = 0;
    for (int d = pl->ndims - 1; d >= 0; d--)
        node = node * pl->dims[d] + coords[d];
    return node;
}

/* The shorter way round is the length of the route between the two nodes: routes go
 * in dimension order, each dimension the shorter way (doc/routes.md). */
int MPIDI_PME_place_hops(const MPIDI_PME_place_t * pl, int a, int b)
{
    int hops = 0;
    for (int d = 0; d < pl->ndims; d++) {
        int k = pl->dims[d];
        int fwd = (pl->at[b][d] - pl->at[a][d] + k) % k;
        hops += fwd < k - fwd ? fwd : k - fwd;
    }
    return hops;
}

/* The node of rank r, from its coordinates. */
static int node_of_rank(const MPIDI_PME_place_t * pl, int r)
{
    int c[MPIDI_PME_PLACE_MAX_DIMS];
    for (int d = 0; d < pl->ndims; d++)
        c[d] = pl->at[r][d];
    return MPIDI_PME_place_node(pl, c);
}

/* Everything the search indexes by (coordinates, node numbers, node_ranks) is checked
 * here once, so that a wrong place is an error and never a read out of bounds. */
int MPIDI_PME_place_check(const MPIDI_PME_place_t * pl)
{
    if (!pl || pl->size < 1 || pl->ndims < 1 || pl->ndims > MPIDI_PME_PLACE_MAX_DIMS ||
        !pl->at || pl->per_node < 0)
        return MPIDI_PME_PLACE_EINVAL;
    long long nodes = 1;
    for (int d = 0; d < pl->ndims; d++) {
        if (pl->dims[d] < 1)
            return MPIDI_PME_PLACE_EINVAL;
        nodes *= pl->dims[d];
        if (nodes > INT_MAX)    /* more nodes than an int counts: none is nnodes */
            return MPIDI_PME_PLACE_EINVAL;
    }
    if (nodes != pl->nnodes)
        return MPIDI_PME_PLACE_EINVAL;
    for (int r = 0; r < pl->size; r++)
        for (int d = 0; d < pl->ndims; d++)
            if (pl->at[r][d] >= pl->dims[d])
                return MPIDI_PME_PLACE_EINVAL;
    if (pl->per_node == 0)
        return MPIDI_PME_PLACE_OK;
    if (!pl->node_ranks || (long long) pl->per_node * pl->nnodes != pl->size)
        return MPIDI_PME_PLACE_EINVAL;
    /* Each node's slots hold ranks of that node, increasing: no rank twice, and as many
     * slots as ranks, so every rank once. */
    for (int i = 0; i < pl->nnodes; i++) {
        for (int j = 0; j < pl->per_node; j++) {
            int r = pl->node_ranks[i * pl->per_node + j];
            if (r < 0 || r >= pl->size || node_of_rank(pl, r) != i ||
                (j > 0 && r <= pl->node_ranks[i * pl->per_node + j - 1]))
                return MPIDI_PME_PLACE_EINVAL;
        }
    }
    return MPIDI_PME_PLACE_OK;
}

/* The edges around each vertex, both directions (CSR). */
typedef struct {
    int n;
    int *start;                 /* n + 1 */
    int *nbr, *w;
} adj_t;

static void adj_free(adj_t * a)
{
    free(a->start);
    free(a->nbr);
    free(a->w);
}

static int adj_build(adj_t * a, int n, const MPIDI_PME_edge_t * e, int nedges)
{
    size_t ends = 2 * (size_t) nedges + 1;
    a->n = n;
    a->start = calloc((size_t) n + 1, sizeof(int));
    a->nbr = malloc(ends * sizeof(int));
    a->w = malloc(ends * sizeof(int));
    if (!a->start || !a->nbr || !a->w)
        return -1;
    for (int i = 0; i < nedges; i++) {
        a->start[e[i].u + 1]++;
        a->start[e[i].v + 1]++;
    }
    for (int v = 0; v < n; v++)
        a->start[v + 1] += a->start[v];
    int *fill = malloc(((size_t) n + 1) * sizeof(int));
    if (!fill)
        return -1;
    memcpy(fill, a->start, ((size_t) n + 1) * sizeof(int));
    for (int i = 0; i < nedges; i++) {
        a->nbr[fill[e[i].u]] = e[i].v;
        a->w[fill[e[i].u]++] = e[i].w;
        a->nbr[fill[e[i].v]] = e[i].u;
        a->w[fill[e[i].v]++] = e[i].w;
    }
    free(fill);
    return 0;
}

static long cost_of(const MPIDI_PME_place_t * pl, const MPIDI_PME_edge_t * e, int nedges,
                    const int *rank_of)
{
    long c = 0;
    for (int i = 0; i < nedges; i++)
        c += (long) e[i].w * MPIDI_PME_place_hops(pl, rank_of[e[i].u], rank_of[e[i].v]);
    return c;
}

/* The grid of ranks when they fill every node evenly: the torus's dimensions, and the
 * ranks of one node as a last dimension when there are several. */
static int grid_dims(const MPIDI_PME_place_t * pl, int *dims)
{
    for (int d = 0; d < pl->ndims; d++)
        dims[d] = pl->dims[d];
    if (pl->per_node > 1)
        dims[pl->ndims] = pl->per_node;
    return pl->ndims + (pl->per_node > 1);
}

/* Candidate 2: vertex v at position v of the grid walked in the dimension order ord
 * (the last fastest, as MPI numbers a cartesian grid), straight or as a snake. */
static void grid_walk(const MPIDI_PME_place_t * pl, int n, const int *ord, int ngd,
                      const int *gd, int snake, int *rank_of)
{
    for (int v = 0; v < n; v++) {
        int g[MAX_GRID_DIMS] = { 0 }, q = v;
        for (int i = ngd - 1; i >= 0; i--) {
            int k = gd[ord[i]], digit = q % k;
            q /= k;
            /* a snake runs each line the other way when the lines before it are odd */
            g[ord[i]] = snake && (q & 1) ? k - 1 - digit : digit;
        }
        int node = MPIDI_PME_place_node(pl, g);
        rank_of[v] = pl->node_ranks[node * pl->per_node + (ngd > pl->ndims ? g[pl->ndims] : 0)];
    }
}

/* The next permutation of ord[0..k-1] in lexicographic order; 0 after the last. */
static int next_order(int *ord, int k)
{
    int i = k - 2;
    while (i >= 0 && ord[i] > ord[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = k - 1;
    while (ord[j] < ord[i])
        j--;
    int t = ord[i];
    ord[i] = ord[j];
    ord[j] = t;
    for (int a = i + 1, b = k - 1; a < b; a++, b--) {
        t = ord[a];
        ord[a] = ord[b];
        ord[b] = t;
    }
    return 1;
}

/* Sum of weight times links from rank r to the placed neighbours of v (skipping vertex
 * skip). */
static long pull(const MPIDI_PME_place_t * pl, const adj_t * a, const int *rank_of, int v,
                 int r, int skip)
{
    long c = 0;
    for (int i = a->start[v]; i < a->start[v + 1]; i++) {
        int u = a->nbr[i];
        if (u != skip && rank_of[u] >= 0)
            c += (long) a->w[i] * MPIDI_PME_place_hops(pl, r, rank_of[u]);
    }
    return c;
}

/* Candidate 3, the greedy placement: breadth-first from vertex 0 (then from each vertex
 * not yet reached), each vertex on the free rank nearest its placed neighbours. A free
 * rank is always there: n <= pl->size. */
static int greedy(const MPIDI_PME_place_t * pl, const adj_t * a, int *rank_of)
{
    int n = a->n;
    int *queue = malloc((size_t) n * sizeof(int));
    char *taken = calloc((size_t) pl->size, 1);
    if (!queue || !taken) {
        free(queue);
        free(taken);
        return -1;
    }
    for (int v = 0; v < n; v++)
        rank_of[v] = -1;
    int head = 0, tail = 0;
    for (int root = 0; root < n; root++) {
        if (rank_of[root] >= 0)
            continue;
        queue[tail++] = root;
        rank_of[root] = -2;     /* queued */
        while (head < tail) {
            int v = queue[head++];
            long best_cost = -1;
            int best = -1;
            rank_of[v] = -1;
            for (int r = 0; r < pl->size; r++) {
                if (taken[r])
                    continue;
                long c = pull(pl, a, rank_of, v, r, -1);
                if (best < 0 || c < best_cost) {
                    best = r;
                    best_cost = c;
                }
            }
            rank_of[v] = best;
            taken[best] = 1;
            for (int i = a->start[v]; i < a->start[v + 1]; i++) {
                if (rank_of[a->nbr[i]] == -1) {
                    rank_of[a->nbr[i]] = -2;
                    queue[tail++] = a->nbr[i];
                }
            }
        }
    }
    free(queue);
    free(taken);
    return 0;
}

/* Exchange the ranks of two vertices while that lowers the cost (a few passes). */
static void improve(const MPIDI_PME_place_t * pl, const adj_t * a, int *rank_of)
{
    for (int pass = 0; pass < 4; pass++) {
        int changed = 0;
        for (int x = 0; x < a->n; x++) {
            for (int y = x + 1; y < a->n; y++) {
                int rx = rank_of[x], ry = rank_of[y];
                long now = pull(pl, a, rank_of, x, rx, y) + pull(pl, a, rank_of, y, ry, x);
                long swapped = pull(pl, a, rank_of, x, ry, y) + pull(pl, a, rank_of, y, rx, x);
                if (swapped < now) {
                    rank_of[x] = ry;
                    rank_of[y] = rx;
                    changed = 1;
                }
            }
        }
        if (!changed)
            break;
    }
}

/* The topology's own arguments; the place is MPIDI_PME_place_check's. */
static int topology_ok(const MPIDI_PME_place_t * pl, int n, const MPIDI_PME_edge_t * e,
                       int nedges, const int *vertex_rank)
{
    if (n < 1 || n > pl->size || nedges < 0 || (nedges > 0 && !e) || !vertex_rank)
        return 0;
    for (int i = 0; i < nedges; i++)
        if (e[i].u < 0 || e[i].u >= n || e[i].v < 0 || e[i].v >= n || e[i].w < 0)
            return 0;
    return 1;
}

int MPIDI_PME_place_map(const MPIDI_PME_place_t * pl, int n, const MPIDI_PME_edge_t * e,
                        int nedges, int *vertex_rank)
{
    int rc = MPIDI_PME_place_check(pl);
    if (rc != MPIDI_PME_PLACE_OK)
        return rc;
    if (!topology_ok(pl, n, e, nedges, vertex_rank))
        return MPIDI_PME_PLACE_EINVAL;

    adj_t a = { 0 };
    int *cand = malloc(((size_t) n + 1) * sizeof(int));
    if (!cand)
        return MPIDI_PME_PLACE_ENOMEM;

    for (int v = 0; v < n; v++)
        vertex_rank[v] = v;
    long best = cost_of(pl, e, nedges, vertex_rank);

    int gd[MAX_GRID_DIMS], ord[MAX_GRID_DIMS];
    int ngd = pl->per_node ? grid_dims(pl, gd) : 0;
    for (int i = 0; i < ngd; i++)
        ord[i] = i;
    for (int more = ngd > 0; more && best > 0; more = next_order(ord, ngd)) {
        for (int snake = 0; snake <= 1; snake++) {
            grid_walk(pl, n, ord, ngd, gd, snake, cand);
            long c = cost_of(pl, e, nedges, cand);
            if (c < best) {
                best = c;
                memcpy(vertex_rank, cand, (size_t) n * sizeof(int));
            }
        }
    }

    if (best > 0 && n <= MAX_SEARCH) {
        if (adj_build(&a, n, e, nedges) || greedy(pl, &a, cand)) {
            rc = MPIDI_PME_PLACE_ENOMEM;
            goto fn_exit;
        }
        improve(pl, &a, cand);
        long c = cost_of(pl, e, nedges, cand);
        if (c < best)
            memcpy(vertex_rank, cand, (size_t) n * sizeof(int));
    }

  fn_exit:
    adj_free(&a);
    free(cand);
    return rc;
}
