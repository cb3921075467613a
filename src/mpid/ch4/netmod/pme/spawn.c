// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - dynamic processes (MPI_Comm_spawn, MPI_Comm_connect/accept).
 *
 * A process's "upid" is its PME address string. New processes are added to PME with
 * pme_ep_add_peer (the address vector can grow at any time) and to ch4 in a new
 * address vector table. The connect/accept handshake travels as small PME messages
 * outside MPIDIG (MPIDI_PME_KIND_DYNPROC), matched by the port's tag.
 *
 * Frames of another job are dropped by PME's job key: processes spawned from the same
 * mpiexec share it (see MPIDI_PME_job_key in init_secret.c); separately launched jobs
 * that want to connect must be given the same PME_JOB_KEY. The handshake's messages go
 * through send.c and arrive in dynq.c.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

int MPIDI_PME_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    int n = comm->local_size;
    int *sizes = MPL_malloc(sizeof(int) * (n ? n : 1), MPL_MEM_ADDRESS);
    char *buf = MPL_malloc((size_t) (n ? n : 1) * PME_ADDR_MAX, MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDJUMP(!sizes || !buf, mpi_errno, MPI_ERR_OTHER, "**nomem");

    char *p = buf;
    for (int i = 0; i < n; i++) {
        uint32_t peer = MPIDI_PME_AV(MPIDIU_comm_rank_to_av(comm, i)).peer;
        const char *addr = peer < g->npeers_alloc ? g->peers[peer].addr : "";
        sizes[i] = (int) strlen(addr);
        memcpy(p, addr, (size_t) sizes[i]);
        p += sizes[i];
    }
    *local_upid_size = sizes;
    *local_upids = buf;
    return MPI_SUCCESS;

  fn_fail:
    MPL_free(sizes);
    MPL_free(buf);
    return mpi_errno;
}

/* Does the address vector entry gpid still hold PME peer `peer`? */
static int gpid_holds(uint64_t gpid, uint32_t peer)
{
    int avtid = (int) MPIDIU_GPID_GET_AVTID(gpid);
    int lpid = (int) MPIDIU_GPID_GET_LPID(gpid);
    if (avtid >= MPIDIU_get_n_avts() || MPIDIU_get_av_table(avtid) == NULL ||
        lpid >= MPIDIU_get_av_table(avtid)->size)
        return 0;
    return MPIDI_PME_AV(&MPIDIU_get_av(avtid, lpid)).peer == peer;
}

int MPIDI_PME_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                             uint64_t * remote_gpids)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    int n_new = 0;
    int *new_idx = MPL_malloc(sizeof(int) * (size ? size : 1), MPL_MEM_ADDRESS);
    uint32_t *new_peer = MPL_malloc(sizeof(uint32_t) * (size ? size : 1), MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDJUMP(!new_idx || !new_peer, mpi_errno, MPI_ERR_OTHER, "**nomem");

    const char *cur = remote_upids;
    for (int i = 0; i < size; i++) {
        char addr[PME_ADDR_MAX];
        int len = remote_upid_size[i] < PME_ADDR_MAX - 1 ? remote_upid_size[i] : PME_ADDR_MAX - 1;
        memcpy(addr, cur, (size_t) len);
        addr[len] = 0;
        cur += remote_upid_size[i];

        pme_peer_t peer;
        int rc = pme_ep_add_peer(g->ep, addr, &peer);
        if (rc) {
            mpi_errno = MPIDI_PME_error_from_status(rc, -1, "connecting to a new process");
            goto fn_fail;
        }
        mpi_errno = MPIDI_PME_peer_slot(peer);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_PME_peer_t *p = &g->peers[peer];
        if (p->has_gpid && gpid_holds(p->gpid, peer)) {
            remote_gpids[i] = p->gpid;
        } else {
            memcpy(p->addr, addr, PME_ADDR_MAX);
            new_idx[n_new] = i;
            new_peer[n_new] = peer;
            n_new++;
        }
    }

    if (n_new > 0) {
        int avtid;
        mpi_errno = MPIDIU_new_avt(n_new, &avtid);
        MPIR_ERR_CHECK(mpi_errno);
        for (int k = 0; k < n_new; k++) {
            MPIDI_PME_AV(&MPIDIU_get_av(avtid, k)).peer = new_peer[k];
            MPIDI_PME_peer_t *p = &g->peers[new_peer[k]];
            p->gpid = MPIDIU_GPID_CREATE(avtid, k);
            p->has_gpid = 1;
            remote_gpids[new_idx[k]] = p->gpid;
        }
    }

  fn_exit:
    MPL_free(new_idx);
    MPL_free(new_peer);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int timeout_error(int timeout, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof(msg),
             "ch4:pme: %s timed out after %d s (processes of separately started jobs "
             "must share PME_JOB_KEY to reach each other)", what, timeout);
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_PORT, "**pme_summary", "**pme_summary %s", msg);
}

int MPIDI_PME_dynamic_send(uint64_t remote_gpid, int tag, const void *buf, int size,
                           int timeout)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    int avtid = (int) MPIDIU_GPID_GET_AVTID(remote_gpid);
    int lpid = (int) MPIDIU_GPID_GET_LPID(remote_gpid);
    uint32_t peer = MPIDI_PME_AV(&MPIDIU_get_av(avtid, lpid)).peer;
    MPIDI_PME_wire_hdr_t wh = { 0, 0, 0, MPIDI_PME_KIND_DYNPROC, (uint32_t) tag };

    mpi_errno = MPIDI_PME_send_raw(peer, -1, &wh, sizeof(wh), buf, (size_t) size);
    MPIR_ERR_CHECK(mpi_errno);

    /* Make sure it left the queue (PME then delivers it or declares the peer dead). */
    uint64_t start = MPIDI_PME_now_ns();
    while (g->sendq_head) {
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (timeout > 0 && MPIDI_PME_now_ns() - start > (uint64_t) timeout * 1000000000ull) {
            mpi_errno = timeout_error(timeout, "connect/accept (send)");
            goto fn_fail;
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_PME_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    uint64_t start = MPIDI_PME_now_ns();

    for (;;) {
        if (MPIDI_PME_dynq_take((uint32_t) tag, buf, (size_t) size))
            return MPI_SUCCESS;
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (timeout > 0 && MPIDI_PME_now_ns() - start > (uint64_t) timeout * 1000000000ull) {
            mpi_errno = timeout_error(timeout, "connect/accept");
            goto fn_fail;
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
