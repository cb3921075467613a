// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - one-sided operations of native windows: puts and gets of contiguous data,
 * and accumulates, fetch-and-ops and compare-and-swaps of predefined types on
 * contiguous data, are PME requests the target acts on when they arrive. The rest
 * (derived datatypes that are not contiguous, pair types such as MPI_DOUBLE_INT,
 * MINLOC/MAXLOC and user operations, fetching accumulates larger than a frame) go
 * through MPIDIG, with the window's lock taken first.
 *
 * Accumulates stay atomic: the target's PME acts on one request at a time (its
 * caller's progress or its liveness helper, under the endpoint's lock), and MPIDIG's
 * accumulates are done with the helper kept out (am.c, and here for our own window).
 * An accumulate of PME's follows MPIDIG's earlier ones to the same target only once
 * those are done, so that accumulates of one origin keep their order.
 *
 * Request-based operations are done the same way and completed at once by waiting for
 * the target's acknowledgement (the request is complete when returned).
 */
#include "mpidimpl.h"
#include "pme_rma.h"

/* ---- what PME does ---- */

static MPI_Datatype basic_of(MPI_Datatype t)
{
    MPI_Datatype b = t;
    if (!HANDLE_IS_BUILTIN(t))
        MPIR_Datatype_get_basic_type(t, b);
    return b;
}

/* PME's element type of a predefined type, -1 if PME does not compute on it. */
static int dtype_of(MPI_Datatype t)
{
    if (t == MPI_INT8_T || t == MPI_SIGNED_CHAR)
        return PME_DT_I8;
    if (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR || t == MPI_BYTE)
        return PME_DT_U8;
    if (t == MPI_SHORT || t == MPI_INT16_T)
        return PME_DT_I16;
    if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T)
        return PME_DT_U16;
    if (t == MPI_INT || t == MPI_INT32_T)
        return PME_DT_I32;
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T)
        return PME_DT_U32;
    if (t == MPI_LONG)
        return sizeof(long) == 8 ? PME_DT_I64 : PME_DT_I32;
    if (t == MPI_UNSIGNED_LONG)
        return sizeof(long) == 8 ? PME_DT_U64 : PME_DT_U32;
    if (t == MPI_LONG_LONG_INT || t == MPI_INT64_T || (sizeof(MPI_Aint) == 8 && t == MPI_AINT))
        return PME_DT_I64;
    if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T)
        return PME_DT_U64;
    if (t == MPI_FLOAT)
        return PME_DT_F32;
    if (t == MPI_DOUBLE)
        return PME_DT_F64;
    return -1;
}

static int aop_of(MPI_Op op)
{
    static const struct {
        MPI_Op op;
        int aop;
    } map[] = {
        {MPI_REPLACE, PME_AOP_REPLACE}, {MPI_NO_OP, PME_AOP_NO_OP}, {MPI_SUM, PME_AOP_SUM},
        {MPI_PROD, PME_AOP_PROD}, {MPI_MAX, PME_AOP_MAX}, {MPI_MIN, PME_AOP_MIN},
        {MPI_LAND, PME_AOP_LAND}, {MPI_LOR, PME_AOP_LOR}, {MPI_LXOR, PME_AOP_LXOR},
        {MPI_BAND, PME_AOP_BAND}, {MPI_BOR, PME_AOP_BOR}, {MPI_BXOR, PME_AOP_BXOR},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (map[i].op == op)
            return map[i].aop;
    return -1;
}

/* PME's element type for an accumulate of op on elements of type t, -1 when MPIDIG does
 * it (and, for a combination MPI forbids, raises the error). */
static int acc_dtype(MPI_Datatype t, MPI_Op op, int *aop)
{
    int dt = dtype_of(t);
    *aop = aop_of(op);
    if (dt < 0 || *aop < 0)
        return -1;
    if ((dt == PME_DT_F32 || dt == PME_DT_F64) && *aop > PME_AOP_MIN)
        return -1;
    if (t == MPI_BYTE && *aop >= PME_AOP_SUM && *aop <= PME_AOP_LXOR)
        return -1;
    return dt;
}

/* ---- the steps every native operation takes ---- */

typedef struct {
    MPIDI_PME_rtarget_t *t;
    uint64_t off;
    unsigned flags;
} MPIDI_PME_rop_t;

/* Where bytes at disp (+ lb) lie in rank's window, checked against its size, and the
 * lock the operation carries (payload: its bytes). */
static int begin(MPIR_Win * win, int rank, MPI_Aint disp, MPI_Aint lb, size_t bytes,
                 size_t payload, MPIDI_PME_rop_t * op)
{
    op->t = &MPIDI_PME_RWIN(win)->t[rank];
    MPI_Aint off = disp * op->t->disp_unit + lb;
    if (off < 0 || off > op->t->size || (MPI_Aint) bytes > op->t->size - off)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_RMA_RANGE, "**rmarange", 0);
    op->off = (uint64_t) off;
    return MPIDI_PME_rma_op_flags(win, rank, payload, &op->flags);
}

static int issued(int rc, const MPIDI_PME_rop_t * op)
{
    if (rc == PME_OK)
        return MPI_SUCCESS;
    return MPIDI_PME_error_from_status(rc, MPIDI_PME_world_rank_of(op->t->peer),
                                       "one-sided operation");
}

/* Accumulates of one origin to a target keep their order: MPIDIG's first. */
static int after_mpidig_accs(MPIR_Win * win, int rank)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDIG_win_target_t *mt = MPIDIG_win_target_find(win, rank);
    while (!mpi_errno && ((mt && MPIR_cc_get(mt->remote_acc_cmpl_cnts)) ||
                          MPIR_cc_get(MPIDIG_WIN(win, remote_acc_cmpl_cnts))))
        mpi_errno = MPID_Progress_test(NULL);
    return mpi_errno;
}

/* ---- puts and gets ---- */

/* A put (get: 0) or a get, done by PME (*done) when both sides are contiguous. */
static int xfer_native(int get, void *o, MPIDI_PME_count_t oc, MPI_Datatype odt, int rank,
                       MPI_Aint disp, MPIDI_PME_count_t tc, MPI_Datatype tdt, MPIR_Win * win,
                       int *done)
{
    int o_contig, t_contig;
    size_t o_bytes, t_bytes;
    MPI_Aint o_lb, t_lb;
    MPIDI_PME_rop_t op;
    MPIDI_Datatype_check_origin_target_contig_size_lb(odt, tdt, oc, tc, o_contig, t_contig,
                                                      o_bytes, t_bytes, o_lb, t_lb);
    (void) t_bytes;             /* MPI requires the same type signature: o_bytes */
    *done = o_contig && t_contig;
    if (!*done || !o_bytes)
        return MPI_SUCCESS;
    /* A get's request is one frame whatever the size: it may always carry the lock. */
    int mpi_errno = begin(win, rank, disp, t_lb, o_bytes, get ? 0 : o_bytes, &op);
    if (mpi_errno)
        return mpi_errno;
    void *buf = MPIR_get_contig_ptr(o, o_lb);
    pme_ep_t *ep = MPIDI_PME_global.ep;
    return issued(get ? pme_rma_get(ep, op.t->peer, op.t->key, op.off, buf, o_bytes, op.flags)
                  : pme_rma_put(ep, op.t->peer, op.t->key, op.off, buf, o_bytes, op.flags), &op);
}

/* ---- accumulates ---- */

/* Accumulate (result NULL) or get-accumulate: done by PME (*done) when the window's
 * accumulates are PME's, every buffer is contiguous and of one predefined type, and a
 * fetching one fits one frame. */
static int acc_native(const void *o, MPIDI_PME_count_t oc, MPI_Datatype odt, void *r,
                      MPIDI_PME_count_t rc, MPI_Datatype rdt, int rank, MPI_Aint disp,
                      MPIDI_PME_count_t tc, MPI_Datatype tdt, MPI_Op mop, MPIR_Win * win, int *done)
{
    MPIDI_PME_rwin_t *rw = MPIDI_PME_RWIN(win);
    int contig, aop, mpi_errno;
    size_t t_bytes, bytes;
    MPI_Aint t_lb, o_lb = 0, r_lb = 0;
    MPIDI_PME_rop_t op;

    *done = 0;
    int dt = acc_dtype(basic_of(tdt), mop, &aop);
    if (!rw->native_acc || dt < 0)
        return MPI_SUCCESS;
    MPIDI_Datatype_check_contig_size_lb(tdt, tc, contig, t_bytes, t_lb);
    if (!contig)
        return MPI_SUCCESS;
    if (mop != MPI_NO_OP) {
        MPIDI_Datatype_check_contig_size_lb(odt, oc, contig, bytes, o_lb);
        if (!contig || bytes != t_bytes || basic_of(odt) != basic_of(tdt))
            return MPI_SUCCESS;
    }
    if (r) {
        MPIDI_Datatype_check_contig_size_lb(rdt, rc, contig, bytes, r_lb);
        MPIDI_PME_rtarget_t *t = &rw->t[rank];
        if (!contig || bytes != t_bytes || basic_of(rdt) != basic_of(tdt) ||
            (t->peer != PME_PEER_SELF &&
             t_bytes > pme_rma_frame_room(MPIDI_PME_global.ep, t->peer)))
            return MPI_SUCCESS;
    }
    *done = 1;
    if (!t_bytes)
        return MPI_SUCCESS;
    mpi_errno = after_mpidig_accs(win, rank);
    if (!mpi_errno)
        mpi_errno = begin(win, rank, disp, t_lb, t_bytes, t_bytes, &op);
    if (mpi_errno)
        return mpi_errno;
    const void *src = mop == MPI_NO_OP ? NULL : MPIR_get_contig_ptr(o, o_lb);
    return issued(pme_rma_acc(MPIDI_PME_global.ep, op.t->peer, op.t->key, op.off, src,
                              r ? MPIR_get_contig_ptr(r, r_lb) : NULL, t_bytes, aop, dt,
                              op.flags), &op);
}

/* An accumulate on our own window that PME does not do, when PME does the others: done
 * here, with the liveness helper kept out (it may be acting on a peer's accumulate). */
static int acc_self(const void *o, MPIDI_PME_count_t oc, MPI_Datatype odt, void *r,
                    MPIDI_PME_count_t rc, MPI_Datatype rdt, MPI_Aint disp, MPIDI_PME_count_t tc,
                    MPI_Datatype tdt, MPI_Op op, MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    void *target = (char *) win->base + disp * win->disp_unit;
    void *packed = NULL;
    pme_rma_exclusive(MPIDI_PME_global.ep, 1);
    if (r)
        mpi_errno = MPIR_Localcopy(target, tc, tdt, r, rc, rdt);
    if (!mpi_errno && op != MPI_NO_OP) {
        MPI_Aint bytes, done;
        MPIR_Datatype_get_size_macro(odt, bytes);
        bytes *= oc;
        MPI_Datatype basic = basic_of(odt);
        MPI_Aint esize;
        MPIR_Datatype_get_size_macro(basic, esize);
        packed = MPL_malloc(bytes ? bytes : 1, MPL_MEM_RMA);
        if (!packed)
            mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
                                             __LINE__, MPI_ERR_OTHER, "**nomem", 0);
        if (!mpi_errno)
            mpi_errno = MPIDI_PME_TYPEREP_PACK(o, oc, odt, 0, packed, bytes, &done);
        if (!mpi_errno && esize)
            mpi_errno = MPIR_Typerep_op(packed, bytes / esize, basic, target, tc, tdt, op, true,
                                        -1);
    }
    pme_rma_exclusive(MPIDI_PME_global.ep, 0);
    MPL_free(packed);
    return mpi_errno;
}

/* What MPIDIG does needs the lock held at the target, and comes after PME's earlier
 * operations toward it: PME may still hold some back (it asks a peer for a bounded
 * number of answers at a time), and MPIDIG's messages would overtake them (accumulates
 * must keep their order). */
static int mpidig_ready(MPIR_Win * win, int rank)
{
    int mpi_errno = MPIDI_PME_rma_ensure_locked(win, rank);
    if (!mpi_errno)
        mpi_errno = MPIDI_PME_rma_wait(win, rank);
    return mpi_errno;
}

static int is_self(MPIR_Win * win, int rank)
{
    return MPIDI_PME_RWIN(win)->t[rank].peer == PME_PEER_SELF;
}

/* A request that is complete: the operation it stands for was waited for. */
static int completed(MPIR_Win * win, int rank, MPIR_Request ** request)
{
    int mpi_errno = MPIDI_PME_rma_wait(win, rank);
    if (mpi_errno)
        return mpi_errno;
    *request = MPIR_Request_create_complete(MPIR_REQUEST_KIND__RMA);
    if (!*request)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPIX_ERR_NOREQ, "**nomemreq", 0);
    return MPI_SUCCESS;
}

/* After PME's try at an operation: when PME did it (done), its request is complete once
 * the target acknowledged; otherwise MPIDIG's turn is made ready. */
static int native_or_ready(MPIR_Win * win, int rank, int done, int mpi_errno,
                           MPIR_Request ** request)
{
    if (!done)
        return mpi_errno ? mpi_errno : mpidig_ready(win, rank);
    if (request && !mpi_errno)
        mpi_errno = completed(win, rank, request);
    return mpi_errno;
}

/* ---- the entry points ---- */

/* Put or get, with or without a request: PME's on a native window when it can, else
 * MPIDIG's. */
static int put_or_get(int get, void *o, MPIDI_PME_count_t oc, MPI_Datatype odt, int rank,
                      MPI_Aint disp, MPIDI_PME_count_t tc, MPI_Datatype tdt, MPIR_Win * win,
                      MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS, done = 0;
    if (MPIDI_PME_RWIN(win)) {
        MPIDIG_RMA_OP_CHECK_SYNC(rank, win);
        mpi_errno = xfer_native(get, o, oc, odt, rank, disp, tc, tdt, win, &done);
        mpi_errno = native_or_ready(win, rank, done, mpi_errno, request);
        if (done || mpi_errno)
            return mpi_errno;
    }
    if (get && request)
        return MPIDIG_mpi_rget(o, oc, odt, rank, disp, tc, tdt, win, request);
    if (get)
        return MPIDIG_mpi_get(o, oc, odt, rank, disp, tc, tdt, win);
    if (request)
        return MPIDIG_mpi_rput(o, oc, odt, rank, disp, tc, tdt, win, request);
    return MPIDIG_mpi_put(o, oc, odt, rank, disp, tc, tdt, win);
  fn_fail:
    return mpi_errno;
}

int MPIDI_PME_mpi_put(const void *origin_addr, MPIDI_PME_count_t origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr)
{
    return put_or_get(0, (void *) origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win, NULL);
}

int MPIDI_PME_mpi_rput(const void *origin_addr, MPIDI_PME_count_t origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                       MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr, MPIR_Request ** request)
{
    return put_or_get(0, (void *) origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win, request);
}

int MPIDI_PME_mpi_get(void *origin_addr, MPIDI_PME_count_t origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr)
{
    return put_or_get(1, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, NULL);
}

int MPIDI_PME_mpi_rget(void *origin_addr, MPIDI_PME_count_t origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPIDI_PME_count_t target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                       MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr, MPIR_Request ** request)
{
    return put_or_get(1, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, request);
}

/* Accumulate and get-accumulate, with or without a request: PME's on a native window
 * when it can, else MPIDIG's. */
static int accumulate(const void *o, MPIDI_PME_count_t oc, MPI_Datatype odt, void *r,
                      MPIDI_PME_count_t rc, MPI_Datatype rdt, int rank, MPI_Aint disp,
                      MPIDI_PME_count_t tc, MPI_Datatype tdt, MPI_Op op, MPIR_Win * win,
                      MPIR_Request ** request)
{
    int mpi_errno = MPI_SUCCESS, done = 0;
    if (MPIDI_PME_RWIN(win)) {
        MPIDIG_RMA_OP_CHECK_SYNC(rank, win);
        mpi_errno = acc_native(o, oc, odt, r, rc, rdt, rank, disp, tc, tdt, op, win, &done);
        if (!done && MPIDI_PME_RWIN(win)->native_acc && is_self(win, rank)) {
            mpi_errno = acc_self(o, oc, odt, r, rc, rdt, disp, tc, tdt, op, win);
            done = 1;
        }
        mpi_errno = native_or_ready(win, rank, done, mpi_errno, request);
        if (done || mpi_errno)
            return mpi_errno;
    }
    if (r && request)
        return MPIDIG_mpi_rget_accumulate(o, oc, odt, r, rc, rdt, rank, disp, tc, tdt, op, win,
                                          request);
    if (r)
        return MPIDIG_mpi_get_accumulate(o, oc, odt, r, rc, rdt, rank, disp, tc, tdt, op, win);
    if (request)
        return MPIDIG_mpi_raccumulate(o, oc, odt, rank, disp, tc, tdt, op, win, request);
    return MPIDIG_mpi_accumulate(o, oc, odt, rank, disp, tc, tdt, op, win);
  fn_fail:
    return mpi_errno;
}

int MPIDI_PME_mpi_accumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                             MPIDI_PME_count_t target_count, MPI_Datatype target_datatype,
                             MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                             MPIDI_winattr_t winattr)
{
    return accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win, NULL);
}

int MPIDI_PME_mpi_raccumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                              MPI_Datatype origin_datatype, int target_rank,
                              MPI_Aint target_disp, MPIDI_PME_count_t target_count,
                              MPI_Datatype target_datatype, MPI_Op op, MPIR_Win * win,
                              MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr,
                              MPIR_Request ** request)
{
    return accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win,
                      request);
}

int MPIDI_PME_mpi_get_accumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                                 MPI_Datatype origin_datatype, void *result_addr,
                                 MPIDI_PME_count_t result_count, MPI_Datatype result_datatype,
                                 int target_rank, MPI_Aint target_disp,
                                 MPIDI_PME_count_t target_count, MPI_Datatype target_datatype,
                                 MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                                 MPIDI_winattr_t winattr)
{
    return accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype,
                      op, win, NULL);
}

int MPIDI_PME_mpi_rget_accumulate(const void *origin_addr, MPIDI_PME_count_t origin_count,
                                  MPI_Datatype origin_datatype, void *result_addr,
                                  MPIDI_PME_count_t result_count, MPI_Datatype result_datatype,
                                  int target_rank, MPI_Aint target_disp,
                                  MPIDI_PME_count_t target_count, MPI_Datatype target_datatype,
                                  MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                                  MPIDI_winattr_t winattr, MPIR_Request ** request)
{
    return accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype,
                      op, win, request);
}

int MPIDI_PME_mpi_fetch_and_op(const void *origin_addr, void *result_addr,
                               MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                               MPI_Op op, MPIR_Win * win, MPIDI_av_entry_t * addr,
                               MPIDI_winattr_t winattr)
{
    if (!MPIDI_PME_RWIN(win))   /* MPIDIG's own fetch-and-op message, not a get-accumulate */
        return MPIDIG_mpi_fetch_and_op(origin_addr, result_addr, datatype, target_rank,
                                       target_disp, op, win);
    return accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                      target_disp, 1, datatype, op, win, NULL);
}

int MPIDI_PME_mpi_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                   void *result_addr, MPI_Datatype datatype, int target_rank,
                                   MPI_Aint target_disp, MPIR_Win * win,
                                   MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr)
{
    MPIDI_PME_rwin_t *rw = MPIDI_PME_RWIN(win);
    int mpi_errno = MPI_SUCCESS, aop;
    MPIDI_PME_rop_t op;
    if (!rw)
        return MPIDIG_mpi_compare_and_swap(origin_addr, compare_addr, result_addr, datatype,
                                           target_rank, target_disp, win);
    MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
    int dt = acc_dtype(datatype, MPI_BAND, &aop);       /* the integer types */
    size_t size = MPIR_Datatype_get_basic_size(datatype);
    if (rw->native_acc && dt >= 0) {
        mpi_errno = after_mpidig_accs(win, target_rank);
        if (!mpi_errno)
            mpi_errno = begin(win, target_rank, target_disp, 0, size, 2 * size, &op);
        if (!mpi_errno)
            mpi_errno = issued(pme_rma_cas(MPIDI_PME_global.ep, op.t->peer, op.t->key, op.off,
                                           compare_addr, origin_addr, result_addr, dt,
                                           op.flags), &op);
    } else if (rw->native_acc && is_self(win, target_rank)) {
        /* A type PME does not compare (a logical, a character): here, helper kept out. */
        char *target = (char *) win->base + target_disp * win->disp_unit;
        pme_rma_exclusive(MPIDI_PME_global.ep, 1);
        memcpy(result_addr, target, size);
        if (!memcmp(target, compare_addr, size))
            memcpy(target, origin_addr, size);
        pme_rma_exclusive(MPIDI_PME_global.ep, 0);
    } else if (!(mpi_errno = mpidig_ready(win, target_rank))) {
        mpi_errno = MPIDIG_mpi_compare_and_swap(origin_addr, compare_addr, result_addr,
                                                datatype, target_rank, target_disp, win);
    }
  fn_fail:
    return mpi_errno;
}
