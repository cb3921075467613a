// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - active messages: MPIDIG's messages mapped onto pme_send, and the target
 * side: eager messages handed to the MPIDIG handlers in place, rendezvous offers
 * answered with the receiver's own buffer once MPIDIG has matched them.
 *
 * On the wire a message is PME's header (our MPIDI_PME_wire_hdr_t followed by the
 * MPIDIG header, padded to 8 bytes) and the payload. Up to PME's eager threshold the
 * payload is copied by pme_send and the send completes at once; above it, pme_send
 * offers it (PME_EV_RTS at the target) and the data later moves straight from the
 * sender's buffer into the receiver's.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/* Receives of non-contiguous data whose pieces are smaller than this on average land
 * in a bounce buffer and are unpacked; larger pieces are received in place. */
#define MPIDI_PME_IOV_MIN_AVG 1024

static inline uint32_t peer_of(MPIR_Comm * comm, int rank)
{
    return MPIDI_PME_AV(MPIDIU_comm_rank_to_av(comm, rank)).peer;
}

/* Our header, then the MPIDIG header, padded to 8 bytes. Returns its length. */
static inline size_t build_hdr(uint64_t * buf, int handler_id, const void *am_hdr,
                               MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
    MPIDI_PME_wire_hdr_t *wh = (MPIDI_PME_wire_hdr_t *) buf;
    size_t padded = ((size_t) am_hdr_sz + 7) & ~(size_t) 7;
    wh->handler_id = (uint8_t) handler_id;
    wh->src_vci = (uint8_t) src_vci;
    wh->dst_vci = (uint8_t) dst_vci;
    wh->kind = MPIDI_PME_KIND_AM;
    wh->tag = 0;
    if (padded)
        buf[sizeof(*wh) / 8 + padded / 8 - 1] = 0;
    if (am_hdr_sz)
        memcpy(wh + 1, am_hdr, (size_t) am_hdr_sz);
    return sizeof(*wh) + padded;
}

/* ---- the AM send API ---- */

int MPIDI_PME_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                          MPI_Aint am_hdr_sz, int src_vci, int dst_vci)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    uint64_t buf[MPIDI_PME_HDR_BUF / 8];

    MPIR_FUNC_ENTER;
    MPIR_Assert(am_hdr_sz <= g->am_hdr_max);
    size_t len = build_hdr(buf, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci);
    int mpi_errno = MPIDI_PME_send_or_queue(peer_of(comm, rank), rank, buf, len, NULL, 0,
                                            NULL, 0);
    MPIR_FUNC_EXIT;
    return mpi_errno;
}

int MPIDI_PME_am_send_hdr_reply(MPIR_Comm * comm, int src_rank, int handler_id,
                                const void *am_hdr, MPI_Aint am_hdr_sz, int src_vci,
                                int dst_vci)
{
    return MPIDI_PME_am_send_hdr(src_rank, comm, handler_id, am_hdr, am_hdr_sz, src_vci,
                                 dst_vci);
}

int MPIDI_PME_am_isend(int rank, MPIR_Comm * comm, int handler_id, const void *am_hdr,
                       MPI_Aint am_hdr_sz, const void *data, MPI_Aint count,
                       MPI_Datatype datatype, int src_vci, int dst_vci, MPIR_Request * sreq)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    uint64_t buf[MPIDI_PME_HDR_BUF / 8];
    int dt_contig;
    MPI_Aint data_sz, dt_true_lb;
    MPIR_Datatype *dt_ptr;
    struct iovec iov;
    int scratch = 0;

    MPIR_FUNC_ENTER;

    MPIR_Assert(am_hdr_sz <= g->am_hdr_max);
    MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr, dt_true_lb);
    size_t len = build_hdr(buf, handler_id, am_hdr, am_hdr_sz, src_vci, dst_vci);
    MPIDI_PME_AMREQ(sreq).handler_id = (uint8_t) handler_id;

    if (data_sz == 0) {
        iov.iov_base = NULL;
        iov.iov_len = 0;
    } else if (dt_contig) {
        iov.iov_base = MPIR_get_contig_ptr(data, dt_true_lb);
        iov.iov_len = (size_t) data_sz;
    } else {
        /* Non-contiguous: pack. Eager messages are copied by pme_send, so a scratch
         * buffer serves; rendezvous ones read the buffer until SEND_DONE. */
        void *pack;
        MPI_Aint packed;
        if (len + (size_t) data_sz <= g->eager_max) {
            pack = g->pack_scratch;
            scratch = 1;
        } else {
            pack = MPL_malloc(data_sz, MPL_MEM_BUFFER);
            MPIR_ERR_CHKANDJUMP(!pack, mpi_errno, MPI_ERR_OTHER, "**nomem");
            MPIDI_PME_AMREQ(sreq).pack_buf = pack;
        }
        mpi_errno = MPIDI_PME_TYPEREP_PACK(data, count, datatype, 0, pack, data_sz, &packed);
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_Assert(packed == data_sz);
        iov.iov_base = pack;
        iov.iov_len = (size_t) data_sz;
    }

    mpi_errno = MPIDI_PME_send_or_queue(peer_of(comm, rank), rank, buf, len, &iov,
                                        data_sz ? 1 : 0, sreq, scratch);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_PME_am_isend_reply(MPIR_Comm * comm, int src_rank, int handler_id,
                             const void *am_hdr, MPI_Aint am_hdr_sz, const void *data,
                             MPI_Aint count, MPI_Datatype datatype, int src_vci, int dst_vci,
                             MPIR_Request * sreq)
{
    return MPIDI_PME_am_isend(src_rank, comm, handler_id, am_hdr, am_hdr_sz, data, count,
                              datatype, src_vci, dst_vci, sreq);
}

MPI_Aint MPIDI_PME_am_hdr_max_sz(void)
{
    return MPIDI_PME_global.am_hdr_max;
}

/* Payload that always goes eagerly, whatever the header (MPIDIG sizes its pipeline
 * segments with it; ch4:pme never uses that pipeline, see am_check_eager). */
MPI_Aint MPIDI_PME_am_eager_limit(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    MPI_Aint room = (MPI_Aint) g->eager_max - (MPI_Aint) sizeof(MPIDI_PME_wire_hdr_t) -
        g->am_hdr_max;
    return room > 256 ? room : 256;
}

MPI_Aint MPIDI_PME_am_eager_buf_limit(void)
{
    return (MPI_Aint) MPIDI_PME_global.eager_max;
}

/* Every message goes as one AM: PME itself switches to its zero-copy rendezvous above
 * the eager threshold, so MPIDIG's own RTS/CTS pipeline is never needed. */
bool MPIDI_PME_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz, const void *data,
                              MPI_Aint count, MPI_Datatype datatype, MPIR_Request * sreq)
{
    return true;
}

void MPIDI_PME_am_request_init(MPIR_Request * req)
{
    MPIDI_PME_AMREQ(req).pack_buf = NULL;
    MPIDI_PME_AMREQ(req).flags = 0;
}

void MPIDI_PME_am_request_finalize(MPIR_Request * req)
{
    if (MPIDI_PME_AMREQ(req).pack_buf) {
        MPL_free(MPIDI_PME_AMREQ(req).pack_buf);
        MPIDI_PME_AMREQ(req).pack_buf = NULL;
    }
}

/* ---- target side ---- */

/* Every MPIDIG header structure fits the floor the parser pads short headers to. */
_Static_assert(sizeof(MPIDIG_hdr_t) <= MPIDI_PME_AM_HDR_FLOOR, "MPIDIG_hdr_t too large");
_Static_assert(sizeof(MPIDIG_acc_req_msg_t) <= MPIDI_PME_AM_HDR_FLOOR,
               "MPIDIG_acc_req_msg_t too large");
_Static_assert(sizeof(MPIDIG_put_msg_t) <= MPIDI_PME_AM_HDR_FLOOR, "MPIDIG_put_msg_t too large");
_Static_assert(sizeof(MPIDIG_get_msg_t) <= MPIDI_PME_AM_HDR_FLOOR, "MPIDIG_get_msg_t too large");

/* MPIDIG's accumulates (those PME does not do) update window memory in this thread. On
 * a window whose other accumulates PME does, its liveness helper may be acting on one
 * at the same time: it is kept out meanwhile (MPI's accumulates are atomic). */
static int updates_window(int handler_id)
{
    return MPIDI_PME_global.rma_acc_windows &&
        ((handler_id >= MPIDIG_ACC_REQ && handler_id <= MPIDIG_GET_ACC_DT_ACK) ||
         handler_id == MPIDIG_CSWAP_REQ);
}

/* The netmod's header and the MPIDIG header of a received message, or -1 when the
 * message is malformed or names a handler MPIDIG does not have (it is dropped). The
 * MPIDIG header is the event's own (pme_core hands out headers 16-byte aligned and the
 * netmod pads its headers to 8 bytes), or a zero-padded copy in scratch when short. */
static int parse(const struct pme_event *ev, void *scratch, MPIDI_PME_am_parsed_t * am)
{
    if (MPIDI_PME_am_parse(ev->hdr, ev->hdr_len, MPIDI_AM_HANDLERS_MAX, scratch, am))
        return -1;
    if (am->kind == MPIDI_PME_KIND_AM && !MPIDIG_global.target_msg_cbs[am->handler_id])
        return -1;
    return 0;
}

int MPIDI_PME_handle_msg(struct pme_event *ev)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    uint64_t scratch[MPIDI_PME_AM_HDR_FLOOR / 8];
    MPIDI_PME_am_parsed_t msg;

    if (parse(ev, scratch, &msg))
        goto done;
    if (msg.kind == MPIDI_PME_KIND_DYNPROC) {
        mpi_errno = MPIDI_PME_dynq_put(msg.handler_id, msg.tag, ev->data, ev->data_len);
        goto done;
    }
    uint32_t attr = 0;
    MPIDIG_AM_ATTR_SET_VCIS(attr, msg.src_vci, msg.dst_vci);
    int hold = updates_window(msg.handler_id);
    if (hold)
        pme_rma_exclusive(g->ep, 1);
    mpi_errno = MPIDIG_global.target_msg_cbs[msg.handler_id] ((void *) msg.am_hdr,
                                                             (void *) ev->data,
                                                             (MPI_Aint) ev->data_len, attr,
                                                             NULL);
    if (hold)
        pme_rma_exclusive(g->ep, 0);
  done:
    pme_event_release(g->ep, ev);
    return mpi_errno;
}

/* Answer a rendezvous offer with the receive buffer MPIDIG has set up for rreq. Called
 * right after the handler for a matched receive or an RMA target, or later from
 * MPIDIG (data_copy_cb) when a receive matches an unexpected offer. */
static int rndv_accept(MPIR_Request * rreq)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_am_request_t *am = &MPIDI_PME_AMREQ(rreq);
    MPIDIG_rreq_async_t *ra = &MPIDIG_REQUEST(rreq, req->recv_async);
    struct iovec one;
    struct iovec *iov = &one;
    int iovcnt = 1;

    MPIR_FUNC_ENTER;
    MPIR_Assert(am->flags & MPIDI_PME_AMREQ_RNDV_OFFER);
    am->flags &= ~MPIDI_PME_AMREQ_RNDV_OFFER;

    int use_pack = 0;
    MPI_Aint capacity = 0;
    if (ra->recv_type == MPIDIG_RECV_DATATYPE) {
        int dt_contig;
        MPI_Aint dt_true_lb;
        MPIR_Datatype *dt_ptr;
        MPIDI_Datatype_get_info(MPIDIG_REQUEST(rreq, count), MPIDIG_REQUEST(rreq, datatype),
                                dt_contig, capacity, dt_ptr, dt_true_lb);
        (void) dt_true_lb;
        if (!dt_contig) {
            /* Small pieces, or more data than room (MPI_ERR_TRUNCATE must win over
             * MPIDIG's iov conversion): receive into a bounce buffer. */
            MPI_Aint n = MPIDIG_get_recv_iov_count(rreq);
            use_pack = (MPI_Aint) am->total > capacity || n <= 0 ||
                (MPI_Aint) am->total / n < MPIDI_PME_IOV_MIN_AVG;
        }
    }

    if (use_pack) {
        size_t len = (size_t) MPL_MIN(capacity, (MPI_Aint) am->total);
        void *pack = MPL_malloc(len ? len : 1, MPL_MEM_BUFFER);
        MPIR_ERR_CHKANDJUMP(!pack, mpi_errno, MPI_ERR_OTHER, "**nomem");
        am->pack_buf = pack;
        am->flags |= MPIDI_PME_AMREQ_PACKED;
        one.iov_base = pack;
        one.iov_len = len;
    } else {
        int is_contig, is_gpu;
        void *p_data;
        MPI_Aint p_data_sz;
        MPIDIG_get_recv_data(&is_contig, &is_gpu, &p_data, &p_data_sz, rreq);
        if (is_contig) {
            one.iov_base = p_data;
            one.iov_len = (size_t) p_data_sz;
        } else {
            iov = p_data;
            iovcnt = (int) p_data_sz;
        }
    }

    int rc = pme_rndv_accept(g->ep, am->rndv, iov, iovcnt, rreq);
    if (rc) {
        mpi_errno = MPIDI_PME_error_from_status(rc, MPIDI_PME_world_rank_of(am->peer),
                                                "rendezvous receive");
        goto fn_fail;
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

MPIDIG_recv_data_copy_cb MPIDI_PME_am_get_data_copy_cb(uint32_t attr)
{
    return rndv_accept;
}

int MPIDI_PME_handle_rts(struct pme_event *ev)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *rreq = NULL;
    uint64_t scratch[MPIDI_PME_AM_HDR_FLOOR / 8];
    MPIDI_PME_am_parsed_t msg;

    if (parse(ev, scratch, &msg) || msg.kind != MPIDI_PME_KIND_AM)
        goto discard;

    uint32_t attr = MPIDIG_AM_ATTR__IS_ASYNC | MPIDIG_AM_ATTR__IS_RNDV;
    MPIDIG_AM_ATTR_SET_VCIS(attr, msg.src_vci, msg.dst_vci);
    int hold = updates_window(msg.handler_id);
    if (hold)
        pme_rma_exclusive(g->ep, 1);
    mpi_errno = MPIDIG_global.target_msg_cbs[msg.handler_id] ((void *) msg.am_hdr, NULL,
                                                             (MPI_Aint) ev->total, attr, &rreq);
    if (hold)
        pme_rma_exclusive(g->ep, 0);
    if (mpi_errno || !rreq)
        goto discard;

    MPIDI_PME_am_request_t *am = &MPIDI_PME_AMREQ(rreq);
    am->rndv = ev->rndv;
    am->peer = ev->peer;
    am->total = ev->total;
    am->flags |= MPIDI_PME_AMREQ_RNDV_OFFER | (hold ? MPIDI_PME_AMREQ_ACC : 0);
    /* A matched receive or an RMA target knows its buffer now; an unexpected message
     * waits for its receive, which calls rndv_accept through data_copy_cb. */
    if (MPIDIG_recv_initialized(rreq))
        mpi_errno = rndv_accept(rreq);
    return mpi_errno;

  discard:
    pme_rndv_discard(g->ep, ev->rndv);
    return mpi_errno;
}

int MPIDI_PME_handle_recv_done(struct pme_event *ev)
{
    MPIR_Request *rreq = ev->ctx;
    MPIDI_PME_am_request_t *am = &MPIDI_PME_AMREQ(rreq);
    MPI_Aint got = (MPI_Aint) ev->data_len;

    if (am->flags & MPIDI_PME_AMREQ_PACKED) {
        MPI_Aint unpacked = 0;
        if (got > 0)
            MPIDI_PME_TYPEREP_UNPACK(am->pack_buf, got, MPIDIG_REQUEST(rreq, buffer),
                                     MPIDIG_REQUEST(rreq, count), MPIDIG_REQUEST(rreq, datatype),
                                     0, &unpacked);
        if (unpacked < got && !rreq->status.MPI_ERROR)
            rreq->status.MPI_ERROR = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                          __func__, __LINE__, MPI_ERR_TYPE,
                                                          "**dtypemismatch", 0);
        got = unpacked;
        MPL_free(am->pack_buf);
        am->pack_buf = NULL;
        am->flags &= ~MPIDI_PME_AMREQ_PACKED;
    }
    MPIR_STATUS_SET_COUNT(rreq->status, got);
    if (ev->status == PME_ERR_TRUNC) {
        if (!rreq->status.MPI_ERROR)
            rreq->status.MPI_ERROR =
                MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                     MPI_ERR_TRUNCATE, "**truncate", "**truncate %d %d %d %d",
                                     rreq->status.MPI_SOURCE, rreq->status.MPI_TAG, (int) got,
                                     (int) am->total);
    } else if (ev->status != PME_OK) {
        int rank = MPIDI_PME_world_rank_of(ev->peer);
        rreq->status.MPI_ERROR = MPIDI_PME_error_from_status(ev->status, rank,
                                                             "rendezvous receive");
    }
    int hold = am->flags & MPIDI_PME_AMREQ_ACC;
    if (hold)
        pme_rma_exclusive(MPIDI_PME_global.ep, 1);
    int mpi_errno = MPIDIG_REQUEST(rreq, req->target_cmpl_cb) (rreq);
    if (hold)
        pme_rma_exclusive(MPIDI_PME_global.ep, 0);
    return mpi_errno;
}

int MPIDI_PME_handle_send_done(struct pme_event *ev)
{
    MPIR_Request *sreq = ev->ctx;
    if (!sreq)
        return MPI_SUCCESS;     /* a header-only or raw message that went by rendezvous */
    if (ev->status != PME_OK)
        sreq->status.MPI_ERROR = MPIDI_PME_error_from_status(ev->status,
                                                             MPIDI_PME_world_rank_of(ev->peer),
                                                             "send");
    return MPIDI_PME_origin_done(sreq);
}
