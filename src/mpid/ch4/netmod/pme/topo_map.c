// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - placing a virtual topology (a cartesian grid or a graph) on the ranks of a
 * communicator whose nodes form a torus, so that neighbours in the virtual topology
 * are few links apart.
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
 */
#include "mpidimpl.h"
#include "pme_impl.h"

#define MAX_SEARCH 1024         /* vertices for which the greedy candidate is tried */
#define MAX_GRID_DIMS (PME_TOPO_MAX_DIMS + 1)

/* The edges around each vertex, both directions (CSR). */
typedef struct {
    int n;
    int *start;                 /* n + 1 */
    int *nbr, *w;
} adj_t;

static void adj_free(adj_t * a)
{
    MPL_free(a->start);
    MPL_free(a->nbr);
    MPL_free(a->w);
}

static int adj_build(adj_t * a, int n, const MPIDI_PME_edge_t * e, int nedges)
{
    a->n = n;
    a->start = MPL_calloc(n + 1, sizeof(int), MPL_MEM_COMM);
    a->nbr = MPL_malloc((2 * nedges + 1) * sizeof(int), MPL_MEM_COMM);
    a->w = MPL_malloc((2 * nedges + 1) * sizeof(int), MPL_MEM_COMM);
    if (!a->start || !a->nbr || !a->w)
        return -1;
    for (int i = 0; i < nedges; i++) {
        a->start[e[i].u + 1]++;
        a->start[e[i].v + 1]++;
    }
    for (int v = 0; v < n; v++)
        a->start[v + 1] += a->start[v];
    int *fill = MPL_malloc((n + 1) * sizeof(int), MPL_MEM_COMM);
    if (!fill)
        return -1;
    memcpy(fill, a->start, (n + 1) * sizeof(int));
    for (int i = 0; i < nedges; i++) {
        a->nbr[fill[e[i].u]] = e[i].v;
        a->w[fill[e[i].u]++] = e[i].w;
        a->nbr[fill[e[i].v]] = e[i].u;
        a->w[fill[e[i].v]++] = e[i].w;
    }
    MPL_free(fill);
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
 * not yet reached), each vertex on the free rank nearest its placed neighbours. */
static int greedy(const MPIDI_PME_place_t * pl, const adj_t * a, int *rank_of)
{
    int n = a->n;
    int *queue = MPL_malloc(n * sizeof(int), MPL_MEM_COMM);
    char *taken = MPL_calloc(pl->size, 1, MPL_MEM_COMM);
    if (!queue || !taken) {
        MPL_free(queue);
        MPL_free(taken);
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
    MPL_free(queue);
    MPL_free(taken);
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

/* vertex_rank[v]: the rank of comm (whose ranks sit as pl says) that takes vertex v of
 * a virtual topology of n <= pl->size vertices and these edges. */
static int map(const MPIDI_PME_place_t * pl, int n, const MPIDI_PME_edge_t * e, int nedges,
               int *vertex_rank)
{
    int mpi_errno = MPI_SUCCESS;
    adj_t a = { 0 };
    int *cand = MPL_malloc((n + 1) * sizeof(int), MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP(!cand, mpi_errno, MPI_ERR_OTHER, "**nomem");

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
                memcpy(vertex_rank, cand, n * sizeof(int));
            }
        }
    }

    if (best > 0 && n <= MAX_SEARCH) {
        MPIR_ERR_CHKANDJUMP(adj_build(&a, n, e, nedges), mpi_errno, MPI_ERR_OTHER, "**nomem");
        MPIR_ERR_CHKANDJUMP(greedy(pl, &a, cand), mpi_errno, MPI_ERR_OTHER, "**nomem");
        improve(pl, &a, cand);
        long c = cost_of(pl, e, nedges, cand);
        if (c < best)
            memcpy(vertex_rank, cand, n * sizeof(int));
    }

  fn_exit:
    adj_free(&a);
    MPL_free(cand);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The vertex this process takes (MPI_UNDEFINED: none) when the n vertices with these
 * edges are placed on comm, which must have a place; *moved: whether any vertex is off
 * the identity; *hash: of the whole placement, for processes to check they agree. */
int MPIDI_PME_take_vertex(const MPIR_Comm * comm, int n, const MPIDI_PME_edge_t * e,
                          int nedges, int *vertex, int *moved, unsigned *hash)
{
    int mpi_errno = MPI_SUCCESS;
    int *vertex_rank = MPL_malloc(n * sizeof(int), MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP(!vertex_rank, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = map(MPIDI_PME_PLACE(comm), n, e, nedges, vertex_rank);
    MPIR_ERR_CHECK(mpi_errno);
    *hash = 2166136261u;
    *moved = 0;
    *vertex = MPI_UNDEFINED;
    for (int v = 0; v < n; v++) {
        *hash = (*hash ^ (unsigned) vertex_rank[v]) * 16777619u;
        *moved |= vertex_rank[v] != v;
        if (vertex_rank[v] == comm->rank)
            *vertex = v;
    }
  fn_exit:
    MPL_free(vertex_rank);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
