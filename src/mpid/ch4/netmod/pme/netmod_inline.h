/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - definitions of ch4's inline netmod entry points.
 *
 * ch4:pme is always built with --disable-ch4-netmod-inline (see subconfigure.m4): the
 * rest of MPICH calls it through the function table, and this header is included by
 * func_table.c alone. Every entry point forwards to a function in the netmod's .c
 * files, or to MPIDIG for the native operations (netmod_am_fallback.h), so a change
 * in the netmod recompiles the netmod, not MPICH.
 */
#ifndef PME_NETMOD_INLINE_H_INCLUDED
#define PME_NETMOD_INLINE_H_INCLUDED

#ifdef NETMOD_INLINE
#error "ch4:pme cannot be inlined into MPICH: configure with --disable-ch4-netmod-inline"
#endif

#include "pme_noinline.h"
#include "netmod_am_fallback.h"

#if MPIDI_PME_MPICH_42
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int *made_progress)
{
    return MPIDI_PME_progress(vci, made_progress);
}
#else
/* (4.0 passes whether the caller blocks, which changes nothing here) */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int blocking)
{
    int made_progress = 0;
    return MPIDI_PME_progress(vci, &made_progress);
}
#endif

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                                                  const void *am_hdr, MPI_Aint am_hdr_sz,
                                                  int src_vci, int dst_vci)
{
    return MPIDI_PME_am_send_hdr(rank, comm, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                                               const void *am_hdr, MPI_Aint am_hdr_sz,
                                               const void *data, MPI_Aint count,
                                               MPI_Datatype datatype, int src_vci, int dst_vci,
                                               MPIR_Request * sreq)
{
    return MPIDI_PME_am_isend(rank, comm, handler_id, am_hdr, am_hdr_sz, data, count,
                              datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr_reply(MPIR_Comm * comm, int src_rank,
                                                        int handler_id, const void *am_hdr,
                                                        MPI_Aint am_hdr_sz, int src_vci,
                                                        int dst_vci)
{
    return MPIDI_PME_am_send_hdr_reply(comm, src_rank, handler_id, am_hdr, am_hdr_sz,
                                       src_vci, dst_vci);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend_reply(MPIR_Comm * comm, int src_rank,
                                                     int handler_id, const void *am_hdr,
                                                     MPI_Aint am_hdr_sz, const void *data,
                                                     MPI_Aint count, MPI_Datatype datatype,
                                                     int src_vci, int dst_vci,
                                                     MPIR_Request * sreq)
{
    return MPIDI_PME_am_isend_reply(comm, src_rank, handler_id, am_hdr, am_hdr_sz, data,
                                    count, datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX MPIDIG_recv_data_copy_cb MPIDI_NM_am_get_data_copy_cb(uint32_t attr)
{
    return MPIDI_PME_am_get_data_copy_cb(attr);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_hdr_max_sz(void)
{
    return MPIDI_PME_am_hdr_max_sz();
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_limit(void)
{
    return MPIDI_PME_am_eager_limit();
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_buf_limit(void)
{
    return MPIDI_PME_am_eager_buf_limit();
}

MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz,
                                                      const void *data, MPI_Aint count,
                                                      MPI_Datatype datatype,
                                                      MPIR_Request * sreq)
{
    return MPIDI_PME_am_check_eager(am_hdr_sz, data_sz, data, count, datatype, sreq);
}

#if MPIDI_PME_MPICH_5
/* 5.0's rendezvous by tag (MPIDIG's RTS/CTS pipeline): never used, am_check_eager sends
 * every message as one active message and PME moves large ones itself. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_can_do_tag(MPIR_Request * rreq)
{
    return false;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_tag_send(int rank, MPIR_Comm * comm, int handler_id,
                                                  int tag, const void *buf, MPI_Aint count,
                                                  MPI_Datatype datatype, int src_vci, int dst_vci,
                                                  MPIR_Request * sreq)
{
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_tag_recv(int rank, MPIR_Comm * comm, int handler_id,
                                                  int tag, void *buf, MPI_Aint count,
                                                  MPI_Datatype datatype, int src_vci, int dst_vci,
                                                  MPIR_Request * rreq)
{
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}
#else
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_comm_get_gpid(MPIR_Comm * comm_ptr, int idx,
                                                    uint64_t * gpid_ptr, bool is_remote)
{
    return MPIDI_PME_comm_get_gpid(comm_ptr, idx, gpid_ptr, is_remote);
}
#endif

/* rma_*_cmpl_hook: netmod_am_fallback_rma.h's, which do nothing. They are right only
 * for the AM fallback's own operations: MPIDIG's synchronization calls that complete
 * PME's one-sided operations are compiled in rma_sync.c, where the table's hooks apply. */

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_init(MPIR_Request * req)
{
    MPIDI_PME_am_request_init(req);
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_finalize(MPIR_Request * req)
{
    MPIDI_PME_am_request_finalize(req);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rank_is_local(int rank, MPIR_Comm * comm)
{
    return MPIDI_PME_rank_is_local(rank, comm);
}

#endif /* PME_NETMOD_INLINE_H_INCLUDED */
