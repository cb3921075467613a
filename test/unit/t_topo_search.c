// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_topo_search.c - the placement of virtual topologies on the ranks of a ring or torus
 * of nodes (MPIDI_PME_place_map, src/mpid/ch4/netmod/pme/topo_search.c), compiled on its
 * own without MPICH, so that it runs in every stage of CI (plain, ASan/UBSan,
 * valgrind).
 * pme-test: tier=default cpu=100 time=1
 *
 * What a program gets from MPI_Cart_create, MPI_Graph_create and the distributed graphs
 * with reorder on a torus (doc/mpi.md, "Rank order"), the processes placed by mpiexec in
 * a shuffled order, in which MPICH's order has neighbours several links apart:
 *   - nodes are numbered x + X * (y + Y * z), and two ranks are as many links apart as
 *     the shorter way round in each dimension (0 on one node);
 *   - a grid that matches the torus has every neighbour one link away: 4x4 (periodic or
 *     not) on torus:4x4, 2x2x2 and a ring of 8 on torus:2x2x2, a 2x4 grid in torus:4x4;
 *     the first of the walks over the torus wins, so vertex (i, j) of the 4x4 grid
 *     lands on node (x = i, y = j);
 *   - several ranks per node are one more dimension: the neighbours along a grid's
 *     last dimension share a node (2x2x2 on torus:2x2 and 4x4x8 on torus:4x4x4, two
 *     ranks a node), the others are one link apart;
 *   - a weighted path on a ring has every edge one link long, a weighted triangle its
 *     heavy edge one link long; a graph given both ways, with a self-loop or with an
 *     edge twice is placed too; two neighbours among ranks spread unevenly land on one
 *     node;
 *   - past the greedy search's 1024 vertices, the walks alone: a path of 1056 on
 *     torus:32x33 one link per edge (as a snake), a 33x32 grid on it too (its dimensions
 *     taken the other way round from the torus's);
 *   - grids that do not match (2x4, 4x2, 2x8), graphs, fewer vertices than ranks, ranks
 *     spread unevenly over the nodes, 1100 vertices: never more links in sum than
 *     MPICH's order;
 *   - MPICH's order is kept when nothing is cheaper: a program already placed well, all
 *     ranks on one node, ring:3 and ring:2 (where every node is one link from every
 *     other, as on a switch; on a real switch the netmod has no place and never asks),
 *     a topology without edges;
 *   - every placement gives each vertex a rank of its own (every rank once when there
 *     are as many vertices as ranks), and the same placement when asked again, as
 *     every process of a job asks;
 *   - a place or topology that is not as pme_topo_search.h describes (no dimensions, too
 *     many, a dimension of 0, dimensions that do not multiply to the nodes, ranks per
 *     node that do not multiply to the size, coordinates outside the torus, node lists
 *     that do not match, more vertices than ranks, edges naming no vertex, negative
 *     weights, missing arrays) is refused with MPIDI_PME_PLACE_EINVAL, the result array
 *     untouched, and never read out of bounds (ASan).
 * The expected results come from the documentation: the costs and bounds are worked
 * out by hand in the comments, links counted by the test's own reading of the torus.
 */
#include "pme_topo_search.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pme_test.h"

#define MAXD MPIDI_PME_PLACE_MAX_DIMS

/* A place, and the node of each rank as the test put it there. */
typedef struct {
    MPIDI_PME_place_t pl;
    int *node;
} fx_t;

/* size ranks on a torus of dims, rank r on node node_of[r]: its coordinates read from
 * the node's number (x + X * (y + Y * z)); node_ranks, lowest first, when every node
 * holds as many ranks as the others. */
static void place_make(fx_t * f, int ndims, const int *dims, int size, const int *node_of)
{
    MPIDI_PME_place_t *pl = &f->pl;
    memset(f, 0, sizeof(*f));
    pl->size = size;
    pl->ndims = ndims;
    pl->nnodes = 1;
    for (int d = 0; d < ndims; d++) {
        pl->dims[d] = dims[d];
        pl->nnodes *= dims[d];
    }
    pl->at = calloc((size_t) size, sizeof(*pl->at));
    f->node = malloc((size_t) size * sizeof(int));
    int *count = calloc((size_t) pl->nnodes, sizeof(int));
    CHECK(pl->at && f->node && count, "test setup: out of memory");
    for (int r = 0; r < size; r++) {
        CHECK(node_of[r] >= 0 && node_of[r] < pl->nnodes, "test setup: rank %d on node %d",
              r, node_of[r]);
        f->node[r] = node_of[r];
        count[node_of[r]]++;
        int q = node_of[r];
        for (int d = 0; d < ndims; d++) {
            pl->at[r][d] = (uint16_t) (q % dims[d]);
            q /= dims[d];
        }
    }
    int even = size % pl->nnodes == 0;
    for (int i = 0; even && i < pl->nnodes; i++)
        even = count[i] == size / pl->nnodes;
    if (even) {
        pl->per_node = size / pl->nnodes;
        pl->node_ranks = malloc((size_t) size * sizeof(int));
        CHECK(pl->node_ranks, "test setup: out of memory");
        memset(count, 0, (size_t) pl->nnodes * sizeof(int));
        for (int r = 0; r < size; r++)
            pl->node_ranks[node_of[r] * pl->per_node + count[node_of[r]]++] = r;
    }
    free(count);
}

static void place_drop(fx_t * f)
{
    free(f->pl.at);
    free(f->pl.node_ranks);
    free(f->node);
}

/* Links between the nodes of ranks a and b, by the test's own reading of the torus. */
static int links(const fx_t * f, int a, int b)
{
    int na = f->node[a], nb = f->node[b], sum = 0;
    for (int d = 0; d < f->pl.ndims; d++) {
        int k = f->pl.dims[d], diff = abs(na % k - nb % k);
        sum += diff < k - diff ? diff : k - diff;
        na /= k;
        nb /= k;
    }
    return sum;
}

static long cost(const fx_t * f, const MPIDI_PME_edge_t * e, int ne, const int *vr)
{
    long c = 0;
    for (int i = 0; i < ne; i++)
        c += (long) e[i].w * links(f, vr[e[i].u], vr[e[i].v]);
    return c;
}

/* MPICH's order: vertex v on rank v. */
static long identity_cost(const fx_t * f, const MPIDI_PME_edge_t * e, int ne, int n)
{
    int *id = malloc((size_t) n * sizeof(int));
    CHECK(id, "test setup: out of memory");
    for (int v = 0; v < n; v++)
        id[v] = v;
    long c = cost(f, e, ne, id);
    free(id);
    return c;
}

/* A fixed shuffle of 0..n-1 (xorshift, Fisher-Yates): where mpiexec put the ranks. */
static void shuffle(int *a, int n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (int i = n - 1; i > 0; i--) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        int j = (int) (x % (uint32_t) (i + 1)), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Rank r on node r, then shuffled. */
static void shuffled_nodes(int *node_of, int n, uint32_t seed)
{
    for (int r = 0; r < n; r++)
        node_of[r] = r;
    shuffle(node_of, n, seed);
}

/* The vertex of coordinates c in an MPI cartesian grid: row-major, the last dimension
 * fastest. */
static int grid_vertex(int ndims, const int *dims, const int *c)
{
    int v = 0;
    for (int d = 0; d < ndims; d++)
        v = v * dims[d] + c[d];
    return v;
}

/* The edges of an MPI cartesian grid, each pair of neighbours once, in *e (malloc'ed):
 * every vertex to the next along each dimension, round to the first in a periodic one.
 * A periodic dimension of 2 has one edge per pair (the neighbour is the same both
 * ways), one of 1 none. Returns the number of edges; *nv the number of vertices. */
static int grid_edges(int ndims, const int *dims, const int *periods, MPIDI_PME_edge_t ** e,
                      int *nv)
{
    int n = 1, ne = 0;
    for (int d = 0; d < ndims; d++)
        n *= dims[d];
    *e = malloc((size_t) n * (size_t) ndims * sizeof(**e) + 1);
    CHECK(*e, "test setup: out of memory");
    for (int v = 0; v < n; v++) {
        int c[8];
        for (int d = ndims - 1, q = v; d >= 0; q /= dims[d], d--)
            c[d] = q % dims[d];
        for (int d = 0; d < ndims; d++) {
            int keep = c[d];
            if (c[d] + 1 < dims[d])
                c[d]++;
            else if (periods[d] && dims[d] > 2)
                c[d] = 0;
            else
                continue;
            (*e)[ne++] = (MPIDI_PME_edge_t) {
            v, grid_vertex(ndims, dims, c), 1};
            c[d] = keep;
        }
    }
    *nv = n;
    return ne;
}

/* What every placement must be. Places the topology twice (every process of a job asks
 * with the same arguments and must get the same answer), checks that each vertex has a
 * rank of its own and that the sum of links is no more than MPICH's order's; returns
 * the sum. */
static long place(const fx_t * f, int n, const MPIDI_PME_edge_t * e, int ne, int *vr,
                  const char *what)
{
    int *again = malloc((size_t) n * sizeof(int));
    char *seen = calloc((size_t) f->pl.size, 1);
    CHECK(again && seen, "test setup: out of memory");
    CHECK(MPIDI_PME_place_check(&f->pl) == MPIDI_PME_PLACE_OK, "%s: the place is refused",
          what);
    int rc = MPIDI_PME_place_map(&f->pl, n, e, ne, vr);
    CHECK(rc == MPIDI_PME_PLACE_OK, "%s: place_map returned %d", what, rc);
    rc = MPIDI_PME_place_map(&f->pl, n, e, ne, again);
    CHECK(rc == MPIDI_PME_PLACE_OK, "%s: place_map returned %d the second time", what, rc);
    CHECK(!memcmp(vr, again, (size_t) n * sizeof(int)), "%s: two calls, two placements",
          what);
    for (int v = 0; v < n; v++) {
        CHECK(vr[v] >= 0 && vr[v] < f->pl.size, "%s: vertex %d on rank %d of %d", what, v,
              vr[v], f->pl.size);
        CHECK(!seen[vr[v]], "%s: rank %d takes two vertices (vertex %d)", what, vr[v], v);
        seen[vr[v]] = 1;
    }
    long c = cost(f, e, ne, vr), mpich = identity_cost(f, e, ne, n);
    CHECK(c <= mpich, "%s: %ld links in sum, MPICH's order %ld", what, c, mpich);
    free(again);
    free(seen);
    return c;
}

/* The test's premise: MPICH's order is worse than the best, or there is nothing to see. */
static void premise(const fx_t * f, const MPIDI_PME_edge_t * e, int ne, int n, long best,
                    const char *what)
{
    long mpich = identity_cost(f, e, ne, n);
    CHECK(mpich > best, "test setup (%s): MPICH's order already costs %ld, the best %ld", what,
          mpich, best);
}

/* ---- the scenarios ---- */

static void numbering(void)
{
    fx_t f;
    int node_of[16];

    /* torus:2x3x2: node (1,2,1) is 1 + 2 * (2 + 3 * 1) = 11; rank r on node r. */
    int d3[3] = { 2, 3, 2 };
    for (int r = 0; r < 16; r++)
        node_of[r] = r;
    place_make(&f, 3, d3, 12, node_of);
    int c[3] = { 1, 2, 1 };
    CHECK(MPIDI_PME_place_node(&f.pl, c) == 11, "node (1,2,1) of 2x3x2 is %d, not 11",
          MPIDI_PME_place_node(&f.pl, c));
    for (int r = 0; r < 12; r++) {
        int rc_[MAXD];
        for (int d = 0; d < 3; d++)
            rc_[d] = f.pl.at[r][d];
        CHECK(MPIDI_PME_place_node(&f.pl, rc_) == r, "rank %d's coordinates give node %d", r,
              MPIDI_PME_place_node(&f.pl, rc_));
    }
    /* (0,0,0) to (1,2,1): 1 in x, 1 in y (2 forward, 1 back), 1 in z */
    CHECK(MPIDI_PME_place_hops(&f.pl, 0, 11) == 3, "2x3x2: (0,0,0) to (1,2,1) is %d links",
          MPIDI_PME_place_hops(&f.pl, 0, 11));
    place_drop(&f);

    /* ring:5: the shorter way round */
    int d1[1] = { 5 };
    place_make(&f, 1, d1, 5, node_of);
    static const int ring5[][3] = { {0, 3, 2}, {0, 2, 2}, {1, 4, 2}, {0, 1, 1}, {4, 0, 1},
    {2, 2, 0}
    };
    for (size_t i = 0; i < sizeof(ring5) / sizeof(ring5[0]); i++)
        CHECK(MPIDI_PME_place_hops(&f.pl, ring5[i][0], ring5[i][1]) == ring5[i][2],
              "ring:5: node %d to %d is %d links, not %d", ring5[i][0], ring5[i][1],
              MPIDI_PME_place_hops(&f.pl, ring5[i][0], ring5[i][1]), ring5[i][2]);
    place_drop(&f);

    /* ring:4: both ways 2 */
    d1[0] = 4;
    place_make(&f, 1, d1, 4, node_of);
    CHECK(MPIDI_PME_place_hops(&f.pl, 0, 2) == 2 && MPIDI_PME_place_hops(&f.pl, 3, 1) == 2,
          "ring:4: opposite nodes not 2 links apart");
    place_drop(&f);

    /* torus:4x4: (0,0) to (2,3), node 2 + 4 * 3 = 14: 2 + 1 links */
    int d2[2] = { 4, 4 };
    place_make(&f, 2, d2, 16, node_of);
    CHECK(MPIDI_PME_place_hops(&f.pl, 0, 14) == 3, "4x4: (0,0) to (2,3) is %d links",
          MPIDI_PME_place_hops(&f.pl, 0, 14));
    place_drop(&f);

    /* torus:2x2, two ranks a node (rank r on node r / 2): one node, no link */
    int two[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
    d2[0] = d2[1] = 2;
    place_make(&f, 2, d2, 8, two);
    CHECK(f.pl.per_node == 2, "test setup: per_node %d", f.pl.per_node);
    CHECK(MPIDI_PME_place_hops(&f.pl, 4, 5) == 0 && MPIDI_PME_place_hops(&f.pl, 0, 7) == 2,
          "2x2: ranks of one node, or of opposite nodes, at the wrong distance");
    place_drop(&f);
}

/* A 4x4 grid on torus:4x4, one rank a node, shuffled. Every edge joins two ranks of
 * different nodes, so 1 link each is the least: 32 for the periodic grid, 24 without
 * wrap-around. MPICH's order is worse (premise); the first walk over the torus
 * (dimensions in order, straight) already costs the least and a later candidate must
 * be cheaper to win, so grid vertex (i, j), numbered 4 * i + j, is on node (x = i,
 * y = j), number i + 4 * j. */
static void matching_grid_4x4(void)
{
    fx_t f;
    int node_of[16], vr[16], nv;
    int dims[2] = { 4, 4 }, periodic[2] = { 1, 1 }, open[2] = { 0, 0 };
    MPIDI_PME_edge_t *e;
    shuffled_nodes(node_of, 16, 1);
    place_make(&f, 2, dims, 16, node_of);

    int ne = grid_edges(2, dims, periodic, &e, &nv);
    CHECK(ne == 32 && nv == 16, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 32, "4x4 periodic");
    CHECK(place(&f, nv, e, ne, vr, "4x4 periodic on torus:4x4") == 32,
          "4x4 periodic on torus:4x4: not one link per edge");
    for (int i = 0; i < ne; i++)
        CHECK(links(&f, vr[e[i].u], vr[e[i].v]) == 1, "edge %d-%d: %d links", e[i].u, e[i].v,
              links(&f, vr[e[i].u], vr[e[i].v]));
    for (int v = 0; v < nv; v++)
        CHECK(f.node[vr[v]] == v / 4 + 4 * (v % 4), "grid (%d,%d) on node %d, not %d", v / 4,
              v % 4, f.node[vr[v]], v / 4 + 4 * (v % 4));
    free(e);

    ne = grid_edges(2, dims, open, &e, &nv);
    CHECK(ne == 24, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 24, "4x4 open");
    CHECK(place(&f, nv, e, ne, vr, "4x4 open on torus:4x4") == 24,
          "4x4 without wrap-around on torus:4x4: not one link per edge");
    free(e);
    place_drop(&f);
}

/* torus:2x2x2, one rank a node, shuffled: the 2x2x2 grid (12 edges), a ring of 8 and
 * a path of 8 (doc/mpi.md names the ring) each have every edge one link long; the
 * grid as MPI_Graph_create gets it (every edge in both directions): 16 edges of a
 * ring, 16 links. */
static void matching_2x2x2(void)
{
    fx_t f;
    int node_of[8], vr[8], nv;
    int dims[3] = { 2, 2, 2 }, periods[3] = { 1, 1, 1 };
    int ring[1] = { 8 }, on[1] = { 1 }, off[1] = { 0 };
    MPIDI_PME_edge_t *e;
    shuffled_nodes(node_of, 8, 2);
    place_make(&f, 3, dims, 8, node_of);

    int ne = grid_edges(3, dims, periods, &e, &nv);
    CHECK(ne == 12, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 12, "2x2x2");
    CHECK(place(&f, nv, e, ne, vr, "2x2x2 on torus:2x2x2") == 12,
          "2x2x2 on torus:2x2x2: not one link per edge");
    free(e);

    ne = grid_edges(1, ring, on, &e, &nv);
    CHECK(ne == 8, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 8, "ring of 8");
    CHECK(place(&f, nv, e, ne, vr, "ring of 8 on torus:2x2x2") == 8,
          "a ring of 8 on torus:2x2x2: not one link per edge");
    for (int i = 0; i < ne; i++)
        CHECK(links(&f, vr[e[i].u], vr[e[i].v]) == 1, "ring edge %d-%d: %d links", e[i].u,
              e[i].v, links(&f, vr[e[i].u], vr[e[i].v]));

    /* the same ring with each edge given from both ends */
    MPIDI_PME_edge_t both[16];
    for (int i = 0; i < ne; i++) {
        both[2 * i] = e[i];
        both[2 * i + 1] = (MPIDI_PME_edge_t) {
        e[i].v, e[i].u, 1};
    }
    CHECK(place(&f, nv, both, 2 * ne, vr, "ring of 8 both ways") == 16,
          "a ring of 8 given both ways: not one link per edge");
    free(e);

    ne = grid_edges(1, ring, off, &e, &nv);
    CHECK(ne == 7, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 7, "path of 8");
    CHECK(place(&f, nv, e, ne, vr, "path of 8 on torus:2x2x2") == 7,
          "a path of 8 on torus:2x2x2: not one link per edge");
    free(e);
    place_drop(&f);
}

/* Two ranks a node: the node's ranks are the grid's last dimension.
 * torus:2x2, 8 ranks shuffled two to a node, the 2x2x2 grid (12 edges): a node holds two
 * vertices, so at most 4 edges lie within nodes and the other 8 cost a link at least;
 * the first walk (the ranks of a node as the last, fastest dimension) reaches 8, so the
 * edges along the grid's last dimension (vertices 2k and 2k + 1) lie within nodes and
 * the others are one link long.
 * torus:4x4x4, 128 ranks two to a node, the 4x4x8 grid (384 edges): at most 64 within
 * nodes, so at least 320 links; the first walk puts grid vertex (i, j, k) on node
 * (i, j, k / 2): 256 edges of one link along the first two dimensions, along the third
 * 64 within a node (k even) and 64 of one link. */
static void two_per_node(void)
{
    fx_t f;
    int node_of[128], vr[128], nv;
    int d2[2] = { 2, 2 }, g3[3] = { 2, 2, 2 }, p3[3] = { 1, 1, 1 };
    MPIDI_PME_edge_t *e;
    for (int r = 0; r < 8; r++)
        node_of[r] = r / 2;
    shuffle(node_of, 8, 3);
    place_make(&f, 2, d2, 8, node_of);
    CHECK(f.pl.per_node == 2, "test setup: per_node %d", f.pl.per_node);
    int ne = grid_edges(3, g3, p3, &e, &nv);
    premise(&f, e, ne, nv, 8, "2x2x2 on torus:2x2");
    CHECK(place(&f, nv, e, ne, vr, "2x2x2 on torus:2x2, 2 a node") == 8,
          "2x2x2 on torus:2x2 with 2 ranks a node: not 8 links");
    for (int i = 0; i < ne; i++) {
        int along_last = e[i].u / 2 == e[i].v / 2;
        CHECK(links(&f, vr[e[i].u], vr[e[i].v]) == (along_last ? 0 : 1),
              "edge %d-%d: %d links", e[i].u, e[i].v, links(&f, vr[e[i].u], vr[e[i].v]));
    }
    free(e);
    place_drop(&f);

    int d3[3] = { 4, 4, 4 }, g[3] = { 4, 4, 8 };
    for (int r = 0; r < 128; r++)
        node_of[r] = r / 2;
    shuffle(node_of, 128, 4);
    place_make(&f, 3, d3, 128, node_of);
    CHECK(f.pl.per_node == 2, "test setup: per_node %d", f.pl.per_node);
    ne = grid_edges(3, g, p3, &e, &nv);
    CHECK(ne == 384 && nv == 128, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 320, "4x4x8 on torus:4x4x4");
    CHECK(place(&f, nv, e, ne, vr, "4x4x8 on torus:4x4x4, 2 a node") == 320,
          "4x4x8 on torus:4x4x4 with 2 ranks a node: not 320 links");
    for (int v = 0; v < nv; v++) {
        int i = v / 32, j = v / 8 % 4, k = v % 8;
        CHECK(f.node[vr[v]] == i + 4 * (j + 4 * (k / 2)), "grid (%d,%d,%d) on node %d", i, j,
              k, f.node[vr[v]]);
    }
    for (int i = 0; i < ne; i++)
        CHECK(links(&f, vr[e[i].u], vr[e[i].v]) <= 1, "edge %d-%d: %d links", e[i].u, e[i].v,
              links(&f, vr[e[i].u], vr[e[i].v]));
    free(e);
    place_drop(&f);
}

/* Grids that do not match the torus (doc/testing.md, t-topo.sh: 2x4, 4x2, 2x8) and a
 * star: never more links than MPICH's order. A 2x4 grid with wrap-around in the 4 fits
 * two neighbouring lines of torus:4x4, and the first walk finds it: 12 edges, 12 links. */
static void other_shapes(void)
{
    fx_t f;
    int node_of[16], vr[16], nv;
    int d3[3] = { 2, 2, 2 }, d2[2] = { 4, 4 };
    MPIDI_PME_edge_t *e;
    static const int shapes[][2] = { {2, 4}, {4, 2} };
    shuffled_nodes(node_of, 8, 5);
    place_make(&f, 3, d3, 8, node_of);
    for (int s = 0; s < 2; s++) {
        for (int p = 0; p < 2; p++) {
            int wrap[2] = { p, p };
            int nedges = grid_edges(2, shapes[s], wrap, &e, &nv);
            char what[64];
            snprintf(what, sizeof(what), "%dx%d%s on torus:2x2x2", shapes[s][0], shapes[s][1],
                     p ? " periodic" : "");
            place(&f, nv, e, nedges, vr, what);
            free(e);
        }
    }
    MPIDI_PME_edge_t star[7];
    for (int i = 0; i < 7; i++)
        star[i] = (MPIDI_PME_edge_t) {
        0, i + 1, 1};
    place(&f, 8, star, 7, vr, "a star of 8 on torus:2x2x2");
    place_drop(&f);

    shuffled_nodes(node_of, 16, 6);
    place_make(&f, 2, d2, 16, node_of);
    int g28[2] = { 2, 8 }, per[2] = { 1, 1 };
    int ne = grid_edges(2, g28, per, &e, &nv);
    place(&f, nv, e, ne, vr, "2x8 on torus:4x4");
    free(e);
    int g24[2] = { 2, 4 };
    ne = grid_edges(2, g24, per, &e, &nv);
    CHECK(ne == 12 && nv == 8, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 12, "2x4 in torus:4x4");
    CHECK(place(&f, nv, e, ne, vr, "2x4 in torus:4x4") == 12,
          "2x4 in torus:4x4: not one link per edge");
    free(e);
    place_drop(&f);
}

/* Weights: a path of 8 on ring:8 fits the ring whatever its weights, every edge one
 * link: the sum of the weights. A graph with a self-loop and an edge given twice (as
 * MPI_Graph_create allows) is placed too. */
static void weighted_graphs(void)
{
    fx_t f;
    int node_of[8], vr[8], ring8[1] = { 8 };
    static const int w[7] = { 5, 1, 9, 2, 7, 3, 4 };
    MPIDI_PME_edge_t path[7];
    long sum = 0;
    shuffled_nodes(node_of, 8, 7);
    place_make(&f, 1, ring8, 8, node_of);
    for (int i = 0; i < 7; i++) {
        path[i] = (MPIDI_PME_edge_t) {
        i, i + 1, w[i]};
        sum += w[i];
    }
    premise(&f, path, 7, 8, sum, "weighted path");
    CHECK(place(&f, 8, path, 7, vr, "weighted path on ring:8") == sum,
          "a weighted path on ring:8: not one link per edge");

    /* A triangle cannot lie on a ring of 8 with every edge one link long. With the
     * edge 0-2 of weight 10 and the others of 1, the heavy edge must be the short one:
     * 10 for it, and vertex 1, on another node than both, is a link from one of them
     * and two from the other: 13 at least, and the search reaches it (vertex 2, or 1,
     * goes to the free rank that pulls least toward the placed ones). Counting the
     * edges alike would give 4 for a line 0, 1, 2 and 22 with the weights. */
    MPIDI_PME_edge_t tri[3] = { {0, 1, 1}, {1, 2, 1}, {0, 2, 10} };
    premise(&f, tri, 3, 3, 13, "weighted triangle");
    CHECK(place(&f, 3, tri, 3, vr, "weighted triangle on ring:8") == 13,
          "a weighted triangle on ring:8: not 13 links");
    CHECK(links(&f, vr[0], vr[2]) == 1, "the heavy edge 0-2 is %d links long",
          links(&f, vr[0], vr[2]));

    MPIDI_PME_edge_t odd[] = { {0, 0, 3}, {0, 1, 1}, {1, 0, 1}, {2, 5, 4}, {2, 5, 4},
    {7, 3, 0}, {6, 6, 1}
    };
    place(&f, 8, odd, (int) (sizeof(odd) / sizeof(odd[0])), vr, "self-loops and twice");
    place_drop(&f);
}

/* Fewer vertices than ranks, and ranks spread unevenly over the nodes (no walk over the
 * torus then, only MPICH's order and the search). */
static void uneven_and_fewer(void)
{
    fx_t f;
    int node_of[1100], vr[1100], nv;
    int d2[2] = { 2, 2 }, d44[2] = { 4, 4 }, per[2] = { 1, 1 };
    MPIDI_PME_edge_t *e;

    /* torus:2x2 with 6 ranks: nodes hold 2, 2, 1 and 1 */
    static const int six[6] = { 3, 0, 2, 1, 0, 1 };
    place_make(&f, 2, d2, 6, six);
    CHECK(f.pl.per_node == 0, "test setup: per_node %d", f.pl.per_node);
    int g32[2] = { 3, 2 };
    int ne = grid_edges(2, g32, per, &e, &nv);
    CHECK(ne == 9, "test setup: %d edges", ne);
    place(&f, nv, e, ne, vr, "3x2 on 6 ranks of torus:2x2");
    free(e);
    MPIDI_PME_edge_t path4[3] = { {0, 1, 1}, {1, 2, 1}, {2, 3, 1} };
    place(&f, 4, path4, 3, vr, "4 vertices on 6 ranks");
    place_drop(&f);

    /* ring:4 with 9 ranks, nodes holding 2, 2, 2 and 3, rank 1 a link from rank 0. Two
     * vertices joined by an edge: MPICH's order puts them a link apart; no walk over the
     * torus (the ranks are uneven), but the search puts the second vertex on the free
     * rank nearest the first, and wherever the first goes a free rank shares its node. */
    static const int nine[9] = { 0, 1, 2, 3, 0, 1, 2, 3, 3 };
    int ring4[1] = { 4 };
    place_make(&f, 1, ring4, 9, nine);
    CHECK(f.pl.per_node == 0, "test setup: per_node %d", f.pl.per_node);
    premise(&f, path4, 1, 2, 0, "a pair on ring:4");
    CHECK(place(&f, 2, path4, 1, vr, "a pair on 9 ranks of ring:4") == 0,
          "a pair on ring:4: not on one node");
    place_drop(&f);

    /* an even place that does not say so (per_node 0) is still a place */
    static const int eight[8] = { 1, 3, 0, 2, 2, 0, 3, 1 };
    place_make(&f, 2, d2, 8, eight);
    f.pl.per_node = 0;
    int ring[1] = { 8 }, on[1] = { 1 };
    ne = grid_edges(1, ring, on, &e, &nv);
    place(&f, nv, e, ne, vr, "ring of 8, per_node 0");
    free(e);
    place_drop(&f);

    /* 4 and 8 vertices on 16 ranks of torus:4x4 */
    shuffled_nodes(node_of, 16, 8);
    place_make(&f, 2, d44, 16, node_of);
    int g22[2] = { 2, 2 };
    ne = grid_edges(2, g22, per, &e, &nv);
    CHECK(ne == 4 && nv == 4, "test setup: %d edges", ne);
    place(&f, nv, e, ne, vr, "2x2 on 16 ranks");
    free(e);
    place(&f, 8, path4, 3, vr, "a path of 4 among 8 vertices on 16 ranks");
    place_drop(&f);

    /* 1100 ranks on torus:4x4, 68 or 69 a node, a ring of 1100 */
    for (int r = 0; r < 1100; r++)
        node_of[r] = r % 16;
    shuffle(node_of, 1100, 9);
    place_make(&f, 2, d44, 1100, node_of);
    CHECK(f.pl.per_node == 0, "test setup: per_node %d", f.pl.per_node);
    int big[1] = { 1100 };
    ne = grid_edges(1, big, on, &e, &nv);
    place(&f, nv, e, ne, vr, "ring of 1100 on torus:4x4");
    free(e);
    place_drop(&f);
}

/* Past the greedy search's limit (1024 vertices), only the walks over the torus are
 * tried, in every order of its dimensions, straight and as a snake. torus:32x33 with
 * 1056 ranks, shuffled:
 *   - a path of 1056 vertices: walked straight, each line's end is two links from the
 *     next line's start; as a snake (each line the other way round from the last) every
 *     edge is one link long: 1055;
 *   - a 33x32 grid with wrap-around (2112 edges): walking the torus's y (33) slowest and
 *     x (32) fastest puts grid vertex (i, j) = 32 * i + j on node (x = j, y = i), whose
 *     number is j + 32 * i: the vertex's own number, every edge one link. The dimensions
 *     taken in the torus's own order (x slowest) give more, so the order must change. */
static void beyond_search(void)
{
    fx_t f;
    enum { N = 32 * 33 };
    static int node_of[N], vr[N];
    int nv, dims[2] = { 32, 33 }, line[1] = { N }, off[1] = { 0 };
    int g[2] = { 33, 32 }, per[2] = { 1, 1 };
    MPIDI_PME_edge_t *e;
    shuffled_nodes(node_of, N, 11);
    place_make(&f, 2, dims, N, node_of);

    int ne = grid_edges(1, line, off, &e, &nv);
    premise(&f, e, ne, nv, N - 1, "path of 1056");
    CHECK(place(&f, nv, e, ne, vr, "path of 1056 on torus:32x33") == N - 1,
          "a path of 1056 on torus:32x33: not one link per edge");
    free(e);

    ne = grid_edges(2, g, per, &e, &nv);
    CHECK(ne == 2 * N, "test setup: %d edges", ne);
    premise(&f, e, ne, nv, 2 * N, "33x32");
    CHECK(place(&f, nv, e, ne, vr, "33x32 on torus:32x33") == 2 * N,
          "33x32 on torus:32x33: not one link per edge");
    for (int v = 0; v < nv; v++)
        CHECK(f.node[vr[v]] == v, "33x32: grid (%d,%d) on node %d, not %d", v / 32, v % 32,
              f.node[vr[v]], v);
    free(e);
    place_drop(&f);
}

/* MPICH's order is kept when nothing is cheaper (the earlier candidate wins a tie). */
static void mpich_order_kept(void)
{
    fx_t f;
    int node_of[16], vr[16], nv;
    MPIDI_PME_edge_t *e;

    /* rank r on node r of torus:4x4: grid vertex (i, j) = 4 * i + j is on node
     * (x = j, y = i), and the grid's neighbours are already one link apart */
    int d44[2] = { 4, 4 }, per[2] = { 1, 1 };
    for (int r = 0; r < 16; r++)
        node_of[r] = r;
    place_make(&f, 2, d44, 16, node_of);
    int ne = grid_edges(2, d44, per, &e, &nv);
    CHECK(place(&f, nv, e, ne, vr, "4x4 already placed") == 32, "4x4 already placed: cost");
    for (int v = 0; v < nv; v++)
        CHECK(vr[v] == v, "4x4 already placed: vertex %d moved to rank %d", v, vr[v]);
    free(e);
    place_drop(&f);

    /* no edges: every placement costs nothing */
    shuffle(node_of, 16, 10);
    place_make(&f, 2, d44, 16, node_of);
    CHECK(place(&f, 16, NULL, 0, vr, "no edges") == 0, "no edges: cost");
    for (int v = 0; v < 16; v++)
        CHECK(vr[v] == v, "no edges: vertex %d moved to rank %d", v, vr[v]);
    place_drop(&f);

    /* all on one node: nothing is ever a link away */
    int one[1] = { 1 }, zeros[6] = { 0 };
    place_make(&f, 1, one, 6, zeros);
    MPIDI_PME_edge_t all[15];
    int k = 0;
    for (int a = 0; a < 6; a++)
        for (int b = a + 1; b < 6; b++)
            all[k++] = (MPIDI_PME_edge_t) {
            a, b, 1};
    CHECK(place(&f, 6, all, k, vr, "one node") == 0, "one node: cost");
    for (int v = 0; v < 6; v++)
        CHECK(vr[v] == v, "one node: vertex %d moved to rank %d", v, vr[v]);
    place_drop(&f);

    /* ring:3 and ring:2: every node one link from every other, as on a switch, so every
     * placement with one rank a node costs the same */
    static const int r3[3] = { 2, 0, 1 }, r2[2] = { 1, 0 };
    int three[1] = { 3 }, two[1] = { 2 };
    MPIDI_PME_edge_t tri[3] = { {0, 1, 1}, {1, 2, 2}, {2, 0, 3} };
    place_make(&f, 1, three, 3, r3);
    CHECK(place(&f, 3, tri, 3, vr, "ring:3") == 6, "ring:3: cost");
    for (int v = 0; v < 3; v++)
        CHECK(vr[v] == v, "ring:3: vertex %d moved to rank %d", v, vr[v]);
    place(&f, 2, tri, 1, vr, "ring:3, 2 vertices");
    CHECK(vr[0] == 0 && vr[1] == 1, "ring:3, 2 vertices: moved to %d %d", vr[0], vr[1]);
    place_drop(&f);
    place_make(&f, 1, two, 2, r2);
    CHECK(place(&f, 2, tri, 1, vr, "ring:2") == 1, "ring:2: cost");
    CHECK(vr[0] == 0 && vr[1] == 1, "ring:2: moved to %d %d", vr[0], vr[1]);
    place_drop(&f);
}

/* One bad argument at a time: refused, the result untouched. */
static void expect_refused(const MPIDI_PME_place_t * pl, int n, const MPIDI_PME_edge_t * e,
                           int ne, int check_too, const char *what)
{
    int vr[16];
    for (int i = 0; i < 16; i++)
        vr[i] = -7;
    int rc = MPIDI_PME_place_map(pl, n, e, ne, vr);
    CHECK(rc == MPIDI_PME_PLACE_EINVAL, "%s: place_map returned %d, not EINVAL", what, rc);
    for (int i = 0; i < 16; i++)
        CHECK(vr[i] == -7, "%s: refused, but vertex_rank[%d] written (%d)", what, i, vr[i]);
    if (check_too)
        CHECK(MPIDI_PME_place_check(pl) == MPIDI_PME_PLACE_EINVAL,
              "%s: place_check returned %d, not EINVAL", what, MPIDI_PME_place_check(pl));
}

static void bad_input(void)
{
    fx_t f;
    int d2[2] = { 2, 2 }, vr[16], nv;
    static const int nodes[8] = { 0, 1, 2, 3, 3, 2, 1, 0 };
    int ring[1] = { 8 }, on[1] = { 1 };
    MPIDI_PME_edge_t *e;
    place_make(&f, 2, d2, 8, nodes);
    int ne = grid_edges(1, ring, on, &e, &nv);
    CHECK(f.pl.per_node == 2, "test setup: per_node %d", f.pl.per_node);
    /* the good place and topology first, so that each refusal below is for its one
     * change: node 0 holds ranks 0 and 7, node 1 ranks 1 and 6, ... */
    place(&f, nv, e, ne, vr, "the good one");
    CHECK(f.pl.node_ranks[0] == 0 && f.pl.node_ranks[1] == 7, "test setup: node_ranks");

    MPIDI_PME_place_t p;
    expect_refused(NULL, nv, e, ne, 1, "no place");
#define BAD(change, what) do { p = f.pl; change; expect_refused(&p, nv, e, ne, 1, what); } while (0)
    BAD(p.size = 0, "size 0");
    BAD((p.size = 0, p.per_node = 0), "size 0, ranks uneven");
    BAD(p.size = -8, "size -8");
    BAD(p.ndims = 0, "no dimensions");
    BAD((p.ndims = 0, p.nnodes = 1, p.per_node = 0), "no dimensions, 1 node, ranks uneven");
    BAD(p.ndims = -1, "-1 dimensions");
    BAD(p.ndims = MAXD + 1, "too many dimensions");
    BAD(p.dims[1] = 0, "a dimension of 0");
    BAD(p.dims[0] = -2, "a dimension of -2");
    BAD(p.nnodes = 5, "dimensions 2x2 for 5 nodes");
    BAD((p.per_node = 0, p.nnodes = 5), "dimensions 2x2 for 5 nodes, ranks uneven");
    BAD((p.ndims = 3, p.dims[0] = p.dims[1] = p.dims[2] = 2000000000),
        "dimensions whose product overflows");
    BAD(p.size = 6, "2 ranks a node on 4 nodes for 6 ranks");
    BAD(p.per_node = 3, "3 ranks a node on 4 nodes for 8 ranks");
    BAD(p.per_node = -1, "-1 ranks a node");
    BAD(p.node_ranks = NULL, "no node_ranks");
    BAD(p.at = NULL, "no coordinates");
#undef BAD

    /* the arrays themselves, each change undone after */
    uint16_t keep = f.pl.at[5][0];
    f.pl.at[5][0] = 2;
    expect_refused(&f.pl, nv, e, ne, 1, "a coordinate outside the torus");
    p = f.pl;
    p.per_node = 0;
    expect_refused(&p, nv, e, ne, 1, "a coordinate outside the torus, ranks uneven");
    f.pl.at[5][0] = keep;
    /* one rank a node, each node's list right (ranks 0 to 3 sit on nodes 0 to 3), but
     * 4 nodes of 1 rank are not 8 ranks */
    int first4[4] = { 0, 1, 2, 3 };
    p = f.pl;
    p.per_node = 1;
    p.node_ranks = first4;
    expect_refused(&p, nv, e, ne, 1, "1 rank a node on 4 nodes for 8 ranks");
    int *nr = f.pl.node_ranks, k0 = nr[0], k1 = nr[1], k2 = nr[2];
    nr[0] = nr[2];
    nr[2] = k0;
    expect_refused(&f.pl, nv, e, ne, 1, "node_ranks naming a rank of another node");
    nr[0] = k0;
    nr[2] = k2;
    nr[1] = nr[0];
    expect_refused(&f.pl, nv, e, ne, 1, "node_ranks naming a rank twice");
    nr[0] = k1;
    nr[1] = k0;
    expect_refused(&f.pl, nv, e, ne, 1, "node_ranks not lowest first");
    nr[0] = k0;
    nr[1] = 8;
    expect_refused(&f.pl, nv, e, ne, 1, "node_ranks naming rank 8 of 8");
    nr[1] = -1;
    expect_refused(&f.pl, nv, e, ne, 1, "node_ranks naming rank -1");
    nr[1] = k1;
    CHECK(MPIDI_PME_place_check(&f.pl) == MPIDI_PME_PLACE_OK, "test setup: not undone");

    /* the topology */
    expect_refused(&f.pl, 0, e, ne, 0, "no vertices");
    expect_refused(&f.pl, 0, NULL, 0, 0, "no vertices, no edges");
    expect_refused(&f.pl, -3, e, ne, 0, "-3 vertices");
    expect_refused(&f.pl, 9, e, ne, 0, "9 vertices on 8 ranks");
    expect_refused(&f.pl, nv, e, -1, 0, "-1 edges");
    expect_refused(&f.pl, nv, NULL, ne, 0, "edges missing");
    MPIDI_PME_edge_t keep_e = e[3];
    e[3].u = -1;
    expect_refused(&f.pl, nv, e, ne, 0, "an edge from vertex -1");
    e[3] = keep_e;
    e[3].v = nv;
    expect_refused(&f.pl, nv, e, ne, 0, "an edge to vertex 8 of 8");
    e[3] = keep_e;
    e[3].w = -1;
    expect_refused(&f.pl, nv, e, ne, 0, "a negative weight");
    e[3] = keep_e;
    /* 4 vertices: the ring's edges name vertices up to 7 */
    expect_refused(&f.pl, 4, e, ne, 0, "edges naming vertices past n");
    int rc = MPIDI_PME_place_map(&f.pl, nv, e, ne, NULL);
    CHECK(rc == MPIDI_PME_PLACE_EINVAL, "no result array: place_map returned %d", rc);
    place(&f, nv, e, ne, vr, "the good one, after");
    free(e);
    place_drop(&f);
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"numbering", numbering},
        {"grid4x4", matching_grid_4x4},
        {"cube", matching_2x2x2},
        {"per_node", two_per_node},
        {"shapes", other_shapes},
        {"weights", weighted_graphs},
        {"uneven", uneven_and_fewer},
        {"beyond", beyond_search},
        {"kept", mpich_order_kept},
        {"bad", bad_input},
    };
    run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
    printf("t_topo_search: all checks passed\n");
    return 0;
}
