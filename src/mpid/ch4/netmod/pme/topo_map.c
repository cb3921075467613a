// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - placing a virtual topology (a cartesian grid or a graph) on the ranks of a
 * communicator whose nodes form a torus: the MPICH side. The search itself, and what
 * it tries, is plain C in topo_search.c (unit-tested on its own by
 * test/unit/t_topo_search.c); this file hands it the communicator's place and turns its
 * answer into the vertex of this process.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/* The vertex this process takes (MPI_UNDEFINED: none) when the n vertices with these
 * edges are placed on comm, which must have a place; *moved: whether any vertex is off
 * the identity; *hash: of the whole placement, for processes to check they agree. */
int MPIDI_PME_take_vertex(const MPIR_Comm * comm, int n, const MPIDI_PME_edge_t * e,
                          int nedges, int *vertex, int *moved, unsigned *hash)
{
    int mpi_errno = MPI_SUCCESS;
    int *vertex_rank = MPL_malloc((n + 1) * sizeof(int), MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP(!vertex_rank, mpi_errno, MPI_ERR_OTHER, "**nomem");
    int rc = MPIDI_PME_place_map(MPIDI_PME_PLACE(comm), n, e, nedges, vertex_rank);
    MPIR_ERR_CHKANDJUMP(rc == MPIDI_PME_PLACE_ENOMEM, mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (rc != MPIDI_PME_PLACE_OK) {
        /* A topology the search refuses (an edge naming no vertex, a negative weight)
         * keeps MPICH's order, as without PME: checking its users' arguments, and
         * saying what is wrong with them, is MPICH's part. Every process was given
         * the same topology, so all of them keep it. */
        for (int v = 0; v < n; v++)
            vertex_rank[v] = v;
    }
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
