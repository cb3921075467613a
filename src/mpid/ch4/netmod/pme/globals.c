// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - the netmod's one global state and its peer table.
 *
 * Every other file reads and writes MPIDI_PME_global; this one owns its definition
 * and the growth of the peer table, and calls nothing else of the netmod.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

MPIDI_PME_global_t MPIDI_PME_global;

/* Make room for peer index `peer` in the netmod's peer table. */
int MPIDI_PME_peer_slot(uint32_t peer)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    if (peer < g->npeers_alloc)
        return MPI_SUCCESS;
    uint32_t n = g->npeers_alloc ? g->npeers_alloc : 64;
    while (n <= peer)
        n *= 2;
    MPIDI_PME_peer_t *p = MPL_realloc(g->peers, n * sizeof(*p), MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDSTMT(!p, mpi_errno, MPI_ERR_OTHER, return mpi_errno, "**nomem");
    for (uint32_t i = g->npeers_alloc; i < n; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        p[i].world_rank = -1;
    }
    g->peers = p;
    g->npeers_alloc = n;
    return MPI_SUCCESS;
}

/* The MPI_COMM_WORLD rank behind a PME peer, -1 when it is not one of this job's. */
int MPIDI_PME_world_rank_of(uint32_t peer)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    return peer < g->npeers_alloc ? g->peers[peer].world_rank : -1;
}

/* Forget the peer table and the scratch buffer (finalize). */
void MPIDI_PME_globals_free(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    MPL_free(g->pack_scratch);
    MPL_free(g->peers);
    g->pack_scratch = NULL;
    g->peers = NULL;
    g->npeers_alloc = 0;
}
