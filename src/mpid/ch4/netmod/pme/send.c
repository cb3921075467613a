// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - handing messages to PME, and the queue of those it could not take yet.
 *
 * pme_send answers PME_EAGAIN when its send pool is full; such sends wait here, in
 * order, until a progress call drains them. Sends of a failed peer complete with its
 * error. Used by the AM send API (am.c), connect/accept (spawn.c), progress and
 * finalize; calls only err.c and MPIDIG's origin callbacks.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

static int enqueue(uint32_t peer, int rank, const void *hdr, size_t hdr_len,
                   const struct iovec *iov, int iovcnt, MPIR_Request * sreq, int copy_data)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    size_t extra = (copy_data && iovcnt) ? iov->iov_len : 0;
    MPIDI_PME_sendq_t *q = MPL_malloc(sizeof(*q) + ((hdr_len + 7) & ~(size_t) 7) + extra,
                                      MPL_MEM_BUFFER);
    MPIR_ERR_CHKANDSTMT(!q, mpi_errno, MPI_ERR_OTHER, return mpi_errno, "**nomem");
    q->next = NULL;
    q->peer = peer;
    q->rank = rank;
    q->sreq = sreq;
    q->hdr_len = hdr_len;
    memcpy(q->hdr, hdr, hdr_len);
    q->iovcnt = iovcnt;
    if (iovcnt) {
        q->iov = *iov;
        if (copy_data) {
            /* the data sat in a scratch buffer that the next send reuses */
            char *copy = (char *) q->hdr + ((hdr_len + 7) & ~(size_t) 7);
            memcpy(copy, iov->iov_base, iov->iov_len);
            q->iov.iov_base = copy;
        }
    }
    if (g->sendq_tail)
        g->sendq_tail->next = q;
    else
        g->sendq_head = q;
    g->sendq_tail = q;
    return MPI_SUCCESS;
}

/* Complete an AM send at the origin: drop its packed copy, if any, and run MPIDIG's
 * origin callback of its handler. */
int MPIDI_PME_origin_done(MPIR_Request * sreq)
{
    if (MPIDI_PME_AMREQ(sreq).pack_buf) {
        MPL_free(MPIDI_PME_AMREQ(sreq).pack_buf);
        MPIDI_PME_AMREQ(sreq).pack_buf = NULL;
    }
    MPIDIG_am_origin_cb cb = MPIDIG_global.origin_cbs[MPIDI_PME_AMREQ(sreq).handler_id];
    return cb ? cb(sreq) : MPI_SUCCESS;
}

/* Hand one message to PME. Returns MPI_SUCCESS when PME took it (an eager send with a
 * request is completed here), 1 when PME has no room (PME_EAGAIN), or an MPI error. */
static int issue(uint32_t peer, int rank, const void *hdr, size_t hdr_len,
                 const struct iovec *iov, int iovcnt, MPIR_Request * sreq)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int rc = pme_send(g->ep, peer, hdr, hdr_len, iov, iovcnt, PME_SEND_NO_EVENT, sreq);
    if (rc == PME_DONE) {
        return sreq ? MPIDI_PME_origin_done(sreq) : MPI_SUCCESS;
    }
    if (rc == PME_OK)
        return MPI_SUCCESS;     /* a rendezvous: PME_EV_SEND_DONE completes it */
    if (rc == PME_EAGAIN)
        return 1;
    return MPIDI_PME_error_from_status(rc, rank, "send");
}

int MPIDI_PME_sendq_drain(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    while (g->sendq_head) {
        MPIDI_PME_sendq_t *q = g->sendq_head;
        int rc = issue(q->peer, q->rank, q->hdr, q->hdr_len, &q->iov, q->iovcnt, q->sreq);
        if (rc == 1)
            break;
        g->sendq_head = q->next;
        if (!g->sendq_head)
            g->sendq_tail = NULL;
        if (rc != MPI_SUCCESS && q->sreq) {
            /* fail the request rather than the progress call */
            q->sreq->status.MPI_ERROR = rc;
            MPIDI_PME_origin_done(q->sreq);
        } else if (rc != MPI_SUCCESS && mpi_errno == MPI_SUCCESS) {
            mpi_errno = rc;
        }
        MPL_free(q);
    }
    return mpi_errno;
}

/* A peer failed: queued sends to it will never go. */
void MPIDI_PME_fail_sendq_peer(uint32_t peer, int mpi_errno)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    MPIDI_PME_sendq_t **pp = &g->sendq_head, *last = NULL;
    while (*pp) {
        MPIDI_PME_sendq_t *q = *pp;
        if (q->peer != peer) {
            last = q;
            pp = &q->next;
            continue;
        }
        *pp = q->next;
        if (q->sreq) {
            q->sreq->status.MPI_ERROR = mpi_errno;
            MPIDI_PME_origin_done(q->sreq);
        }
        MPL_free(q);
    }
    g->sendq_tail = last;
}

/* Send now, or queue behind earlier sends that are still waiting. data_is_scratch: the
 * data sits in a buffer the next send reuses, so a queued send keeps a copy. */
int MPIDI_PME_send_or_queue(uint32_t peer, int rank, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, MPIR_Request * sreq,
                            int data_is_scratch)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    if (!g->sendq_head) {
        int rc = issue(peer, rank, hdr, hdr_len, iov, iovcnt, sreq);
        if (rc != 1)
            return rc;
    }
    return enqueue(peer, rank, hdr, hdr_len, iov, iovcnt, sreq, data_is_scratch);
}

/* For connect/accept: a message outside MPIDIG, to a peer named by its PME handle. */
int MPIDI_PME_send_raw(uint32_t peer, int rank, const void *hdr, size_t hdr_len,
                       const void *data, size_t data_len)
{
    struct iovec iov = { (void *) data, data_len };
    return MPIDI_PME_send_or_queue(peer, rank, hdr, hdr_len, &iov, data_len ? 1 : 0, NULL, 1);
}
