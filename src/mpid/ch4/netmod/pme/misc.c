// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - the parts of the netmod API where PME adds nothing: communicator hints,
 * window, datatype and op hooks, locality, and the native entry points that ch4's
 * generic active-message layer (MPIDIG) implements. (The communicator commit and free
 * hooks are topo_hooks.c's.)
 */
#include "mpidimpl.h"
#include "pme_impl.h"

int MPIDI_PME_comm_set_hints(MPIR_Comm * comm, MPIR_Info * info)
{
    return MPI_SUCCESS;
}

#if !MPIDI_PME_MPICH_5
int MPIDI_PME_comm_get_gpid(MPIR_Comm * comm, int idx, uint64_t * gpid, bool is_remote)
{
    int avtid = 0, lpid = 0;
    if (comm->comm_kind == MPIR_COMM_KIND__INTERCOMM && !is_remote)
        MPIDIU_comm_rank_to_pid_local(comm, idx, &lpid, &avtid);
    else
        MPIDIU_comm_rank_to_pid(comm, idx, &lpid, &avtid);
    *gpid = MPIDIU_GPID_CREATE(avtid, lpid);
    return MPI_SUCCESS;
}
#endif

int MPIDI_PME_rank_is_local(int rank, MPIR_Comm * comm)
{
    return MPIDI_PME_RANK_IS_LOCAL(rank, comm);
}

/* Dynamic windows: MPIDIG does their one-sided communication (rma_win.c). */
int MPIDI_PME_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPI_SUCCESS;
}

int MPIDI_PME_win_detach_hook(MPIR_Win * win, const void *base)
{
    return MPI_SUCCESS;
}

int MPIDI_PME_type_hook(MPIR_Datatype * dt)
{
    return MPI_SUCCESS;
}

int MPIDI_PME_op_hook(MPIR_Op * op)
{
    return MPI_SUCCESS;
}

int MPIDI_PME_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int dest, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** request)
{
    return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, dest, tag, comm, info,
                                 request);
}

int MPIDI_PME_mpi_precv_init(void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int source, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** request)
{
    return MPIDI_PME_PRECV_INIT(buf, partitions, count, datatype, source, tag, comm, info,
                                request);
}
