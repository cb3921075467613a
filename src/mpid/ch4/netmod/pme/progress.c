// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - progress: drive pme_core, hand its events to MPIDIG, and wait politely.
 *
 * ch4 calls this hook in its progress loop together with shared memory, so it must
 * never block for long. When a pass finds nothing, pme_ep_idle decides: a process
 * with a core of its own polls for PME_SPIN_US, one that shares its core yields it
 * for PME_YIELD_US; after that either sleeps on the device (woken by the next frame,
 * or by the doorbell a shared-memory sender rings: shm_wake.c) for a time that grows
 * with the idleness, up to MPIR_CVAR_CH4_PME_MAX_SLEEP_US, so that oversubscribed
 * nodes make progress and idle ones give their cores back.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

static int peer_failed(const struct pme_event *ev)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int rank = -1;
    if (ev->peer < g->npeers_alloc) {
        MPIDI_PME_peer_t *p = &g->peers[ev->peer];
        if (p->failed)
            return MPI_SUCCESS;
        p->failed = 1;
        p->fail_status = ev->status;
        rank = p->world_rank;
    }
    MPIDI_PME_say_peer_failure(ev->status, rank);
    int mpi_errno = MPIDI_PME_error_from_status(ev->status, rank, "communication");
    MPIDI_PME_fail_sendq_peer(ev->peer, mpi_errno);
    /* Report it from this progress call: whatever MPI call is waiting returns the
     * error (the peer's pending rendezvous transfers fail with their own events). */
    if (g->pending_errno == MPI_SUCCESS)
        g->pending_errno = mpi_errno;
    return MPI_SUCCESS;
}

int MPIDI_PME_progress(int vci, int *made_progress)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    struct pme_event ev;
    int n = 0;

    if (!g->ep)
        return MPI_SUCCESS;

    if (g->sendq_head) {
        mpi_errno = MPIDI_PME_sendq_drain();
        MPIR_ERR_CHECK(mpi_errno);
    }

    pme_progress(g->ep);
    while (pme_next_event(g->ep, &ev)) {
        int rc = MPI_SUCCESS;
        n++;
        switch (ev.type) {
            case PME_EV_MSG:
                rc = MPIDI_PME_handle_msg(&ev);
                break;
            case PME_EV_RTS:
                rc = MPIDI_PME_handle_rts(&ev);
                break;
            case PME_EV_SEND_DONE:
                rc = MPIDI_PME_handle_send_done(&ev);
                break;
            case PME_EV_RECV_DONE:
                rc = MPIDI_PME_handle_recv_done(&ev);
                break;
            case PME_EV_PEER_FAILED:
                rc = peer_failed(&ev);
                break;
            default:
                break;
        }
        if (rc != MPI_SUCCESS && mpi_errno == MPI_SUCCESS)
            mpi_errno = rc;
    }

    if (g->sendq_head) {
        int rc = MPIDI_PME_sendq_drain();
        if (rc != MPI_SUCCESS && mpi_errno == MPI_SUCCESS)
            mpi_errno = rc;
    }
    /* Small messages that gathered behind frames in flight (PME_COALESCE_AFTER) leave
     * now: a progress call ends a burst of sends (a window of MPI_Isend, then its
     * MPI_Waitall), and the program may compute before it calls MPI again. Answers the
     * handlers made (an ssend's acknowledgement, a one-sided reply) go with them. */
    pme_send_waiting(g->ep);
    if (g->pending_errno != MPI_SUCCESS && mpi_errno == MPI_SUCCESS) {
        mpi_errno = g->pending_errno;
        g->pending_errno = MPI_SUCCESS;
    }
    MPIR_ERR_CHECK(mpi_errno);

    /* Idle accounting: events, frames sent or received (a rendezvous transfer moves
     * many frames before its one event), queued sends, any request completed by the
     * progress engine, or a cell taken from shared memory count as activity. */
    uint64_t frames = pme_ep_activity(g->ep);
    int count = MPIDI_PME_COMPLETIONS(vci);
    if (n || frames != g->last_frames)
        *made_progress = 1;
    int cells = MPIDI_PME_shm_cells_taken();
    uint64_t now = pme_ep_now_ns(g->ep);     /* the pass's own time: no second clock read */
    if (n || g->sendq_head || frames != g->last_frames || count != g->last_progress_count ||
        cells != g->last_shm_cells || !g->idle_since_ns) {
        g->idle_since_ns = now;
        g->last_progress_count = count;
        g->last_shm_cells = cells;
        g->last_frames = frames;
        MPIDI_PME_shm_wake_disarm();
    } else {
        /* The longer nothing comes, the longer the sleep (an eighth of the idle time,
         * 50 us to max_sleep_us): waiting ranks of an oversubscribed node then leave
         * the cores to the ranks that have work, yet wake at once for a PME frame. */
        uint64_t idle_us = (now - g->idle_since_ns) / 1000;
        uint64_t sleep_us = idle_us / 8;
        if (sleep_us < 50)
            sleep_us = 50;
        if (sleep_us > g->max_sleep_us)
            sleep_us = g->max_sleep_us;
        /* A sleep is announced to the node's shared-memory senders first: one more
         * pass, then the sleep (shm_wake.c). */
        if (MPIDI_PME_shm_wake_unannounced() &&
            pme_ep_idle_sleeps(g->ep, idle_us, (unsigned) sleep_us)) {
            MPIDI_PME_shm_wake_announce();
            goto fn_exit;
        }
        pme_ep_idle(g->ep, idle_us, (unsigned) sleep_us);
        MPIDI_PME_shm_wake_disarm();
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
