// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - rank reordering on a torus through MPICH's device hooks for topologies
 * (MPII_Topo_ops, set on every intracommunicator at commit): MPI_Cart_create and
 * MPI_Graph_create with reorder, MPI_Cart_map and MPI_Graph_map place the virtual
 * topology on the ranks by topo_map.c. A reordered communicator is made as MPICH makes
 * one (MPI_Comm_split by the new rank), then given its topology by MPICH's own code with
 * reorder off, so that everything else about it is MPICH's.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_PME_TOPO_MAP
      category    : CH4_PME
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        On a ring or torus of nodes (PME's route files say where each node sits),
        MPI_Cart_create, MPI_Graph_create, MPI_Dist_graph_create and
        MPI_Dist_graph_create_adjacent with reorder, MPI_Cart_map and MPI_Graph_map
        give each process the rank that puts its neighbours in the virtual topology
        as few links away as PME can find, never more in sum than MPICH's order.
        False keeps MPICH's order.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Whether PME places a virtual topology of n vertices on comm. */
static int places(const MPIR_Comm * comm, int n)
{
    return MPIR_CVAR_CH4_PME_TOPO_MAP && MPIDI_PME_PLACE(comm) && n >= 1 &&
        n <= comm->local_size;
}

/* The vertex this process takes when the n vertices with these edges are placed on
 * comm (see MPIDI_PME_take_vertex). collective: every process of comm calls this
 * together, so they check that they agree; processes whose route files place the torus
 * differently would not, and then all keep MPICH's order. */
static int take_vertex(const MPIR_Comm * comm, int n, const MPIDI_PME_edge_t * e,
                       int nedges, int collective, int *vertex, int *moved)
{
    unsigned hash;
    int mpi_errno = MPIDI_PME_take_vertex(comm, n, e, nedges, vertex, moved, &hash);
    if (mpi_errno || !collective)
        return mpi_errno;
    int in[2] = { (int) (hash >> 1), -(int) (hash >> 1) }, out[2];
    mpi_errno = MPIR_Allreduce_impl(in, out, 2, MPIDI_PME_INT, MPI_MAX, (MPIR_Comm *) comm,
                                    MPIDI_PME_ERRFLAG_NONE);
    if (!mpi_errno && out[0] != -out[1]) {
        *moved = 0;
        *vertex = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    }
    return mpi_errno;
}

/* The edges of a cartesian grid (each neighbour pair once). */
static int cart_edges(int ndims, const int dims[], const int periods[], int *n,
                      MPIDI_PME_edge_t ** edges, int *nedges)
{
    *n = 1;
    for (int d = 0; d < ndims; d++)
        *n *= dims[d];
    *edges = MPL_malloc((size_t) (*n) * ndims * sizeof(**edges) + 1, MPL_MEM_COMM);
    if (!*edges)
        return MPI_ERR_OTHER;
    *nedges = 0;
    for (int v = 0; v < *n; v++) {
        int stride = 1;
        for (int d = ndims - 1; d >= 0; d--) {
            int c = v / stride % dims[d];
            /* with two positions the way round is the way across: one edge */
            if (c + 1 < dims[d] || (periods[d] && dims[d] > 2))
                (*edges)[(*nedges)++] = (MPIDI_PME_edge_t) {
                v, v + ((c + 1) % dims[d] - c) * stride, 1};
            stride *= dims[d];
        }
    }
    return MPI_SUCCESS;
}

/* The edges of an MPI_Graph_create graph. */
static int graph_edges(int nnodes, const int indx[], const int edges[],
                       MPIDI_PME_edge_t ** e, int *nedges)
{
    *nedges = indx[nnodes - 1];
    *e = MPL_malloc((size_t) (*nedges) * sizeof(**e) + 1, MPL_MEM_COMM);
    if (!*e)
        return MPI_ERR_OTHER;
    for (int v = 0, i = 0; v < nnodes; v++)
        for (; i < indx[v]; i++)
            (*e)[i] = (MPIDI_PME_edge_t) {
            v, edges[i], 1};
    return MPI_SUCCESS;
}

/* comm's processes that take a vertex, ordered by it (split's key), or NULL here. */
static int split_by_vertex(const MPIR_Comm * comm, int vertex, MPIR_Comm ** out)
{
    return MPIR_Comm_split_impl((MPIR_Comm *) comm, vertex == MPI_UNDEFINED ? MPI_UNDEFINED : 0,
                                vertex, out);
}

/* Whether PME places a cartesian grid on comm: one of at most comm's size. */
static int places_cart(const MPIR_Comm * comm, int ndims, const int dims[])
{
    long n = 1;
    for (int d = 0; d < ndims && n <= comm->local_size; d++)
        n *= dims[d];
    return ndims >= 1 && n <= comm->local_size && places(comm, (int) n);
}

/* The communicator a reordered topology is built on: comm, or, when PME moved this
 * process to another vertex of the edges e, comm split in vertex order (*split, NULL for
 * a process that takes no vertex); MPICH must then not reorder again. */
static int placed_base(const MPIR_Comm * comm, int n, const MPIDI_PME_edge_t * e, int nedges,
                       MPIR_Comm ** base, MPIR_Comm ** split, int *reorder)
{
    int mpi_errno, vertex = comm->rank, moved = 0;
    mpi_errno = take_vertex(comm, n, e, nedges, 1, &vertex, &moved);
    if (mpi_errno || !moved)
        return mpi_errno;
    mpi_errno = split_by_vertex(comm, vertex, split);
    *base = *split;
    *reorder = 0;
    return mpi_errno;
}

static int cart_map(const MPIR_Comm * comm, int ndims, const int dims[], const int periods[],
                    int *newrank)
{
    int mpi_errno = MPI_SUCCESS, n, nedges, moved;
    MPIDI_PME_edge_t *e = NULL;
    if (!places_cart(comm, ndims, dims))
        return MPIR_Cart_map_impl((MPIR_Comm *) comm, ndims, dims, periods, newrank);
    MPIR_ERR_CHKANDJUMP(cart_edges(ndims, dims, periods, &n, &e, &nedges), mpi_errno,
                        MPI_ERR_OTHER, "**nomem");
    mpi_errno = take_vertex(comm, n, e, nedges, 0, newrank, &moved);
  fn_fail:
    MPL_free(e);
    return mpi_errno;
}

static int cart_create(const MPIR_Comm * comm, int ndims, const int dims[], const int periods[],
                       int reorder, MPI_Comm * comm_cart)
{
    int mpi_errno = MPI_SUCCESS, n, nedges;
    MPIR_Comm *base = (MPIR_Comm *) comm, *split = NULL, *cart = NULL;
    MPIDI_PME_edge_t *e = NULL;
    *comm_cart = MPI_COMM_NULL;
    if (reorder && places_cart(comm, ndims, dims)) {
        MPIR_ERR_CHKANDJUMP(cart_edges(ndims, dims, periods, &n, &e, &nedges), mpi_errno,
                            MPI_ERR_OTHER, "**nomem");
        mpi_errno = placed_base(comm, n, e, nedges, &base, &split, &reorder);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (base) {
        mpi_errno = MPIR_Cart_create_impl(base, ndims, dims, periods, reorder, &cart);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (cart)
        MPIR_OBJ_PUBLISH_HANDLE(*comm_cart, cart->handle);
  fn_fail:
    if (split)
        MPIR_Comm_release(split);
    MPL_free(e);
    return mpi_errno;
}

static int graph_map(const MPIR_Comm * comm, int nnodes, const int indx[], const int edges[],
                     int *newrank)
{
    int mpi_errno = MPI_SUCCESS, nedges, moved;
    MPIDI_PME_edge_t *e = NULL;
    if (!places(comm, nnodes))
        return MPIR_Graph_map_impl((MPIR_Comm *) comm, nnodes, indx, edges, newrank);
    MPIR_ERR_CHKANDJUMP(graph_edges(nnodes, indx, edges, &e, &nedges), mpi_errno,
                        MPI_ERR_OTHER, "**nomem");
    mpi_errno = take_vertex(comm, nnodes, e, nedges, 0, newrank, &moved);
  fn_fail:
    MPL_free(e);
    return mpi_errno;
}

static int graph_create(const MPIR_Comm * comm, int nnodes, const int indx[],
                        const int edges[], int reorder, MPI_Comm * comm_graph)
{
    int mpi_errno = MPI_SUCCESS, nedges;
    MPIR_Comm *base = (MPIR_Comm *) comm, *split = NULL, *graph = NULL;
    MPIDI_PME_edge_t *e = NULL;
    *comm_graph = MPI_COMM_NULL;
    if (reorder && places(comm, nnodes)) {
        MPIR_ERR_CHKANDJUMP(graph_edges(nnodes, indx, edges, &e, &nedges), mpi_errno,
                            MPI_ERR_OTHER, "**nomem");
        mpi_errno = placed_base(comm, nnodes, e, nedges, &base, &split, &reorder);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (base) {
        mpi_errno = MPIR_Graph_create_impl(base, nnodes, indx, edges, reorder, &graph);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (graph)
        MPIR_OBJ_PUBLISH_HANDLE(*comm_graph, graph->handle);
  fn_fail:
    if (split)
        MPIR_Comm_release(split);
    MPL_free(e);
    return mpi_errno;
}

static MPII_Topo_ops topo_ops = {
    .cartCreate = cart_create,
    .cartMap = cart_map,
    .graphCreate = graph_create,
    .graphMap = graph_map,
};

int MPIDI_PME_mpi_comm_commit_pre_hook(MPIR_Comm * comm)
{
    MPIDI_PME_PLACE(comm) = NULL;
    return MPI_SUCCESS;
}

/* A communicator on a torus gets its place, and PME's topology functions. */
int MPIDI_PME_mpi_comm_commit_post_hook(MPIR_Comm * comm)
{
    int mpi_errno = MPIDI_PME_place_build(comm);
    if (!mpi_errno && MPIDI_PME_PLACE(comm))
        comm->topo_fns = &topo_ops;
    return mpi_errno;
}

int MPIDI_PME_mpi_comm_free_hook(MPIR_Comm * comm)
{
    MPIDI_PME_place_free(comm);
    return MPI_SUCCESS;
}
