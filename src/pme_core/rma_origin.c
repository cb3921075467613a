// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_origin.c - the origin of one-sided communication: requests go out as queue items
 * of the peer's link, in order with everything else sent to it; each is counted in the
 * peer's rma_pending until it is complete. Puts, accumulates and unlocks are complete
 * when the link acknowledges their last frame (the target acknowledges only what it has
 * acted on); gets, fetching accumulates, compare-and-swaps, locks and the operations
 * that take a lock wait for their answer, which names them by req_id.
 *
 * A peer is asked at most PME_RMA_MAX_ASKING answers at a time: further requests wait
 * here, in order (what follows an operation must not overtake it: accumulates keep their
 * order, an unlock follows what it ends), and go as answers come in. Messages sent
 * meanwhile overtake them: a caller that needs a message to follow its one-sided
 * operations waits until pme_rma_pending says they are complete.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "rma.h"
#include "rma_acc.h"

static void note_failure(struct pme_peer *p, int status)
{
    if (status != PME_OK && p->rma_status == PME_OK)
        p->rma_status = (int16_t)status;
}

static void one_done(struct pme_peer *p, int status)
{
    if (p->rma_pending)
        p->rma_pending--;
    note_failure(p, status);
}

static int status_of_nak(uint32_t why)
{
    switch (why) {
    case PME_RMA_E_NOWIN: return PME_ERR_NOWIN;
    case PME_RMA_E_RANGE: return PME_ERR_RANGE;
    default: return PME_ERR_INVAL;
    }
}

/* The request an item of ours waits for an answer to; NULL: it is complete when
 * acknowledged. */
static struct pme_rreq *asks(struct pme_ep *ep, const struct pme_txmsg *m)
{
    uint32_t id = pme_rma_item_header(m)->req_id;
    return id ? pme_slots_get(&ep->rreqs, ntohl(id)) : NULL;
}

/* The peer's held requests: a ring through their next pointers, p->rma_held its last
 * (one pointer per peer). */
static struct pme_txmsg *held_first(const struct pme_peer *p)
{
    return p->rma_held ? p->rma_held->next : NULL;
}

static void held_append(struct pme_peer *p, struct pme_txmsg *m)
{
    m->next = p->rma_held ? p->rma_held->next : m;
    if (p->rma_held)
        p->rma_held->next = m;
    p->rma_held = m;
}

static struct pme_txmsg *held_take_first(struct pme_peer *p)
{
    struct pme_txmsg *m = held_first(p);
    if (m == p->rma_held)
        p->rma_held = NULL;
    else
        p->rma_held->next = m->next;
    m->next = NULL;
    return m;
}

/* Queue held requests on the link, in order, while the peer may be asked for more
 * answers. Returns whether any was queued (the caller pumps the peer). */
static bool send_held(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    bool queued = false;
    while (p->rma_held && p->tx_state != TX_FAILED) {
        struct pme_rreq *q = asks(ep, held_first(p));
        if (q && p->rma_asking >= PME_RMA_MAX_ASKING)
            break;
        struct pme_txmsg *m = held_take_first(p);
        if (q) {
            q->sent = true;
            p->rma_asking++;
        }
        pme_rma_enqueue(ep, idx, m);
        queued = true;
    }
    return queued;
}

static void complete(struct pme_ep *ep, struct pme_rreq *q, int status)
{
    pme_peer_t idx = q->peer;
    struct pme_peer *p = pme_peer_get(ep, idx);
    bool sent = q->sent;
    one_done(p, status);
    pme_slots_del(&ep->rreqs, q->id);
    free(q);
    if (sent && p->rma_asking)
        p->rma_asking--;
    if (sent && send_held(ep, idx))
        pme_peer_mark_dirty(ep, idx); /* they go after the batch */
}

/* The held requests end with status, unsent. */
static void fail_held(struct pme_ep *ep, pme_peer_t idx, int status)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    while (p->rma_held) {
        struct pme_txmsg *m = held_take_first(p);
        struct pme_rreq *q = asks(ep, m);
        if (q)
            complete(ep, q, status);
        pme_rma_request_done(ep, idx, m, status);
        pme_txmsg_free(ep, m);
    }
}

/* Requests answered with bytes (DATA), not DONE. */
static bool answers_with_data(unsigned op)
{
    return op == PME_RMA_GET || op == PME_RMA_FETCH || op == PME_RMA_CAS;
}

static int issue_item(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p,
                      const struct pme_wire_rma *r, const struct iovec *iov, int iovcnt,
                      uint8_t *dst);

int pme_rma_issue(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rma *r,
                  const struct iovec *iov, int iovcnt, uint8_t *dst)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p)
        return PME_ERR_INVAL;
    if (p->tx_state == TX_FAILED)
        return p->fail_status ? p->fail_status : PME_ERR_PEER_DEAD;
    if (p->tx_state == TX_OPEN && !(p->takes & PME_FEAT_RMA))
        return PME_ERR_NOTSUP;
    /* Requests that take the lock (they may wait at the target) and fetching ones go in
     * one frame. */
    size_t room = pme_rma_room(ep, idx), len = pme_iov_total(iov, iovcnt);
    bool one_frame = r->op == PME_RMA_FETCH || r->op == PME_RMA_CAS ||
                     (r->flags & (PME_RMA_F_SHARED | PME_RMA_F_EXCL));
    if (one_frame && len > room)
        return PME_ERR_INVAL;
    if (r->op != PME_RMA_ACC || len <= room || iovcnt != 1)
        return issue_item(ep, idx, p, r, iov, iovcnt, dst);
    /* An accumulate larger than a frame goes as accumulates of one frame each (room is a
     * multiple of 16 bytes: no element is cut). When a rail dies, its unacknowledged
     * items go again whole over another, and a target would combine a second time the
     * first frames of one it had taken in part. */
    struct pme_wire_rma part = *r;
    for (size_t off = 0; off < len; off += room) {
        size_t n = len - off < room ? len - off : room;
        struct iovec v = {(uint8_t *)iov[0].iov_base + off, n};
        part.offset = htobe64(be64toh(r->offset) + off);
        part.len = htobe64(n);
        int rc = issue_item(ep, idx, p, &part, &v, 1, NULL);
        if (rc)
            return rc;
    }
    return PME_OK;
}

/* One request, one queue item. */
static int issue_item(struct pme_ep *ep, pme_peer_t idx, struct pme_peer *p,
                      const struct pme_wire_rma *r, const struct iovec *iov, int iovcnt,
                      uint8_t *dst)
{
    struct pme_wire_rma t = *r;
    struct pme_rreq *q = NULL;
    if (pme_rma_answered(r)) {
        q = calloc(1, sizeof(*q));
        q->id = q ? pme_slots_put(&ep->rreqs, q) : 0;
        if (!q || !q->id) {
            free(q);
            return PME_ERR_NOMEM;
        }
        q->peer = idx;
        q->op = r->op;
        q->dst = dst;
        q->len = answers_with_data(r->op) ? be64toh(r->len) : 0;
        t.req_id = htonl(q->id);
    }
    struct pme_txmsg *m = pme_rma_item(ep, &t, iov, iovcnt, 0);
    if (!m) {
        if (q) {
            pme_slots_del(&ep->rreqs, q->id);
            free(q);
        }
        return PME_ERR_NOMEM;
    }
    m->send_id = q ? 0 : PME_RMA_ITEM_COUNTS;
    p->rma_pending++;
    held_append(p, m);
    if (send_held(ep, idx)) {
        ep->now = pme_now_ns();
        pme_link_pump(ep, idx);
    }
    return PME_OK;
}

int pme_rma_on_answer(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len)
{
    struct pme_wire_rma a;
    if (len < sizeof(a)) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    memcpy(&a, sub, sizeof(a));
    const uint8_t *payload = sub + sizeof(a);
    size_t plen = len - sizeof(a);
    uint32_t id = ntohl(a.req_id);
    if (a.op == PME_RMA_NAK && !id) {
        /* A request that is complete on acknowledgement was refused: its peer's next
         * look at the errors says so. */
        note_failure(pme_peer_get(ep, idx), status_of_nak(ntohl(a.status)));
        return 0;
    }
    struct pme_rreq *q = pme_slots_get(&ep->rreqs, id);
    if (!q || q->peer != idx) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    uint64_t off = be64toh(a.offset);
    switch (a.op) {
    case PME_RMA_DATA:
        if (!answers_with_data(q->op) || off != q->received || plen > q->len - off) {
            ep->ctr->drop_bad_header++;
            return 0;
        }
        if (plen)
            memcpy(q->dst + off, payload, plen);
        q->received += plen;
        if (q->received == q->len)
            complete(ep, q, PME_OK);
        return 0;
    case PME_RMA_DONE:
        if (answers_with_data(q->op)) {
            ep->ctr->drop_bad_header++;
            return 0;
        }
        complete(ep, q, PME_OK);
        return 0;
    case PME_RMA_NAK:
        complete(ep, q, status_of_nak(ntohl(a.status)));
        return 0;
    default:
        ep->ctr->drop_bad_header++;
        return 0;
    }
}

/* A request of ours was acknowledged (or its peer failed). */
void pme_rma_request_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m, int status)
{
    if (!(m->send_id & PME_RMA_ITEM_COUNTS))
        return;
    for (unsigned n = m->aux == PME_RMA_BUNDLE ? m->rma_counts : 1; n; n--)
        one_done(pme_peer_get(ep, idx), status);
}

struct fail_ctx {
    struct pme_ep *ep;
    pme_peer_t idx;
    int status;
};

static void fail_request(void *ptr, void *arg)
{
    struct fail_ctx *c = arg;
    struct pme_rreq *q = ptr;
    if (q->peer == c->idx)
        complete(c->ep, q, c->status);
}

/* The peer failed: its requests waiting for answers end with status (those complete on
 * acknowledgement end when the link purges their items). */
void pme_rma_origin_fail_peer(struct pme_ep *ep, pme_peer_t idx, int status)
{
    struct fail_ctx c = {ep, idx, status};
    fail_held(ep, idx, status);
    pme_slots_each(&ep->rreqs, fail_request, &c);
}

/* The peer's HELLO_ACK told what it takes. A peer without one-sided communication would
 * drop our requests and break the link: those queued before we knew fail instead. The
 * in-order items after them take their order numbers (none of them went out yet: the
 * receiver waits for every number in turn). */
void pme_rma_peer_known(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->takes & PME_FEAT_RMA)
        return;
    fail_held(ep, idx, PME_ERR_NOTSUP);
    struct pme_txmsg **tail, **cur, *last = NULL;
    struct pme_txmsg **pp = pme_link_ordered_queue(ep, idx, &tail, &cur);
    uint32_t next_order = 0; /* 0: nothing removed yet */
    bool cur_gone = false;
    while (*pp) {
        struct pme_txmsg *m = *pp;
        if (m->type != PME_T_RMA || m->started) {
            if (next_order && !m->started && m->order) {
                m->order = next_order;
                next_order = next_order + 1 ? next_order + 1 : 1;
            }
            last = m;
            pp = &m->next;
            continue;
        }
        if (!next_order)
            next_order = m->order;
        *pp = m->next;
        cur_gone |= *cur == m;
        struct pme_rreq *q = asks(ep, m);
        if (q)
            complete(ep, q, PME_ERR_NOTSUP);
        pme_rma_request_done(ep, idx, m, PME_ERR_NOTSUP);
        pme_txmsg_free(ep, m);
    }
    *tail = last;
    if (next_order)
        p->tx_order = next_order - 1 ? next_order - 1 : UINT32_MAX;
    if (cur_gone) {
        struct pme_txmsg *c = *pme_link_ordered_queue(ep, idx, &tail, &cur);
        while (c && c->started)
            c = c->next;
        *cur = c;
    }
}

/* Until the peer's HELLO_ACK says how large its frames may be, what any peer takes. */
size_t pme_rma_room(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p)
        return 0;
    return pme_wire_rma_room(p->tx_state == TX_OPEN ? p->max_frame : PME_WIRE_MIN_FRAME);
}

static void free_request(void *ptr, void *arg)
{
    (void)arg;
    free(ptr);
}

void pme_rma_free_requests(struct pme_ep *ep)
{
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        while (p->rma_held)
            pme_txmsg_free(ep, held_take_first(p));
    }
    pme_slots_each(&ep->rreqs, free_request, NULL);
    pme_slots_free(&ep->rreqs);
}
