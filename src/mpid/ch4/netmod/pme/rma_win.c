// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - windows for one-sided communication done by PME: exposed at creation (the
 * window's memory becomes a PME window with a key), made known to every process of
 * the window (key, size, displacement unit, by an allgather), withdrawn when freed;
 * and waiting until the operations toward a target are complete.
 *
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_PME_RMA
      category    : CH4_PME
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        If true, PME does one-sided communication itself where it can: puts, gets,
        window locks and, when no two processes of the window share a node,
        accumulates of predefined types land in and come from the target's window
        without its process (PME acts on them when they arrive, or its liveness helper
        while the process computes). If false, every window uses MPIDIG's active
        messages, which the target's process answers in its own MPI calls.

=== END_MPI_T_CVAR_INFO_BLOCK ===
 */
#include "mpidimpl.h"
#include "pme_rma.h"

/* What each process tells the others about its window. */
typedef struct {
    uint32_t key;
    uint32_t flags;
    int64_t size;
    int32_t disp_unit;
    int32_t pad;
} MPIDI_PME_wcard_t;

#define WCARD_NATIVE 0x1        /* its memory is a PME window */
#define WCARD_ACC    0x2        /* MPICH sends all its accumulates to the netmod, and it
                                 * shares its node with no process of the window */

/* Memory of this process alone: a created window, or an allocated one that MPICH did not
 * place in memory shared with the node's other processes. (With one process per node,
 * MPICH maps an allocated window of whole pages at the same address in every process,
 * mmap_addr: that mapping is private.) */
static int exposable(MPIR_Win * win)
{
    return MPIR_CVAR_CH4_PME_RMA && MPIDI_PME_global.ep &&
        (win->create_flavor == MPI_WIN_FLAVOR_CREATE ||
         (win->create_flavor == MPI_WIN_FLAVOR_ALLOCATE &&
          (!MPIDIG_WIN(win, mmap_addr) || !win->comm_ptr->node_comm)));
}

int MPIDI_PME_win_create_hook(MPIR_Win * win)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *comm = win->comm_ptr;
    int n = comm->local_size;
    MPIDI_PME_wcard_t mine = { 0 }, *all = NULL;
    MPIDI_PME_rwin_t *rw = NULL;

    MPIR_FUNC_ENTER;
    if (exposable(win) && pme_rma_expose(g->ep, win->base, (uint64_t) win->size, &mine.key) == 0)
        mine.flags |= WCARD_NATIVE;
    if ((MPIDI_WIN(win, winattr) & MPIDI_WINATTR_ACCU_NO_SHM) && !comm->node_comm)
        mine.flags |= WCARD_ACC;
    mine.size = win->size;
    mine.disp_unit = win->disp_unit;

    all = MPL_malloc(sizeof(*all) * (size_t) n, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!all, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = MPIR_Allgather(&mine, sizeof(mine), MPIDI_PME_BYTE, all, sizeof(mine),
                               MPIDI_PME_BYTE, comm, MPIDI_PME_ERRFLAG_NONE);
    MPIR_ERR_CHECK(mpi_errno);
    uint32_t every = WCARD_NATIVE | WCARD_ACC;
    for (int i = 0; i < n; i++)
        every &= all[i].flags;
    /* One authority for each window's lock: PME at every process, or MPIDIG at all. */
    if (!(every & WCARD_NATIVE))
        goto not_native;

    rw = MPL_malloc(sizeof(*rw) + sizeof(rw->t[0]) * (size_t) n, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!rw, mpi_errno, MPI_ERR_OTHER, "**nomem");
    rw->key = mine.key;
    rw->native_acc = !!(every & WCARD_ACC);
    rw->nranks = n;
    for (int i = 0; i < n; i++) {
        MPIDI_PME_rtarget_t *t = &rw->t[i];
        t->key = all[i].key;
        t->size = (MPI_Aint) all[i].size;
        t->disp_unit = all[i].disp_unit;
        t->peer = i == comm->rank ? PME_PEER_SELF :
            MPIDI_PME_AV(MPIDIU_comm_rank_to_av(comm, i)).peer;
        t->lock = MPIDI_PME_LOCK_NONE;
        t->lock_type = 0;
    }
    if (rw->native_acc)
        g->rma_acc_windows++;
    win->dev.netmod.pme.rma = rw;
    goto fn_exit;

  not_native:
    if (mine.flags & WCARD_NATIVE)
        pme_rma_withdraw(g->ep, mine.key);      /* nobody sends to it: nothing to wait for */
    win->dev.netmod.pme.rma = NULL;
  fn_exit:
    MPL_free(all);
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto not_native;
}

/* Shared and dynamic windows: MPIDIG does all of their one-sided communication. */
int MPIDI_PME_win_mpidig_hook(MPIR_Win * win)
{
    win->dev.netmod.pme.rma = NULL;
    return MPI_SUCCESS;
}

int MPIDI_PME_win_free_hook(MPIR_Win * win)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    MPIDI_PME_rwin_t *rw = MPIDI_PME_RWIN(win);
    int mpi_errno = MPI_SUCCESS;

    if (!rw)
        return MPI_SUCCESS;
    /* Our answers to gets stream from the window until acknowledged. */
    while (pme_rma_withdraw(g->ep, rw->key) == PME_EAGAIN) {
        mpi_errno = MPID_Progress_test(NULL);
        if (mpi_errno)
            break;
    }
    if (rw->native_acc)
        g->rma_acc_windows--;
    MPL_free(rw);
    win->dev.netmod.pme.rma = NULL;
    return mpi_errno;
}

/* ---- completion ---- */

int MPIDI_PME_rma_check(MPIR_Win * win, int rank)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    int rc = pme_rma_error(MPIDI_PME_global.ep, t->peer);
    if (rc == PME_OK)
        return MPI_SUCCESS;
    int world = MPIDI_PME_world_rank_of(t->peer);
    if (rc == PME_ERR_RANGE)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_RMA_RANGE, "**rmarange", 0);
    return MPIDI_PME_error_from_status(rc, world, "one-sided communication");
}

/* Progress until every operation toward rank's window is complete: applied there (puts,
 * accumulates, unlocks), landed here (gets), granted (locks). */
int MPIDI_PME_rma_wait(MPIR_Win * win, int rank)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    int mpi_errno = MPI_SUCCESS;
    while (pme_rma_pending(MPIDI_PME_global.ep, t->peer)) {
        mpi_errno = MPID_Progress_test(NULL);
        if (mpi_errno)
            return mpi_errno;
    }
    if (t->lock == MPIDI_PME_LOCK_SENT)
        t->lock = MPIDI_PME_LOCK_HELD;
    return MPIDI_PME_rma_check(win, rank);
}

int MPIDI_PME_rma_wait_all(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    for (int i = 0; i < MPIDI_PME_RWIN(win)->nranks; i++) {
        int rc = MPIDI_PME_rma_wait(win, i);
        if (rc && !mpi_errno)
            mpi_errno = rc;
    }
    return mpi_errno;
}
