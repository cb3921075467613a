// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - dynamic processes (MPI_Comm_spawn, MPI_Comm_connect/accept).
 *
 * A process's "upid" is its PME address string. New processes are added to PME with
 * pme_ep_add_peer (the address vector can grow at any time) and to ch4's address
 * vector: in 4.x the netmod makes a new table and names the processes by "gpids"
 * (upids_to_gpids); in 5.0 MPICH names them ("lpids") and hands each upid to the
 * netmod (insert_upid). The connect/accept handshake travels as small PME messages
 * outside MPIDIG (MPIDI_PME_KIND_DYNPROC), matched by the port's tag; in 5.0
 * MPI_Intercomm_create's two leaders exchange their groups the same way
 * (dynamic_sendrecv), matched by tag and context id.
 *
 * Frames of another job are dropped by PME's job key, or fail the MAC of its secret:
 * rank 0 of each job draws its own (init_secret.c), so spawned processes and separately
 * launched jobs that want to connect must be given the same PME_JOB_SECRET_FILE (or,
 * without MACs, the same PME_JOB_KEY); MPIDI_PME_choose_secret says so to a spawned
 * process that has neither. The handshake's messages go through send.c and arrive in
 * dynq.c.
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

/* The PME peer of a process named by its upid (added if new), its slot in the peer
 * table made, its address kept. */
static int add_peer(const char *upid, int upid_len, uint32_t * peer_out)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    char addr[PME_ADDR_MAX];
    int len = upid_len < PME_ADDR_MAX - 1 ? upid_len : PME_ADDR_MAX - 1;
    memcpy(addr, upid, (size_t) len);
    addr[len] = 0;

    pme_peer_t peer;
    int rc = pme_ep_add_peer(g->ep, addr, &peer);
    if (rc)
        return MPIDI_PME_error_from_status(rc, -1, "connecting to a new process");
    int mpi_errno = MPIDI_PME_peer_slot(peer);
    if (mpi_errno)
        return mpi_errno;
    memcpy(g->peers[peer].addr, addr, PME_ADDR_MAX);
    *peer_out = peer;
    return MPI_SUCCESS;
}

#if MPIDI_PME_MPICH_5
int MPIDI_PME_insert_upid(MPIR_Lpid lpid, const char *upid, int upid_len)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    uint32_t peer;
    int mpi_errno = add_peer(upid, upid_len, &peer);
    if (mpi_errno)
        return mpi_errno;
    /* (a dynamic lpid only lasts while connect/accept sets up the real one) */
    if (!(lpid & MPIR_LPID_DYNAMIC_MASK)) {
        g->peers[peer].gpid = (uint64_t) lpid;
        g->peers[peer].has_gpid = 1;
    }
    MPIDI_PME_AV(MPIDIU_lpid_to_av_slow(lpid)).peer = peer;
    return MPI_SUCCESS;
}
#else
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
        uint32_t peer;
        mpi_errno = add_peer(cur, remote_upid_size[i], &peer);
        MPIR_ERR_CHECK(mpi_errno);
        cur += remote_upid_size[i];
        MPIDI_PME_peer_t *p = &g->peers[peer];
        if (p->has_gpid && gpid_holds(p->gpid, peer)) {
            remote_gpids[i] = p->gpid;
        } else {
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
#endif

static int timeout_error(int timeout, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof(msg),
             "ch4:pme: %s timed out after %d s (processes of separately started jobs "
             "must share PME_JOB_KEY to reach each other)", what, timeout);
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_PORT, "**pme_summary", "**pme_summary %s", msg);
}

static int timed_out(uint64_t start, int timeout)
{
    return timeout > 0 && MPIDI_PME_now_ns() - start > (uint64_t) timeout * 1000000000ull;
}

/* Make sure what was sent left the queue (PME then delivers it or declares the peer
 * dead). */
static int wait_sendq(uint64_t start, int timeout, const char *what)
{
    int mpi_errno = MPI_SUCCESS;
    while (MPIDI_PME_global.sendq_head && !mpi_errno) {
        mpi_errno = MPID_Progress_test(NULL);
        if (!mpi_errno && timed_out(start, timeout))
            mpi_errno = timeout_error(timeout, what);
    }
    return mpi_errno;
}

int MPIDI_PME_dynamic_send(MPIDI_PME_procid_t remote, int tag, const void *buf, int size,
                           int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    uint32_t peer = MPIDI_PME_AV(MPIDI_PME_PROCID_AV(remote)).peer;
    MPIDI_PME_wire_hdr_t wh = { MPIDI_PME_DYN_CONNECT, 0, 0, MPIDI_PME_KIND_DYNPROC,
        (uint32_t) tag
    };

    mpi_errno = MPIDI_PME_send_raw(peer, -1, &wh, sizeof(wh), buf, (size_t) size);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = wait_sendq(MPIDI_PME_now_ns(), timeout, "connect/accept (send)");

  fn_fail:
    return mpi_errno;
}

int MPIDI_PME_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    uint64_t start = MPIDI_PME_now_ns();

    while (!MPIDI_PME_dynq_take(MPIDI_PME_DYN_CONNECT, (uint32_t) tag, NULL, 0, buf,
                                (size_t) size, NULL)) {
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (timed_out(start, timeout)) {
            mpi_errno = timeout_error(timeout, "connect/accept");
            goto fn_fail;
        }
    }

  fn_fail:
    return mpi_errno;
}

#if MPIDI_PME_MPICH_5
/* The two leaders of MPI_Intercomm_create (5.0) swap their groups: send_size bytes to
 * the remote leader, recv_size from it, matched by tag and the context id of their
 * peer communicator (ours to send, the receive context to receive). The data goes in
 * eager pieces, each led by the context id: PME copies an eager message at once, so
 * send_buf is free when the call returns. */
int MPIDI_PME_dynamic_sendrecv(MPIR_Lpid remote_lpid, MPIR_Comm * peer_comm, int tag,
                               const void *send_buf, int send_size, void *recv_buf,
                               int recv_size, int timeout)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    uint32_t peer = MPIDI_PME_AV(MPIDIU_lpid_to_av_slow(remote_lpid)).peer;
    MPIDI_PME_wire_hdr_t wh = { MPIDI_PME_DYN_SENDRECV, 0, 0, MPIDI_PME_KIND_DYNPROC,
        (uint32_t) tag
    };
    uint32_t ctx = (uint32_t) peer_comm->context_id;
    size_t piece = MPL_MIN(g->eager_max, 4096) - sizeof(wh) - sizeof(ctx);
    char *msg = MPL_malloc(sizeof(ctx) + MPL_MIN(piece, (size_t) send_size), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!msg, mpi_errno, MPI_ERR_OTHER, "**nomem");
    uint64_t start = MPIDI_PME_now_ns();

    memcpy(msg, &ctx, sizeof(ctx));
    for (size_t off = 0; off < (size_t) send_size; off += piece) {
        size_t n = MPL_MIN(piece, (size_t) send_size - off);
        memcpy(msg + sizeof(ctx), (const char *) send_buf + off, n);
        mpi_errno = MPIDI_PME_send_raw(peer, -1, &wh, sizeof(wh), msg, sizeof(ctx) + n);
        MPIR_ERR_CHECK(mpi_errno);
    }

    uint32_t rctx = (uint32_t) peer_comm->recvcontext_id;
    size_t got = 0;
    while (got < (size_t) recv_size) {
        size_t n;
        if (MPIDI_PME_dynq_take(MPIDI_PME_DYN_SENDRECV, (uint32_t) tag, &rctx, sizeof(rctx),
                                (char *) recv_buf + got, (size_t) recv_size - got, &n)) {
            got += n;
            continue;
        }
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
        if (timed_out(start, timeout)) {
            mpi_errno = timeout_error(timeout, "MPI_Intercomm_create's exchange");
            goto fn_fail;
        }
    }
    mpi_errno = wait_sendq(start, timeout, "MPI_Intercomm_create's exchange");

  fn_fail:
    MPL_free(msg);
    return mpi_errno;
}
#endif
