// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - where the ranks of a communicator sit on a ring or torus of nodes.
 *
 * pme_core reads the node's route file, which says where every node of the mesh sits
 * (pme_route writes it); each rank's PME peer gives its node. This file keeps, for each
 * intracommunicator, its ranks' coordinates and, when they fill the torus evenly, which
 * ranks each node holds: rank placement (topo_map.c) and the collectives along the
 * axes (coll_axes.c) read them. The place's type, and the arithmetic on it, are plain C
 * in pme_topo_search.h and topo_search.c.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/* A place holds pme_core's coordinates as they come (pme_peer_place). */
_Static_assert(MPIDI_PME_PLACE_MAX_DIMS == PME_TOPO_MAX_DIMS,
               "pme_topo_search.h and pme.h disagree on the dimensions of a torus");

/* This node's topology, asked of pme_core once the endpoint is open. */
const struct pme_topology *MPIDI_PME_topology(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    if (!g->topo_asked && g->ep) {
        pme_ep_topology(g->ep, &g->topo);
        g->topo_asked = 1;
    }
    return &g->topo;
}

/* node_ranks when every node holds the same number of ranks; 0, or -1 when not even. */
static int fill_nodes(MPIDI_PME_place_t * pl)
{
    int *count = MPL_calloc(pl->nnodes, sizeof(int), MPL_MEM_COMM);
    if (!count)
        return -1;
    for (int r = 0; r < pl->size; r++) {
        int c[PME_TOPO_MAX_DIMS];
        for (int d = 0; d < pl->ndims; d++)
            c[d] = pl->at[r][d];
        count[MPIDI_PME_place_node(pl, c)]++;
    }
    int even = pl->size % pl->nnodes == 0;
    for (int i = 0; even && i < pl->nnodes; i++)
        even = count[i] == pl->size / pl->nnodes;
    if (even)
        pl->node_ranks = MPL_malloc(pl->size * sizeof(int), MPL_MEM_COMM);
    if (even && pl->node_ranks) {
        pl->per_node = pl->size / pl->nnodes;
        memset(count, 0, pl->nnodes * sizeof(int));
        for (int r = 0; r < pl->size; r++) {
            int c[PME_TOPO_MAX_DIMS];
            for (int d = 0; d < pl->ndims; d++)
                c[d] = pl->at[r][d];
            int node = MPIDI_PME_place_node(pl, c);
            pl->node_ranks[node * pl->per_node + count[node]++] = r;
        }
    }
    MPL_free(count);
    return even && !pl->node_ranks ? -1 : 0;
}

static void place_destroy(MPIDI_PME_place_t * pl)
{
    if (pl) {
        MPL_free(pl->at);
        MPL_free(pl->node_ranks);
        MPL_free(pl);
    }
}

/* Where comm's ranks sit, when this node is on a torus and every rank's node is on it
 * too; otherwise the communicator has no place (placement and collectives stay
 * MPICH's). */
int MPIDI_PME_place_build(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    const struct pme_topology *t = MPIDI_PME_topology();
    MPIDI_PME_PLACE(comm) = NULL;
    if (t->kind != PME_TOPO_TORUS || comm->comm_kind != MPIR_COMM_KIND__INTRACOMM)
        return MPI_SUCCESS;

    MPIDI_PME_place_t *pl = MPL_calloc(1, sizeof(*pl), MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP(!pl, mpi_errno, MPI_ERR_OTHER, "**nomem");
    pl->size = comm->local_size;
    pl->ndims = t->ndims;
    pl->nnodes = 1;
    for (int d = 0; d < t->ndims; d++) {
        pl->dims[d] = t->dims[d];
        pl->nnodes *= t->dims[d];
    }
    pl->at = MPL_malloc(pl->size * sizeof(*pl->at), MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP(!pl->at, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int r = 0; r < pl->size; r++) {
        int c[PME_TOPO_MAX_DIMS], hops;
        MPIDI_av_entry_t *av = MPIDIU_comm_rank_to_av(comm, r);
        if (pme_peer_place(MPIDI_PME_global.ep, MPIDI_PME_AV(av).peer, c, &hops) != PME_OK) {
            place_destroy(pl);  /* a rank off the torus (another job's, a spawned one) */
            return MPI_SUCCESS;
        }
        for (int d = 0; d < PME_TOPO_MAX_DIMS; d++)
            pl->at[r][d] = (uint16_t) (d < pl->ndims ? c[d] : 0);
    }
    MPIR_ERR_CHKANDJUMP(fill_nodes(pl), mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIDI_PME_PLACE(comm) = pl;

  fn_exit:
    return mpi_errno;
  fn_fail:
    place_destroy(pl);
    goto fn_exit;
}

void MPIDI_PME_place_free(MPIR_Comm * comm)
{
    place_destroy(MPIDI_PME_PLACE(comm));
    MPIDI_PME_PLACE(comm) = NULL;
}
