// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_target.c - the target of one-sided communication: requests are judged and acted
 * on as they arrive, by whoever runs the progress pass (the caller, or the liveness
 * helper while the caller computes), so the target's process need not take part.
 *
 * Every request is checked before anything happens: the window must be exposed, the
 * bytes it touches must lie inside it (each frame on its own, and the whole operation
 * at its first frame), the operation, element type and frame count must make sense. A
 * refused request changes nothing, is counted (rma_refused), and is answered NAK so
 * that its origin fails it; the remaining frames of a refused operation are dropped.
 *
 * The link acknowledges a frame only after deliver() returned, that is after the
 * request was acted on: an origin counts puts and accumulates complete by that
 * acknowledgement alone. Requests that take the window's lock wait in the lock's queue
 * when it is taken, with their payload, and are acted on (and answered) when granted.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "rma.h"
#include "rma_acc.h"

_Static_assert(PME_RMA_F_SHARED == PME_RMA_LOCK_SHARED && PME_RMA_F_EXCL == PME_RMA_LOCK_EXCL,
               "lock flags on the wire are the lock types");

/* ---- judging a request ---- */

static unsigned lock_type(const struct pme_wire_rma *r)
{
    return r->flags & PME_RMA_F_EXCL ? PME_RMA_LOCK_EXCL
         : r->flags & PME_RMA_F_SHARED ? PME_RMA_LOCK_SHARED : 0;
}

/* 0, or the PME_RMA_E_* that refuses the frame: r's frame carries plen bytes. */
static int judge(const struct pme_rwin *w, const struct pme_wire_rma *r, uint64_t plen,
                 bool first, bool last)
{
    uint64_t off = be64toh(r->offset), len = be64toh(r->len);
    size_t dsize = pme_dtype_size(r->dtype);
    bool one_frame = first && last;
    unsigned locks = r->flags & (PME_RMA_F_SHARED | PME_RMA_F_EXCL);
    if (r->flags & ~(PME_RMA_F_SHARED | PME_RMA_F_EXCL) || locks == 3)
        return PME_RMA_E_OP;
    if (locks && !one_frame)
        return PME_RMA_E_OP;
    switch (r->op) {
    case PME_RMA_ACC:
        if (!pme_acc_valid(r->aop, r->dtype) || plen % dsize)
            return PME_RMA_E_OP;
        /* fall through */
    case PME_RMA_PUT:
        if (plen > len || (last && first && plen != len))
            return PME_RMA_E_OP;
        if (!pme_rwin_fits(w, off, plen) || (first && !pme_rwin_fits(w, off, len)))
            return PME_RMA_E_RANGE;
        return 0;
    case PME_RMA_GET:
        if (!one_frame || plen)
            return PME_RMA_E_OP;
        return pme_rwin_fits(w, off, len) ? 0 : PME_RMA_E_RANGE;
    case PME_RMA_FETCH:
        if (!one_frame || !len || plen != len || !pme_acc_valid(r->aop, r->dtype) ||
            len % dsize)
            return PME_RMA_E_OP;
        return pme_rwin_fits(w, off, len) ? 0 : PME_RMA_E_RANGE;
    case PME_RMA_CAS:
        if (!one_frame || !dsize || len != dsize || plen != 2 * dsize)
            return PME_RMA_E_OP;
        return pme_rwin_fits(w, off, len) ? 0 : PME_RMA_E_RANGE;
    case PME_RMA_LOCK:
        return one_frame && !plen && locks ? 0 : PME_RMA_E_OP;
    case PME_RMA_UNLOCK:
        return one_frame && !plen && !locks ? 0 : PME_RMA_E_OP;
    default:
        return PME_RMA_E_OP;
    }
}

/* ---- answers ---- */

static void send_answer(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m, unsigned role)
{
    m->send_id = PME_RMA_ITEM_ANSWER | role;
    pme_peer_get(ep, idx)->rma_answers++;
    pme_rma_enqueue(ep, idx, m);
    pme_peer_mark_dirty(ep, idx); /* goes after the batch, with the acknowledgements */
}

static struct pme_wire_rma answer_to(const struct pme_wire_rma *req, unsigned op)
{
    struct pme_wire_rma a;
    memset(&a, 0, sizeof(a));
    a.op = (uint8_t)op;
    a.key = req->key;
    a.req_id = req->req_id;
    a.len = req->len;
    return a;
}

/* A header-only answer (DONE, NAK). */
static void answer(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rma *req,
                   unsigned op, unsigned status)
{
    struct pme_wire_rma a = answer_to(req, op);
    a.status = htonl(status);
    a.aop = req->op;
    struct pme_txmsg *m = pme_rma_item(ep, &a, NULL, 0, 0);
    if (!m) {
        pme_ep_set_error(ep, "out of memory answering a one-sided request");
        return;
    }
    send_answer(ep, idx, m, 0);
}

static void refuse(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rma *r,
                   unsigned why, uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    ep->ctr->rma_refused++;
    if ((flags & PME_F_FIRST) && !(flags & PME_F_LAST))
        p->rma_skip = true;
    /* One NAK per operation (its first frame), or for a stray last frame. */
    if (flags & (PME_F_FIRST | PME_F_LAST))
        answer(ep, idx, r, PME_RMA_NAK, why);
}

void pme_rma_refuse(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rma *r,
                    unsigned why)
{
    refuse(ep, idx, r, why, PME_F_FIRST | PME_F_LAST);
}

/* ---- acting on a request that passed judge() and holds the lock it asked for ---- */

static void act(struct pme_ep *ep, pme_peer_t idx, struct pme_rwin *w,
                const struct pme_wire_rma *r, const uint8_t *payload, size_t plen)
{
    /* (a window of 0 bytes may have no base: only empty requests reach it) */
    uint8_t *at = w->base ? w->base + be64toh(r->offset) : NULL;
    uint64_t len = be64toh(r->len);
    size_t dsize = pme_dtype_size(r->dtype);
    struct pme_txmsg *m = NULL;
    struct pme_wire_rma a = answer_to(r, PME_RMA_DATA);
    ep->ctr->rma_in++;
    switch (r->op) {
    case PME_RMA_PUT:
        if (plen)
            memcpy(at, payload, plen);
        break;
    case PME_RMA_ACC:
        if (plen)
            pme_acc_apply(r->aop, r->dtype, at, payload, plen / dsize, NULL);
        break;
    case PME_RMA_GET: {
        if (len <= PME_RMA_GET_COPY_MAX) {
            /* Copied now, as the lock allows: the answer may ride in a bundle. */
            m = pme_rma_item(ep, &a, NULL, 0, len);
            if (m) {
                if (len)
                    memcpy(pme_rma_item_inline(m), at, len);
                send_answer(ep, idx, m, 0);
            }
            break;
        }
        /* Streamed from the window itself: it stays until the answer is acknowledged. */
        struct iovec v = {at, len};
        m = pme_rma_item(ep, &a, &v, 1, 0);
        if (m) {
            m->owner = w;
            bool holds = pme_rwin_reader_start(w, idx);
            send_answer(ep, idx, m, PME_RMA_ITEM_READS | (holds ? PME_RMA_ITEM_HOLDS : 0));
        }
        break;
    }
    case PME_RMA_FETCH:
        m = pme_rma_item(ep, &a, NULL, 0, len);
        if (m) {
            pme_acc_apply(r->aop, r->dtype, at, payload, len / dsize, pme_rma_item_inline(m));
            send_answer(ep, idx, m, 0);
        }
        break;
    case PME_RMA_CAS:
        m = pme_rma_item(ep, &a, NULL, 0, dsize);
        if (m) {
            pme_acc_cas(r->dtype, at, payload, payload + dsize, pme_rma_item_inline(m));
            send_answer(ep, idx, m, 0);
        }
        break;
    default: /* LOCK */
        break;
    }
    if ((r->op == PME_RMA_GET || r->op == PME_RMA_FETCH || r->op == PME_RMA_CAS) && !m) {
        pme_ep_set_error(ep, "out of memory answering a one-sided request");
        return;
    }
    if (r->op == PME_RMA_LOCK || (lock_type(r) && !m))
        answer(ep, idx, r, PME_RMA_DONE, 0);
}

/* The lock of w was released: grant it on, acting on what each grant carried. */
static void grant_waiters(struct pme_ep *ep, struct pme_rwin *w)
{
    struct pme_rlock_wait *q;
    while ((q = pme_rwin_grant_next(w))) {
        if (q->peer == PME_PEER_SELF) {
            ep->rma_self_pending--;
        } else {
            struct pme_wire_rma r;
            memcpy(&r, q->req, sizeof(r));
            act(ep, q->peer, w, &r, q->req + sizeof(r), q->len - sizeof(r));
        }
        if (q->unlock_after)
            pme_rwin_unlock(w, q->peer); /* released now, or once its get is answered */
        free(q);
    }
}

static void on_unlock(struct pme_ep *ep, pme_peer_t idx, struct pme_rwin *w,
                      const struct pme_wire_rma *r, uint16_t flags)
{
    int held = pme_rwin_unlock(w, idx);
    if (held != PME_RWIN_NOT_HELD) {
        ep->ctr->rma_in++;
        if (held == PME_RWIN_RELEASED)
            grant_waiters(ep, w);
        return;
    }
    /* Its lock request (and what rode on it) still waits: release once that is done. */
    struct pme_rlock_wait *q = pme_rwin_waiting(w, idx);
    if (q)
        q->unlock_after = true;
    else
        refuse(ep, idx, r, PME_RMA_E_NOLOCK, flags);
}

int pme_rma_on_request(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len,
                       uint16_t flags)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_wire_rma r;
    if (len < sizeof(r)) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    memcpy(&r, sub, sizeof(r));
    const uint8_t *payload = sub + sizeof(r);
    size_t plen = len - sizeof(r);
    if (!(flags & PME_F_FIRST) && p->rma_skip) {
        ep->ctr->rma_refused++;
        p->rma_skip = !(flags & PME_F_LAST);
        return 0;
    }
    p->rma_skip = false;
    /* Before anything happens: room for the answer. */
    if (pme_rma_answered(&r) && p->rma_answers >= PME_RMA_MAX_ANSWERS)
        return PME_RX_NO_BUFFER;
    struct pme_rwin *w = pme_rwin_find(ep, ntohl(r.key));
    int why = !w || w->withdrawn ? PME_RMA_E_NOWIN
                                 : judge(w, &r, plen, flags & PME_F_FIRST, flags & PME_F_LAST);
    if (why) {
        refuse(ep, idx, &r, (unsigned)why, flags);
        return 0;
    }
    if (r.op == PME_RMA_UNLOCK) {
        on_unlock(ep, idx, w, &r, flags);
        return 0;
    }
    unsigned type = lock_type(&r);
    if (type && !pme_rwin_try_lock(w, idx, type)) {
        /* Taken: the request waits with its payload (one frame at most). */
        return pme_rwin_wait(w, idx, type, sub, (uint32_t)len) ? 0 : PME_RX_NO_BUFFER;
    }
    act(ep, idx, w, &r, payload, plen);
    return 0;
}

/* ---- our own caller on our own windows ---- */

static int status_of(int why)
{
    return why == PME_RMA_E_RANGE ? PME_ERR_RANGE : why == PME_RMA_E_NOWIN ? PME_ERR_NOWIN
                                                                          : PME_ERR_INVAL;
}

int pme_rma_local(struct pme_ep *ep, const struct pme_wire_rma *r, const uint8_t *payload,
                  uint8_t *result)
{
    struct pme_rwin *w = pme_rwin_find(ep, ntohl(r->key));
    uint64_t len = be64toh(r->len);
    size_t dsize = pme_dtype_size(r->dtype);
    uint64_t plen = r->op == PME_RMA_PUT || r->op == PME_RMA_ACC || r->op == PME_RMA_FETCH ? len
                  : r->op == PME_RMA_CAS ? 2 * dsize : 0;
    int why = !w || w->withdrawn ? PME_RMA_E_NOWIN : judge(w, r, plen, true, true);
    if (why)
        return status_of(why);
    if (!len && r->op != PME_RMA_LOCK)
        return PME_OK;
    uint8_t *at = w->base + be64toh(r->offset);
    switch (r->op) {
    case PME_RMA_PUT:
        memcpy(at, payload, len);
        break;
    case PME_RMA_GET:
        memcpy(result, at, len);
        break;
    case PME_RMA_ACC:
    case PME_RMA_FETCH:
        pme_acc_apply(r->aop, r->dtype, at, payload, len / dsize, result);
        break;
    case PME_RMA_CAS:
        pme_acc_cas(r->dtype, at, payload, payload + dsize, result);
        break;
    case PME_RMA_LOCK:
        if (!pme_rwin_try_lock(w, PME_PEER_SELF, lock_type(r))) {
            if (!pme_rwin_wait(w, PME_PEER_SELF, lock_type(r), NULL, 0))
                return PME_ERR_NOMEM;
            ep->rma_self_pending++;
        }
        break;
    default:
        return PME_ERR_INVAL;
    }
    return PME_OK;
}

int pme_rma_local_unlock(struct pme_ep *ep, uint32_t key)
{
    struct pme_rwin *w = pme_rwin_find(ep, key);
    if (!w || w->withdrawn)
        return PME_ERR_NOWIN;
    int held = pme_rwin_unlock(w, PME_PEER_SELF);
    if (held == PME_RWIN_NOT_HELD)
        return PME_ERR_INVAL;
    if (held == PME_RWIN_RELEASED)
        grant_waiters(ep, w);
    return PME_OK;
}

/* An answer of ours was acknowledged (or its peer failed). */
void pme_rma_answer_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!(m->send_id & PME_RMA_ITEM_ANSWER))
        return;
    unsigned n = m->aux == PME_RMA_BUNDLE ? m->rma_answers : 1;
    p->rma_answers = p->rma_answers > n ? p->rma_answers - n : 0;
    struct pme_rwin *w = m->owner;
    if ((m->send_id & PME_RMA_ITEM_READS) &&
        pme_rwin_reader_done(w, idx, m->send_id & PME_RMA_ITEM_HOLDS))
        grant_waiters(ep, w);
}

/* ---- windows going away, peers failing ---- */

int pme_rma_do_withdraw(struct pme_ep *ep, uint32_t key)
{
    struct pme_rwin *w = pme_rwin_find(ep, key);
    if (!w)
        return PME_ERR_INVAL;
    w->withdrawn = true;
    if (w->readers)
        return PME_EAGAIN;
    /* Whoever still waits for its lock learns that the window is gone. */
    for (struct pme_rlock_wait *q = w->wait_head; q; q = q->next) {
        if (q->peer == PME_PEER_SELF) {
            ep->rma_self_pending--;
        } else {
            struct pme_wire_rma r;
            memcpy(&r, q->req, sizeof(r));
            answer(ep, q->peer, &r, PME_RMA_NAK, PME_RMA_E_NOWIN);
        }
    }
    pme_rwin_free(ep, w);
    return PME_OK;
}

struct fail_ctx {
    struct pme_ep *ep;
    pme_peer_t idx;
};

static void release_peer(void *ptr, void *arg)
{
    struct fail_ctx *c = arg;
    pme_rwin_forget_peer(ptr, c->idx);
    grant_waiters(c->ep, ptr);
}

/* A failed (or restarted) peer holds no lock any more and waits for none. */
void pme_rma_target_fail_peer(struct pme_ep *ep, pme_peer_t idx)
{
    struct fail_ctx c = {ep, idx};
    pme_peer_get(ep, idx)->rma_skip = false;
    pme_slots_each(&ep->rwins, release_peer, &c);
}

static void free_window(void *ptr, void *arg)
{
    pme_rwin_free(arg, ptr);
}

void pme_rma_free_windows(struct pme_ep *ep)
{
    pme_slots_each(&ep->rwins, free_window, ep);
    pme_slots_free(&ep->rwins);
}
