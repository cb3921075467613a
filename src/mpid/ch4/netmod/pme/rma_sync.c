// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - synchronization of native windows: locks, flushes, fence and PSCW's
 * complete (MPIDIG's, compiled here), and the completion hooks MPIDIG's synchronization
 * calls use.
 *
 * Locks are PME's: the target's PME grants them, whatever its process is doing. MPIDIG
 * still keeps each window's epoch state (its operations on the window check it): every
 * lock of a native window is also an MPIDIG lock with MPI_MODE_NOCHECK, which changes
 * that state and sends nothing.
 *
 * A lock on another node's window is taken lazily: MPI_Win_lock sends nothing; the
 * first operation that fits one frame carries the lock request, and the target acts on
 * it once the lock is granted; MPI_Win_unlock follows at once, so that a
 * lock/operation/unlock epoch is one exchange. Any other first operation, a flush, or
 * an operation MPIDIG does (which its target's process handles in its own time, so it
 * needs the lock held first) takes the lock and waits for it. Locks on windows of the
 * same node are taken at once: operations to them go through shared memory, past the
 * netmod.
 */
#include "mpidimpl.h"
#include "pme_rma.h"

static int lock_now(MPIR_Win * win, int rank)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    int rc = pme_rma_lock(MPIDI_PME_global.ep, t->peer, t->key, t->lock_type);
    if (rc)
        return MPIDI_PME_error_from_status(rc, MPIDI_PME_world_rank_of(t->peer), "window lock");
    t->lock = MPIDI_PME_LOCK_SENT;
    return MPI_SUCCESS;
}

/* Before anything that needs the lock held at the target: take it if nothing took it yet,
 * and wait for the grant. */
int MPIDI_PME_rma_ensure_locked(MPIR_Win * win, int rank)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    int mpi_errno = MPI_SUCCESS;
    if (t->lock == MPIDI_PME_LOCK_LAZY)
        mpi_errno = lock_now(win, rank);
    if (!mpi_errno && t->lock == MPIDI_PME_LOCK_SENT)
        mpi_errno = MPIDI_PME_rma_wait(win, rank);
    return mpi_errno;
}

/* The flags of a native operation toward rank (payload: the bytes it carries): the lock
 * request it carries when the epoch's lock is still to be taken and it fits one frame;
 * otherwise the lock is taken first (*flags = 0). */
int MPIDI_PME_rma_op_flags(MPIR_Win * win, int rank, size_t payload, unsigned *flags)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    *flags = 0;
    if (t->lock == MPIDI_PME_LOCK_LAZY &&
        payload <= pme_rma_frame_room(MPIDI_PME_global.ep, t->peer)) {
        *flags = t->lock_type == PME_RMA_LOCK_EXCL ? PME_RMA_TAKE_EXCL : PME_RMA_TAKE_SHARED;
        t->lock = MPIDI_PME_LOCK_SENT;
        return MPI_SUCCESS;
    }
    return MPIDI_PME_rma_ensure_locked(win, rank);
}

/* Lazily for another node's window, at once for this node's. */
static int start_lock(MPIR_Win * win, int rank, int type, int assert)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    t->lock_type = type == MPI_LOCK_EXCLUSIVE ? PME_RMA_LOCK_EXCL : PME_RMA_LOCK_SHARED;
    if (assert & MPI_MODE_NOCHECK) {
        t->lock = MPIDI_PME_LOCK_NOCHECK;
        return MPI_SUCCESS;
    }
    t->lock = MPIDI_PME_LOCK_LAZY;
    if (t->peer == PME_PEER_SELF || MPIDI_rank_is_local(rank, win->comm_ptr))
        return lock_now(win, rank);
    return MPI_SUCCESS;
}

/* Before the unlock: MPIDIG's operations done (the target's process handles them in its
 * own time; ours are ahead of the unlock on the link), then the unlock leaves. */
static int send_unlock(MPIR_Win * win, int rank)
{
    MPIDI_PME_rtarget_t *t = &MPIDI_PME_RWIN(win)->t[rank];
    int mpi_errno = MPI_SUCCESS;
    if (t->lock != MPIDI_PME_LOCK_SENT && t->lock != MPIDI_PME_LOCK_HELD)
        return MPI_SUCCESS;
    MPIDIG_win_target_t *mt = MPIDIG_win_target_find(win, rank);
    while (mt && (MPIR_cc_get(mt->remote_cmpl_cnts) || MPIR_cc_get(mt->remote_acc_cmpl_cnts))) {
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }
    int rc = pme_rma_unlock(MPIDI_PME_global.ep, t->peer, t->key);
    if (rc)
        mpi_errno = MPIDI_PME_error_from_status(rc, MPIDI_PME_world_rank_of(t->peer),
                                                "window unlock");
  fn_fail:
    return mpi_errno;
}

int MPIDI_PME_mpi_win_lock(int lock_type, int rank, int assert, MPIR_Win * win,
                           MPIDI_av_entry_t * addr)
{
    if (!MPIDI_PME_RWIN(win))
        return MPIDIG_mpi_win_lock(lock_type, rank, assert, win);
    int mpi_errno = MPIDIG_mpi_win_lock(lock_type, rank, assert | MPI_MODE_NOCHECK, win);
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = start_lock(win, rank, lock_type, assert);
    if (!mpi_errno && MPIDI_PME_RWIN(win)->t[rank].lock == MPIDI_PME_LOCK_SENT)
        mpi_errno = MPIDI_PME_rma_wait(win, rank);
    return mpi_errno;
}

int MPIDI_PME_mpi_win_unlock(int rank, MPIR_Win * win, MPIDI_av_entry_t * addr)
{
    MPIDI_PME_rwin_t *rw = MPIDI_PME_RWIN(win);
    if (!rw)
        return MPIDIG_mpi_win_unlock(rank, win);
    int mpi_errno = send_unlock(win, rank);
    /* MPIDIG's bookkeeping; its completion hook waits for ours (the unlock included). */
    int rc = MPIDIG_mpi_win_unlock(rank, win);
    rw->t[rank].lock = MPIDI_PME_LOCK_NONE;
    return mpi_errno ? mpi_errno : rc;
}

int MPIDI_PME_mpi_win_lock_all(int assert, MPIR_Win * win)
{
    MPIDI_PME_rwin_t *rw = MPIDI_PME_RWIN(win);
    if (!rw)
        return MPIDIG_mpi_win_lock_all(assert, win);
    int mpi_errno = MPIDIG_mpi_win_lock_all(assert | MPI_MODE_NOCHECK, win);
    for (int i = 0; i < rw->nranks && !mpi_errno; i++)
        mpi_errno = start_lock(win, i, MPI_LOCK_SHARED, assert);
    for (int i = 0; i < rw->nranks && !mpi_errno; i++)
        if (rw->t[i].lock == MPIDI_PME_LOCK_SENT)
            mpi_errno = MPIDI_PME_rma_wait(win, i);
    return mpi_errno;
}

int MPIDI_PME_mpi_win_unlock_all(MPIR_Win * win)
{
    MPIDI_PME_rwin_t *rw = MPIDI_PME_RWIN(win);
    if (!rw)
        return MPIDIG_mpi_win_unlock_all(win);
    int mpi_errno = MPI_SUCCESS;
    for (int i = 0; i < rw->nranks; i++) {
        int rc = send_unlock(win, i);
        if (rc && !mpi_errno)
            mpi_errno = rc;
    }
    int rc = MPIDIG_mpi_win_unlock_all(win);
    for (int i = 0; i < rw->nranks; i++)
        rw->t[i].lock = MPIDI_PME_LOCK_NONE;
    return mpi_errno ? mpi_errno : rc;
}

/* Flushes complete what was started; a lock that was lazy stays lazy (nothing to do). */
int MPIDI_PME_mpi_win_flush(int rank, MPIR_Win * win, MPIDI_av_entry_t * addr)
{
    return MPIDIG_mpi_win_flush(rank, win);
}

int MPIDI_PME_mpi_win_flush_local(int rank, MPIR_Win * win, MPIDI_av_entry_t * addr)
{
    /* A put reads its origin buffer until the target acknowledges it: local completion
     * is remote completion. */
    if (!MPIDI_PME_RWIN(win))
        return MPIDIG_mpi_win_flush_local(rank, win);
    return MPIDIG_mpi_win_flush(rank, win);
}

int MPIDI_PME_mpi_win_flush_local_all(MPIR_Win * win)
{
    if (!MPIDI_PME_RWIN(win))
        return MPIDIG_mpi_win_flush_local_all(win);
    return MPIDIG_mpi_win_flush_all(win);
}

/* ---- MPIDIG's synchronization that ends epochs ---- */

/* MPIDIG's fence, complete and flush_all, compiled here so that their completion hooks
 * are ours (netmod_impl.h calls them through the function table). The function table
 * must not name MPIDI_NM_mpi_win_fence and the like: in func_table.c, netmod_inline.h
 * gives MPIDIG the AM fallback's hooks, which do nothing, and the epoch would end with
 * PME's gets and fetches unanswered and its puts unacknowledged. (Unlock, unlock_all and
 * the flushes are here already; start, post, wait and test complete nothing.) */
int MPIDI_PME_mpi_win_fence(int assert, MPIR_Win * win)
{
    return MPIDIG_mpi_win_fence(assert, win);
}

int MPIDI_PME_mpi_win_complete(MPIR_Win * win)
{
    return MPIDIG_mpi_win_complete(win);
}

int MPIDI_PME_mpi_win_flush_all(MPIR_Win * win)
{
    return MPIDIG_mpi_win_flush_all(win);
}

/* ---- the completion hooks of MPIDIG's synchronization ---- */

int MPIDI_PME_rma_win_cmpl_hook(MPIR_Win * win)
{
    return MPIDI_PME_RWIN(win) ? MPIDI_PME_rma_wait_all(win) : MPI_SUCCESS;
}

int MPIDI_PME_rma_target_cmpl_hook(int rank, MPIR_Win * win)
{
    return MPIDI_PME_RWIN(win) ? MPIDI_PME_rma_wait(win, rank) : MPI_SUCCESS;
}
