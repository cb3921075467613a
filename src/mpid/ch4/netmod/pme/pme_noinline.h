/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - the netmod's entry points, as ch4's function table sees them. Depends on
 * MPICH's types only (not on pme.h).
 */
#ifndef PME_NOINLINE_H_INCLUDED
#define PME_NOINLINE_H_INCLUDED

#include "mpidimpl.h"
#include "pme_compat.h"

/* init.c */
int MPIDI_PME_init_local(int *tag_bits);
#if MPIDI_PME_MPICH_5
int MPIDI_PME_comm_bootstrap_hook(MPIR_Comm * comm);
int MPIDI_PME_comm_set_vcis(MPIR_Comm * comm, int num_implicit, int num_reserved,
                            MPIDI_num_vci_t * all_num_vcis);
#else
int MPIDI_PME_init_world(void);
int MPIDI_PME_post_init(void);
#if MPIDI_PME_MPICH_42
int MPIDI_PME_init_vcis(int num_vcis, int *num_vcis_actual);
#endif
#endif
int MPIDI_PME_mpi_finalize_hook(void);

/* progress.c */
int MPIDI_PME_progress(int vci, int *made_progress);

/* am.c */
int MPIDI_PME_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                          MPI_Aint am_hdr_sz, int src_vci, int dst_vci);
int MPIDI_PME_am_isend(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                       MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
                       MPI_Datatype datatype, int src_vci, int dst_vci, MPIR_Request * sreq);
int MPIDI_PME_am_send_hdr_reply(MPIR_Comm * comm, int src_rank, int handler_id,
                                const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci,
                                int dst_vci);
int MPIDI_PME_am_isend_reply(MPIR_Comm * comm, int src_rank, int handler_id,
                             const void *am_hdr, MPI_Aint am_hdr_sz, const void *data,
                             MPI_Aint count, MPI_Datatype datatype, int src_vci, int dst_vci,
                             MPIR_Request * sreq);
MPIDIG_recv_data_copy_cb MPIDI_PME_am_get_data_copy_cb(uint32_t attr);
MPI_Aint MPIDI_PME_am_hdr_max_sz(void);
MPI_Aint MPIDI_PME_am_eager_limit(void);
MPI_Aint MPIDI_PME_am_eager_buf_limit(void);
bool MPIDI_PME_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz, const void *data,
                              MPI_Aint count, MPI_Datatype datatype, MPIR_Request * sreq);
void MPIDI_PME_am_request_init(MPIR_Request * req);
void MPIDI_PME_am_request_finalize(MPIR_Request * req);

/* spawn.c */
int MPIDI_PME_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids);
#if MPIDI_PME_MPICH_5
int MPIDI_PME_insert_upid(MPIR_Lpid lpid, const char *upid, int upid_len);
int MPIDI_PME_dynamic_sendrecv(MPIR_Lpid remote_lpid, MPIR_Comm * peer_comm, int tag,
                               const void *send_buf, int send_size, void *recv_buf,
                               int recv_size, int timeout);
#else
int MPIDI_PME_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                             uint64_t * remote_gpids);
#endif
int MPIDI_PME_dynamic_send(MPIDI_PME_procid_t remote, int tag, const void *buf, int size,
                           int timeout);
int MPIDI_PME_dynamic_recv(int tag, void *buf, int size, int timeout);

/* coll_axes.c */
int MPIDI_PME_mpi_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                        MPIR_Comm * comm, MPIDI_PME_errflag_t errflag);
int MPIDI_PME_mpi_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                         MPIDI_PME_errflag_t errflag);
int MPIDI_PME_mpi_allreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                            MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                            MPIDI_PME_errflag_t errflag);

/* topo_hooks.c */
int MPIDI_PME_mpi_comm_commit_pre_hook(MPIR_Comm * comm);
int MPIDI_PME_mpi_comm_commit_post_hook(MPIR_Comm * comm);
int MPIDI_PME_mpi_comm_free_hook(MPIR_Comm * comm);

/* misc.c */
int MPIDI_PME_comm_set_hints(MPIR_Comm * comm, MPIR_Info * info);
#if !MPIDI_PME_MPICH_5
int MPIDI_PME_comm_get_gpid(MPIR_Comm * comm, int idx, uint64_t * gpid, bool is_remote);
#endif
int MPIDI_PME_rank_is_local(int rank, MPIR_Comm * comm);
int MPIDI_PME_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size);
int MPIDI_PME_win_detach_hook(MPIR_Win * win, const void *base);
int MPIDI_PME_type_hook(MPIR_Datatype * dt);
int MPIDI_PME_op_hook(MPIR_Op * op);
int MPIDI_PME_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int dest, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** request);
int MPIDI_PME_mpi_precv_init(void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int source, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** request);

/* rma_win.c */
int MPIDI_PME_win_create_hook(MPIR_Win * win);
int MPIDI_PME_win_mpidig_hook(MPIR_Win * win);
int MPIDI_PME_win_free_hook(MPIR_Win * win);

/* rma_sync.c */
int MPIDI_PME_mpi_win_lock(int lock_type, int rank, int assert, MPIR_Win * win,
                           MPIDI_av_entry_t * addr);
int MPIDI_PME_mpi_win_unlock(int rank, MPIR_Win * win, MPIDI_av_entry_t * addr);
int MPIDI_PME_mpi_win_lock_all(int assert, MPIR_Win * win);
int MPIDI_PME_mpi_win_unlock_all(MPIR_Win * win);
int MPIDI_PME_mpi_win_flush(int rank, MPIR_Win * win, MPIDI_av_entry_t * addr);
int MPIDI_PME_mpi_win_flush_local(int rank, MPIR_Win * win, MPIDI_av_entry_t * addr);
int MPIDI_PME_mpi_win_flush_local_all(MPIR_Win * win);
int MPIDI_PME_mpi_win_fence(int assert, MPIR_Win * win);
int MPIDI_PME_mpi_win_complete(MPIR_Win * win);
int MPIDI_PME_mpi_win_flush_all(MPIR_Win * win);
int MPIDI_PME_rma_win_cmpl_hook(MPIR_Win * win);
int MPIDI_PME_rma_target_cmpl_hook(int rank, MPIR_Win * win);

/* rma.c */
int MPIDI_PME_mpi_put(const void *origin_addr, MPIDI_PME_count_t origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr);
int MPIDI_PME_mpi_rput(const void *origin_addr, MPIDI_PME_count_t origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                       MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr, MPIR_Request ** request);
int MPIDI_PME_mpi_get(void *origin_addr, MPIDI_PME_count_t origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr);
int MPIDI_PME_mpi_rget(void *origin_addr, MPIDI_PME_count_t origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                       MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr, MPIR_Request ** request);
int MPIDI_PME_mpi_accumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                             MPIDI_PME_count_t target_count, MPI_Datatype target_datatype,
                             MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                             MPIDI_winattr_t winattr);
int MPIDI_PME_mpi_raccumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                              MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, MPIDI_PME_count_t target_count,
                              MPI_Datatype target_datatype, MPI_Op op, MPIR_Win * win,
                              MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr,
                              MPIR_Request ** request);
int MPIDI_PME_mpi_get_accumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                                 MPI_Datatype origin_datatype, void *result_addr,
                                 MPIDI_PME_count_t result_count, MPI_Datatype result_datatype,
                                 int target_rank, MPI_Aint target_disp,
                                 MPIDI_PME_count_t target_count, MPI_Datatype target_datatype,
                                 MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                                 MPIDI_winattr_t winattr);
int MPIDI_PME_mpi_rget_accumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                                  MPI_Datatype origin_datatype, void *result_addr,
                                  MPIDI_PME_count_t result_count, MPI_Datatype result_datatype,
                                  int target_rank, MPI_Aint target_disp,
                                  MPIDI_PME_count_t target_count, MPI_Datatype target_datatype,
                                  MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                                  MPIDI_winattr_t winattr, MPIR_Request ** request);
int MPIDI_PME_mpi_fetch_and_op(const void *origin_addr, void *result_addr,
                               MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                               MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                               MPIDI_winattr_t winattr);
int MPIDI_PME_mpi_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                   void *result_addr, MPI_Datatype datatype, int target_rank,
                                   MPI_Aint target_disp, MPIR_Win * win,
                                   MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr);

#endif /* PME_NOINLINE_H_INCLUDED */
