// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - MPI_Dist_graph_create and MPI_Dist_graph_create_adjacent with reorder on a
 * torus.
 *
 * MPICH 4.0.2 has no device hook for distributed graphs (MPII_Topo_ops covers cartesian
 * and graph topologies only) and ignores their reorder. The next best thing is the
 * profiling interface, from inside the library: MPI_Dist_graph_create and
 * MPI_Dist_graph_create_adjacent are weak aliases of their PMPI_ names, and the strong
 * definitions here take their place. They gather the whole graph (each process's
 * edges, from every process: O(edges) memory each), place it as topo_map.c does, split
 * comm_old by the new ranks, and have PMPI_Dist_graph_create_adjacent give the process
 * with new rank r the edges that rank r of comm_old gave, as the standard says, in
 * terms of the new ranks (vertex r is new rank r). Otherwise, and whenever the identity
 * is as good, they call the PMPI function unchanged. A tool that calls the PMPI names
 * directly gets MPICH's order; with QMPI (--enable-qmpi) the MPI names are MPICH's own
 * and this file defines nothing.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

#if (defined(HAVE_PRAGMA_WEAK) || defined(HAVE_WEAK_ATTRIBUTE)) && !defined(ENABLE_QMPI)

/* What each process gave: its counts, then its ints in one array. For
 * MPI_Dist_graph_create_adjacent a process gives its lists (sources, the source weights,
 * destinations, destination weights; weights only when weighted), for
 * MPI_Dist_graph_create its edges as (source, destination, weight) triples. */
enum { C_LEN, C_IN, C_OUT, C_WEIGHTED, C_VALID, COUNTS };

typedef struct {
    int size;
    int *counts;                /* per process: COUNTS ints */
    int *displs;                /* where its ints start in ints */
    int *ints;
    int weighted;
} gathered_t;

static void gathered_free(gathered_t * g)
{
    MPL_free(g->counts);
    MPL_free(g->displs);
    MPL_free(g->ints);
}

/* The comm_old of a call PME may reorder, or NULL (then the PMPI function decides). */
static MPIR_Comm *placed_comm(MPI_Comm comm_old, int reorder)
{
    MPIR_Comm *comm = NULL;
    if (!reorder || !MPIR_CVAR_CH4_PME_TOPO_MAP || comm_old == MPI_COMM_NULL ||
        HANDLE_GET_MPI_KIND(comm_old) != MPIR_COMM ||
        HANDLE_GET_KIND(comm_old) == HANDLE_KIND_INVALID)
        return NULL;
    MPIR_Comm_get_ptr(comm_old, comm);
    return comm && comm->comm_kind == MPIR_COMM_KIND__INTRACOMM && MPIDI_PME_PLACE(comm) ?
        comm : NULL;
}

static int in_range(const int *v, int n, int size)
{
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= size)
            return 0;
    return 1;
}

/* Append n ints to *at (none from a NULL or empty list). */
static void put(int **at, const int *v, int n)
{
    if (n > 0) {
        memcpy(*at, v, n * sizeof(int));
        *at += n;
    }
}

/* Everyone's counts, then everyone's ints (mine: my_counts[C_LEN] of them). Returns -1
 * when some process's arguments are bad: then every process calls the PMPI function,
 * which says what is wrong. */
static int gather(MPI_Comm comm, const int my_counts[COUNTS], const int *mine, gathered_t * g)
{
    int rc = PMPI_Comm_size(comm, &g->size);
    if (rc)
        return rc;
    g->counts = MPL_malloc(g->size * COUNTS * sizeof(int), MPL_MEM_COMM);
    g->displs = MPL_malloc((g->size + 1) * sizeof(int), MPL_MEM_COMM);
    int *lens = MPL_malloc(g->size * sizeof(int), MPL_MEM_COMM);
    if (!g->counts || !g->displs || !lens)
        rc = MPI_ERR_NO_MEM;
    if (!rc)
        rc = PMPI_Allgather(my_counts, COUNTS, MPI_INT, g->counts, COUNTS, MPI_INT, comm);
    g->weighted = 1;
    for (int p = 0; !rc && p < g->size; p++) {
        const int *c = &g->counts[p * COUNTS];
        lens[p] = c[C_LEN];
        g->displs[p] = p ? g->displs[p - 1] + lens[p - 1] : 0;
        g->weighted = c[C_WEIGHTED];
        if (!c[C_VALID] || c[C_WEIGHTED] != g->counts[C_WEIGHTED])
            rc = -1;
    }
    if (!rc) {
        g->displs[g->size] = g->displs[g->size - 1] + lens[g->size - 1];
        g->ints = MPL_malloc((g->displs[g->size] + 1) * sizeof(int), MPL_MEM_COMM);
        rc = g->ints ? PMPI_Allgatherv(mine, my_counts[C_LEN], MPI_INT, g->ints, lens,
                                       g->displs, MPI_INT, comm) : MPI_ERR_NO_MEM;
    }
    MPL_free(lens);
    return rc;
}

/* Process p's lists, as MPI_Dist_graph_create_adjacent takes them. */
static void lists_of(const gathered_t * g, int p, const int **src, const int **sw,
                     const int **dst, const int **dw)
{
    const int *c = &g->counts[p * COUNTS], *l = g->ints + g->displs[p];
    int k = g->weighted ? 2 : 1;
    *src = l;
    *sw = g->weighted ? l + c[C_IN] : MPI_UNWEIGHTED;
    *dst = l + k * c[C_IN];
    *dw = g->weighted ? l + k * c[C_IN] + c[C_OUT] : MPI_UNWEIGHTED;
}

/* This process's vertex when these edges (of comm's size vertices) are placed on comm,
 * and whether any vertex moved; processes whose route files disagree keep MPICH's
 * order, all of them. */
static int place_graph(MPI_Comm comm_old, MPIR_Comm * comm, const MPIDI_PME_edge_t * e,
                       int nedges, int *vertex, int *moved)
{
    unsigned hash, lo, hi;
    int rc = MPIDI_PME_take_vertex(comm, comm->local_size, e, nedges, vertex, moved, &hash);
    if (!rc)
        rc = PMPI_Allreduce(&hash, &lo, 1, MPI_UNSIGNED, MPI_MIN, comm_old);
    if (!rc)
        rc = PMPI_Allreduce(&hash, &hi, 1, MPI_UNSIGNED, MPI_MAX, comm_old);
    if (!rc && lo != hi)
        *moved = 0;
    return rc;
}

/* comm_old split by vertex, the new rank taking these lists of its vertex. */
static int create_placed(MPI_Comm comm_old, int vertex, int indegree, const int *src,
                         const int *sw, int outdegree, const int *dst, const int *dw,
                         MPI_Info info, MPI_Comm * out)
{
    MPI_Comm split;
    int rc = PMPI_Comm_split(comm_old, 0, vertex, &split);
    if (rc)
        return rc;
    rc = PMPI_Dist_graph_create_adjacent(split, indegree, src, sw, outdegree, dst, dw, info, 0,
                                         out);
    PMPI_Comm_free(&split);
    return rc;
}

/* Placed, new rank r takes the lists that rank r gave. */
static int adjacent_placed(MPI_Comm comm_old, MPIR_Comm * comm, const gathered_t * g,
                           MPI_Info info, MPI_Comm * out, int *moved)
{
    int nedges = 0, vertex, rc;
    for (int p = 0; p < g->size; p++)
        nedges += g->counts[p * COUNTS + C_OUT];
    MPIDI_PME_edge_t *e = MPL_malloc((nedges + 1) * sizeof(*e), MPL_MEM_COMM);
    if (!e)
        return MPI_ERR_NO_MEM;
    const int *src, *sw, *dst, *dw;
    nedges = 0;
    for (int p = 0; p < g->size; p++) {
        lists_of(g, p, &src, &sw, &dst, &dw);
        for (int i = 0; i < g->counts[p * COUNTS + C_OUT]; i++)
            e[nedges++] = (MPIDI_PME_edge_t) {
            p, dst[i], g->weighted ? dw[i] : 1};
    }
    rc = place_graph(comm_old, comm, e, nedges, &vertex, moved);
    MPL_free(e);
    if (rc || !*moved)
        return rc;
    lists_of(g, vertex, &src, &sw, &dst, &dw);
    return create_placed(comm_old, vertex, g->counts[vertex * COUNTS + C_IN], src, sw,
                         g->counts[vertex * COUNTS + C_OUT], dst, dw, info, out);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm * comm_dist_graph)
{
    MPIR_Comm *comm = placed_comm(comm_old, reorder);
    gathered_t g = { 0 };
    int moved = 0, rc = 0, *mine = NULL;
    if (comm) {
        int weighted = sourceweights != MPI_UNWEIGHTED;
        int valid = indegree >= 0 && outdegree >= 0 &&
            weighted == (destweights != MPI_UNWEIGHTED) &&
            (!indegree || (sources && in_range(sources, indegree, comm->local_size) &&
                           (!weighted || sourceweights))) &&
            (!outdegree || (destinations && in_range(destinations, outdegree,
                                                     comm->local_size) &&
                            (!weighted || destweights)));
        int len = valid ? (indegree + outdegree) * (weighted ? 2 : 1) : 0;
        mine = MPL_malloc((len + 1) * sizeof(int), MPL_MEM_COMM);
        int counts[COUNTS] = { mine ? len : 0, valid ? indegree : 0, valid ? outdegree : 0,
            weighted, valid && mine
        };
        if (counts[C_VALID]) {
            int *at = mine;
            put(&at, sources, indegree);
            if (weighted)
                put(&at, sourceweights, indegree);
            put(&at, destinations, outdegree);
            if (weighted)
                put(&at, destweights, outdegree);
        }
        rc = gather(comm_old, counts, mine, &g);
        if (!rc)
            rc = adjacent_placed(comm_old, comm, &g, info, comm_dist_graph, &moved);
    }
    if (rc <= 0 && !moved)
        rc = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                             outdegree, destinations, destweights, info,
                                             reorder, comm_dist_graph);
    MPL_free(mine);
    gathered_free(&g);
    return rc;
}

/* Placed, new rank v takes every edge that leaves or enters vertex v, in the order the
 * processes gave them. */
static int general_placed(MPI_Comm comm_old, MPIR_Comm * comm, const gathered_t * g,
                          MPI_Info info, MPI_Comm * out, int *moved)
{
    int nedges = g->displs[g->size] / 3, vertex, rc, nin = 0, nout = 0;
    const MPIDI_PME_edge_t *e = (const MPIDI_PME_edge_t *) g->ints;
    rc = place_graph(comm_old, comm, e, nedges, &vertex, moved);
    if (rc || !*moved)
        return rc;
    int *l = MPL_malloc((4 * nedges + 1) * sizeof(int), MPL_MEM_COMM);
    if (!l)
        return MPI_ERR_NO_MEM;
    int *src = l, *sw = l + nedges, *dst = l + 2 * nedges, *dw = l + 3 * nedges;
    for (int i = 0; i < nedges; i++) {
        if (e[i].v == vertex) {
            src[nin] = e[i].u;
            sw[nin++] = e[i].w;
        }
        if (e[i].u == vertex) {
            dst[nout] = e[i].v;
            dw[nout++] = e[i].w;
        }
    }
    rc = create_placed(comm_old, vertex, nin, src, g->weighted ? sw : MPI_UNWEIGHTED, nout, dst,
                       g->weighted ? dw : MPI_UNWEIGHTED, info, out);
    MPL_free(l);
    return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm * comm_dist_graph)
{
    MPIR_Comm *comm = placed_comm(comm_old, reorder);
    gathered_t g = { 0 };
    int moved = 0, rc = 0, *mine = NULL;
    if (comm) {
        int weighted = weights != MPI_UNWEIGHTED, nedges = 0;
        int valid = n >= 0 && (!n || (sources && degrees && in_range(sources, n,
                                                                      comm->local_size)));
        for (int i = 0; valid && i < n; i++) {
            valid = degrees[i] >= 0 && nedges <= INT_MAX / 3 - degrees[i];
            nedges += valid ? degrees[i] : 0;
        }
        valid = valid && (!nedges || (destinations && (!weighted || weights) &&
                                      in_range(destinations, nedges, comm->local_size)));
        mine = valid ? MPL_malloc((3 * nedges + 1) * sizeof(int), MPL_MEM_COMM) : NULL;
        int counts[COUNTS] = { mine ? 3 * nedges : 0, 0, 0, weighted, mine != NULL };
        for (int i = 0, k = 0; mine && i < n; i++) {
            for (int j = 0; j < degrees[i]; j++, k++) {
                mine[3 * k] = sources[i];
                mine[3 * k + 1] = destinations[k];
                mine[3 * k + 2] = weighted ? weights[k] : 1;
            }
        }
        rc = gather(comm_old, counts, mine, &g);
        if (!rc)
            rc = general_placed(comm_old, comm, &g, info, comm_dist_graph, &moved);
    }
    if (rc <= 0 && !moved)
        rc = PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                    reorder, comm_dist_graph);
    MPL_free(mine);
    gathered_free(&g);
    return rc;
}

#endif
