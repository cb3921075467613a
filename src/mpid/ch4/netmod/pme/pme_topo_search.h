/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - where the ranks of a communicator sit on a ring or torus of nodes (a place),
 * and the search for a placement of a virtual topology (a cartesian grid or a graph) on
 * those ranks that puts its neighbours few links apart (topo_search.c).
 *
 * Plain C11 without MPICH's headers, nor pme_core's: the search is computation only, so
 * that test/unit/t_topo_search.c checks it on its own, under ASan/UBSan and valgrind
 * too, in seconds and without an MPI job. The MPICH side is elsewhere: topo_place.c
 * fills a place in for a communicator, topo_map.c asks for a placement and turns the
 * answer into MPI's.
 */
#ifndef PME_TOPO_SEARCH_H_INCLUDED
#define PME_TOPO_SEARCH_H_INCLUDED

#include <stdint.h>

/* The most dimensions a torus has: pme.h's PME_TOPO_MAX_DIMS (topo_place.c asserts that
 * they agree; this header does not include pme.h). */
#define MPIDI_PME_PLACE_MAX_DIMS 3

/* Where the ranks of an intracommunicator sit on a torus (a ring of N nodes is a torus
 * of one dimension of size N). Nodes are numbered x + X * (y + Y * z). */
typedef struct MPIDI_PME_place {
    int size;                   /* ranks */
    int ndims;                  /* the torus's dimensions and sizes */
    int dims[MPIDI_PME_PLACE_MAX_DIMS];
    int nnodes;                 /* the product of dims */
    int per_node;               /* every node holds this many of the ranks; 0: unevenly */
    uint16_t(*at)[MPIDI_PME_PLACE_MAX_DIMS];    /* each rank's node's coordinates */
    int *node_ranks;            /* per_node > 0: node i's ranks, lowest first, at
                                 * i * per_node */
} MPIDI_PME_place_t;

/* An edge u -> v of weight w between two vertices of a virtual topology. Three ints in
 * this order: topo_distgraph.c reads gathered triples of ints as edges. */
typedef struct {
    int u, v, w;
} MPIDI_PME_edge_t;

/* What MPIDI_PME_place_check and MPIDI_PME_place_map return. */
#define MPIDI_PME_PLACE_OK      0
#define MPIDI_PME_PLACE_EINVAL  1       /* an argument is not as this header describes */
#define MPIDI_PME_PLACE_ENOMEM  2       /* out of memory */

/* The index of the node at coords (x + X * (y + Y * z)). */
int MPIDI_PME_place_node(const MPIDI_PME_place_t * pl, const int coords[]);

/* Links between the nodes of ranks a and b: the shorter way round in each dimension. */
int MPIDI_PME_place_hops(const MPIDI_PME_place_t * pl, int a, int b);

/* MPIDI_PME_PLACE_OK when pl is a place as described above: at least one rank; 1 to
 * MPIDI_PME_PLACE_MAX_DIMS dimensions of at least 1 node each, whose product is nnodes;
 * every rank's coordinates inside the torus; and when per_node > 0, per_node times
 * nnodes ranks, node_ranks holding each node's own ranks in increasing order.
 * MPIDI_PME_PLACE_EINVAL otherwise. */
int MPIDI_PME_place_check(const MPIDI_PME_place_t * pl);

/* vertex_rank[v] (v < n): the rank of the place pl that takes vertex v of a virtual
 * topology of n vertices (1 <= n <= pl->size) and nedges edges e (each between vertices
 * below n, of weight >= 0; e may be NULL when nedges is 0). Distinct vertices get
 * distinct ranks. Deterministic: every process computes the same placement from the
 * same arguments. Returns MPIDI_PME_PLACE_OK; MPIDI_PME_PLACE_EINVAL for a bad place
 * or argument, vertex_rank then left as it was; MPIDI_PME_PLACE_ENOMEM, vertex_rank then
 * undefined. */
int MPIDI_PME_place_map(const MPIDI_PME_place_t * pl, int n, const MPIDI_PME_edge_t * e,
                        int nedges, int *vertex_rank);

#endif /* PME_TOPO_SEARCH_H_INCLUDED */
