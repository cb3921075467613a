// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - the function tables through which ch4 calls the netmod.
 *
 * NETMOD_DISABLE_INLINES keeps netmod_impl.h from defining its table-calling
 * wrappers here; netmod_inline.h defines the inline entry points instead.
 */
#define NETMOD_DISABLE_INLINES
#include "mpidimpl.h"
#include "netmod_inline.h"

MPIDI_NM_funcs_t MPIDI_NM_pme_funcs = {
    /* start-up and shut-down (init.c; 5.0 exchanges the cards when it commits
     * MPI_COMM_WORLD, below) */
    .init_local = MPIDI_PME_init_local,
#if !MPIDI_PME_MPICH_5
    .init_world = MPIDI_PME_init_world,
    .post_init = MPIDI_PME_post_init,
#endif
#if MPIDI_PME_MPICH_42 && !MPIDI_PME_MPICH_5
    .init_vcis = MPIDI_PME_init_vcis,
#endif
    .mpi_finalize_hook = MPIDI_PME_mpi_finalize_hook,
    .progress = MPIDI_NM_progress,

    /* active messages (am.c) */
    .am_send_hdr = MPIDI_NM_am_send_hdr,
    .am_isend = MPIDI_NM_am_isend,
    .am_send_hdr_reply = MPIDI_NM_am_send_hdr_reply,
    .am_isend_reply = MPIDI_NM_am_isend_reply,
    .am_get_data_copy_cb = MPIDI_NM_am_get_data_copy_cb,
    .am_hdr_max_sz = MPIDI_NM_am_hdr_max_sz,
    .am_eager_limit = MPIDI_NM_am_eager_limit,
    .am_eager_buf_limit = MPIDI_NM_am_eager_buf_limit,
    .am_check_eager = MPIDI_NM_am_check_eager,
    .am_request_init = MPIDI_NM_am_request_init,
    .am_request_finalize = MPIDI_NM_am_request_finalize,
#if MPIDI_PME_MPICH_5
    .am_can_do_tag = MPIDI_NM_am_can_do_tag,
    .am_tag_send = MPIDI_NM_am_tag_send,
    .am_tag_recv = MPIDI_NM_am_tag_recv,
#endif

    /* processes and communicators */
#if MPIDI_PME_MPICH_5
    .comm_set_vcis = MPIDI_PME_comm_set_vcis,
    .insert_upid = MPIDI_PME_insert_upid,
    .dynamic_sendrecv = MPIDI_PME_dynamic_sendrecv,
    .mpi_comm_commit_pre_hook = MPIDI_PME_comm_bootstrap_hook,
#else
    .comm_get_gpid = MPIDI_NM_comm_get_gpid,
    .upids_to_gpids = MPIDI_PME_upids_to_gpids,
    .mpi_comm_commit_pre_hook = MPIDI_PME_mpi_comm_commit_pre_hook,
#endif
    .get_local_upids = MPIDI_PME_get_local_upids,
    .dynamic_send = MPIDI_PME_dynamic_send,
    .dynamic_recv = MPIDI_PME_dynamic_recv,
    .comm_set_hints = MPIDI_PME_comm_set_hints,
    .mpi_comm_commit_post_hook = MPIDI_PME_mpi_comm_commit_post_hook,
    .mpi_comm_free_hook = MPIDI_PME_mpi_comm_free_hook,

    /* windows (rma_win.c: created and allocated ones are exposed to PME; rma_sync.c: the
     * completion of PME's one-sided operations, for MPIDIG's synchronization) */
    .mpi_win_create_hook = MPIDI_PME_win_create_hook,
    .mpi_win_allocate_hook = MPIDI_PME_win_create_hook,
    .mpi_win_allocate_shared_hook = MPIDI_PME_win_mpidig_hook,
    .mpi_win_create_dynamic_hook = MPIDI_PME_win_mpidig_hook,
    .mpi_win_attach_hook = MPIDI_PME_win_attach_hook,
    .mpi_win_detach_hook = MPIDI_PME_win_detach_hook,
    .mpi_win_free_hook = MPIDI_PME_win_free_hook,
    .rma_win_cmpl_hook = MPIDI_PME_rma_win_cmpl_hook,
    .rma_win_local_cmpl_hook = MPIDI_PME_rma_win_cmpl_hook,
    .rma_target_cmpl_hook = MPIDI_PME_rma_target_cmpl_hook,
    .rma_target_local_cmpl_hook = MPIDI_PME_rma_target_cmpl_hook,
};

/* The "native" operations: ch4's generic layer (MPIDIG, MPIR collectives) does them
 * over the active messages above. */
MPIDI_NM_native_funcs_t MPIDI_NM_native_pme_funcs = {
    /* point-to-point */
    .mpi_isend = MPIDI_NM_mpi_isend,
#if !MPIDI_PME_MPICH_42
    .isend_coll = MPIDI_NM_isend_coll,
    .mpi_issend = MPIDI_NM_mpi_issend,
#endif
    .mpi_cancel_send = MPIDI_NM_mpi_cancel_send,
    .mpi_irecv = MPIDI_NM_mpi_irecv,
    .mpi_imrecv = MPIDI_NM_mpi_imrecv,
    .mpi_cancel_recv = MPIDI_NM_mpi_cancel_recv,
    .mpi_improbe = MPIDI_NM_mpi_improbe,
    .mpi_iprobe = MPIDI_NM_mpi_iprobe,
    .rank_is_local = MPIDI_NM_rank_is_local,

    /* partitioned */
    .mpi_psend_init = MPIDI_PME_mpi_psend_init,
    .mpi_precv_init = MPIDI_PME_mpi_precv_init,
    .part_start = MPIDI_NM_part_start,
    .mpi_pready_range = MPIDI_NM_mpi_pready_range,
    .mpi_pready_list = MPIDI_NM_mpi_pready_list,
    .mpi_parrived = MPIDI_NM_mpi_parrived,

    /* memory, datatypes, ops */
    .mpi_alloc_mem = MPIDIG_mpi_alloc_mem,
    .mpi_free_mem = MPIDIG_mpi_free_mem,
    .mpi_type_commit_hook = MPIDI_PME_type_hook,
    .mpi_type_free_hook = MPIDI_PME_type_hook,
    .mpi_op_commit_hook = MPIDI_PME_op_hook,
    .mpi_op_free_hook = MPIDI_PME_op_hook,

    /* one-sided: PME's own where it can (rma.c, rma_sync.c), MPIDIG's otherwise; every
     * call that completes an epoch goes through rma_sync.c, whose MPIDIG calls reach
     * PME's completion hooks (here they would reach the AM fallback's, which do nothing) */
    .mpi_win_set_info = MPIDIG_mpi_win_set_info,
    .mpi_win_get_info = MPIDIG_mpi_win_get_info,
    .mpi_win_shared_query = MPIDI_NM_mpi_win_shared_query,
    .mpi_win_create = MPIDIG_mpi_win_create,
    .mpi_win_allocate = MPIDIG_mpi_win_allocate,
    .mpi_win_allocate_shared = MPIDIG_mpi_win_allocate_shared,
    .mpi_win_create_dynamic = MPIDIG_mpi_win_create_dynamic,
    .mpi_win_attach = MPIDIG_mpi_win_attach,
    .mpi_win_detach = MPIDIG_mpi_win_detach,
    .mpi_win_free = MPIDIG_mpi_win_free,
    .mpi_put = MPIDI_PME_mpi_put,
    .mpi_get = MPIDI_PME_mpi_get,
    .mpi_accumulate = MPIDI_PME_mpi_accumulate,
    .mpi_rput = MPIDI_PME_mpi_rput,
    .mpi_rget = MPIDI_PME_mpi_rget,
    .mpi_raccumulate = MPIDI_PME_mpi_raccumulate,
    .mpi_get_accumulate = MPIDI_PME_mpi_get_accumulate,
    .mpi_rget_accumulate = MPIDI_PME_mpi_rget_accumulate,
    .mpi_fetch_and_op = MPIDI_PME_mpi_fetch_and_op,
    .mpi_compare_and_swap = MPIDI_PME_mpi_compare_and_swap,
    .mpi_win_start = MPIDI_NM_mpi_win_start,
    .mpi_win_complete = MPIDI_PME_mpi_win_complete,
    .mpi_win_post = MPIDI_NM_mpi_win_post,
    .mpi_win_wait = MPIDI_NM_mpi_win_wait,
    .mpi_win_test = MPIDI_NM_mpi_win_test,
    .mpi_win_lock = MPIDI_PME_mpi_win_lock,
    .mpi_win_unlock = MPIDI_PME_mpi_win_unlock,
    .mpi_win_lock_all = MPIDI_PME_mpi_win_lock_all,
    .mpi_win_unlock_all = MPIDI_PME_mpi_win_unlock_all,
    .mpi_win_fence = MPIDI_PME_mpi_win_fence,
    .mpi_win_flush = MPIDI_PME_mpi_win_flush,
    .mpi_win_flush_all = MPIDI_PME_mpi_win_flush_all,
    .mpi_win_flush_local = MPIDI_PME_mpi_win_flush_local,
    .mpi_win_flush_local_all = MPIDI_PME_mpi_win_flush_local_all,
    .mpi_win_sync = MPIDI_NM_mpi_win_sync,

    /* collectives: MPIR's algorithms over point-to-point, except that broadcast and
     * (all)reduce go along a torus's axes where that is faster (coll_axes.c) */
    .mpi_barrier = MPIDI_NM_mpi_barrier,
    .mpi_bcast = MPIDI_PME_mpi_bcast,
    .mpi_allreduce = MPIDI_PME_mpi_allreduce,
    .mpi_allgather = MPIDI_NM_mpi_allgather,
    .mpi_allgatherv = MPIDI_NM_mpi_allgatherv,
    .mpi_scatter = MPIDI_NM_mpi_scatter,
    .mpi_scatterv = MPIDI_NM_mpi_scatterv,
    .mpi_gather = MPIDI_NM_mpi_gather,
    .mpi_gatherv = MPIDI_NM_mpi_gatherv,
    .mpi_alltoall = MPIDI_NM_mpi_alltoall,
    .mpi_alltoallv = MPIDI_NM_mpi_alltoallv,
    .mpi_alltoallw = MPIDI_NM_mpi_alltoallw,
    .mpi_reduce = MPIDI_PME_mpi_reduce,
    .mpi_reduce_scatter = MPIDI_NM_mpi_reduce_scatter,
    .mpi_reduce_scatter_block = MPIDI_NM_mpi_reduce_scatter_block,
    .mpi_scan = MPIDI_NM_mpi_scan,
    .mpi_exscan = MPIDI_NM_mpi_exscan,
    .mpi_neighbor_allgather = MPIDI_NM_mpi_neighbor_allgather,
    .mpi_neighbor_allgatherv = MPIDI_NM_mpi_neighbor_allgatherv,
    .mpi_neighbor_alltoall = MPIDI_NM_mpi_neighbor_alltoall,
    .mpi_neighbor_alltoallv = MPIDI_NM_mpi_neighbor_alltoallv,
    .mpi_neighbor_alltoallw = MPIDI_NM_mpi_neighbor_alltoallw,
    .mpi_ineighbor_allgather = MPIDI_NM_mpi_ineighbor_allgather,
    .mpi_ineighbor_allgatherv = MPIDI_NM_mpi_ineighbor_allgatherv,
    .mpi_ineighbor_alltoall = MPIDI_NM_mpi_ineighbor_alltoall,
    .mpi_ineighbor_alltoallv = MPIDI_NM_mpi_ineighbor_alltoallv,
    .mpi_ineighbor_alltoallw = MPIDI_NM_mpi_ineighbor_alltoallw,
    .mpi_ibarrier = MPIDI_NM_mpi_ibarrier,
    .mpi_ibcast = MPIDI_NM_mpi_ibcast,
    .mpi_iallgather = MPIDI_NM_mpi_iallgather,
    .mpi_iallgatherv = MPIDI_NM_mpi_iallgatherv,
    .mpi_iallreduce = MPIDI_NM_mpi_iallreduce,
    .mpi_ialltoall = MPIDI_NM_mpi_ialltoall,
    .mpi_ialltoallv = MPIDI_NM_mpi_ialltoallv,
    .mpi_ialltoallw = MPIDI_NM_mpi_ialltoallw,
    .mpi_iexscan = MPIDI_NM_mpi_iexscan,
    .mpi_igather = MPIDI_NM_mpi_igather,
    .mpi_igatherv = MPIDI_NM_mpi_igatherv,
    .mpi_ireduce_scatter_block = MPIDI_NM_mpi_ireduce_scatter_block,
    .mpi_ireduce_scatter = MPIDI_NM_mpi_ireduce_scatter,
    .mpi_ireduce = MPIDI_NM_mpi_ireduce,
    .mpi_iscan = MPIDI_NM_mpi_iscan,
    .mpi_iscatter = MPIDI_NM_mpi_iscatter,
    .mpi_iscatterv = MPIDI_NM_mpi_iscatterv,
};
