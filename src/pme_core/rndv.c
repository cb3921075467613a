// SPDX-License-Identifier: BSD-3-Clause
/*
 * rndv.c - the zero-copy rendezvous: RTS, the receiver's late choice of buffer, CTS,
 * and data placed at its offset.
 *
 * The sender offers (RTS: user header and size). The receiver's caller matches it at
 * leisure and answers with pme_rndv_accept (where the data goes) or pme_rndv_discard.
 * The sender then streams RDATA frames gathered from its own buffers; each lands at
 * its offset in the receiver's buffers. Frames arrive in sequence (Go-Back-N), so the
 * cursors on both sides only move forward except after a rewind.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/* ---- sender side ---- */

/* The offer of a rendezvous send, holding its own copy of what it offers. */
static struct pme_txmsg *rts_new(struct pme_ep *ep, const struct pme_sendreq *req)
{
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_RTS, req->hdr_len);
    if (m) {
        m->send_id = req->id;
        m->hdr_len = req->hdr_len;
        m->len = req->total;
        memcpy(m->data, req->hdr, req->hdr_len);
    }
    return m;
}

int pme_rndv_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                  const struct iovec *iov, int iovcnt, uint64_t data_len, void *ctx)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    size_t bytes = sizeof(struct pme_sendreq) + (size_t)iovcnt * sizeof(struct iovec) + hdr_len;
    struct pme_sendreq *req = calloc(1, bytes);
    uint32_t id = req ? pme_slots_put(&ep->sendreqs, req) : 0;
    if (!id) {
        free(req);
        return PME_ERR_NOMEM;
    }
    req->state = SREQ_WAIT_CTS;
    req->peer = idx;
    req->id = id;
    req->ctx = ctx;
    req->total = data_len;
    req->iov = (struct iovec *)(req + 1);
    memcpy(req->iov, iov, (size_t)iovcnt * sizeof(*iov));
    req->hdr = (uint8_t *)(req->iov + iovcnt);
    req->hdr_len = (uint16_t)hdr_len;
    if (hdr_len)
        memcpy(req->hdr, hdr, hdr_len);
    pme_iov_cursor_init(&req->cur, req->iov, iovcnt);
    struct pme_txmsg *m = rts_new(ep, req);
    if (!m) {
        pme_slots_del(&ep->sendreqs, id);
        free(req);
        return PME_ERR_NOMEM;
    }
    p->rndv_out++;
    ep->ctr->tx_rndv++;
    p->ctr->tx_msgs++;
    pme_link_enqueue(ep, idx, m);
    pme_link_pump(ep, idx);
    return PME_OK;
}

/* An eager message (queue item m, not yet started) that can never fit the peer's
 * credit: make the offer of its copy; the request owns m from now on. */
int pme_rndv_convert(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m,
                     struct pme_txmsg **rts)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_sendreq *req = calloc(1, sizeof(*req) + sizeof(struct iovec));
    uint32_t id = req ? pme_slots_put(&ep->sendreqs, req) : 0;
    if (!id) {
        free(req);
        return PME_ERR_NOMEM;
    }
    req->state = SREQ_WAIT_CTS;
    req->no_event = 1;
    req->peer = idx;
    req->id = id;
    req->hdr_len = m->hdr_len;
    req->hdr = m->data;
    req->total = m->total - m->hdr_len;
    req->iov = (struct iovec *)(req + 1);
    req->iov[0].iov_base = m->data + m->hdr_len;
    req->iov[0].iov_len = req->total;
    pme_iov_cursor_init(&req->cur, req->iov, 1);
    req->owned = m;
    req->owned_bytes = m->total;
    *rts = rts_new(ep, req);
    if (!*rts) {
        pme_slots_del(&ep->sendreqs, id);
        free(req);
        return PME_ERR_NOMEM;
    }
    p->rndv_out++;
    return PME_OK;
}

void pme_sendreq_complete(struct pme_ep *ep, struct pme_sendreq *req, int status)
{
    struct pme_peer *p = pme_peer_get(ep, req->peer);
    if (req->state == SREQ_SENDING)
        pme_rndv_zc_send_end(ep, req);
    if (p->rndv_out)
        p->rndv_out--;
    if (!req->no_event) {
        struct pme_event *e = pme_evq_push(ep, PME_EV_SEND_DONE, status, req->peer);
        e->ctx = req->ctx;
        e->total = req->total;
    }
    if (req->owned) {
        ep->tx_used -= req->owned_bytes;
        pme_txmsg_free(ep, req->owned);
    }
    pme_slots_del(&ep->sendreqs, req->id);
    free(req);
}

void pme_rndv_on_cts(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len,
                     uint16_t aux)
{
    if (len < sizeof(struct pme_wire_cts)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    const struct pme_wire_cts *cts = (const void *)sub;
    struct pme_sendreq *req = pme_slots_get(&ep->sendreqs, ntohl(cts->send_id));
    if (!req || req->peer != idx || req->state != SREQ_WAIT_CTS) {
        ep->ctr->drop_bad_header++;
        return;
    }
    if (aux & PME_CTS_DISCARD) {
        pme_sendreq_complete(ep, req, PME_ERR_CANCELED);
        return;
    }
    uint64_t accepted = be64toh(cts->accepted);
    if (accepted > req->total)
        accepted = req->total;
    if (accepted == 0) {
        pme_sendreq_complete(ep, req, PME_OK);
        return;
    }
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_RDATA, 0);
    if (!m) {
        pme_sendreq_complete(ep, req, PME_ERR_NOMEM);
        return;
    }
    req->state = SREQ_SENDING;
    pme_rndv_zc_send_begin(ep, req);
    m->owner = req;
    m->cur = &req->cur;
    m->len = accepted;
    m->rndv_id = ntohl(cts->rndv_id);
    pme_link_enqueue(ep, idx, m);
    pme_peer_mark_dirty(ep, idx);
}

/* The data stream of a request is acknowledged (or its peer failed). */
void pme_rndv_sent(struct pme_ep *ep, struct pme_txmsg *m, int status)
{
    pme_sendreq_complete(ep, m->owner, status);
}

/* ---- receiver side ---- */

int pme_rndv_on_rts(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len)
{
    const struct pme_wire_rts *rts = (const void *)sub;
    if (len < sizeof(*rts) || ntohs(rts->hdr_len) > len - sizeof(*rts)) {
        ep->ctr->drop_bad_header++;
        return 0;
    }
    const uint8_t *hdr = sub + sizeof(*rts);
    size_t hdr_len = ntohs(rts->hdr_len);
    struct pme_peer *p = pme_peer_get(ep, idx);
    struct pme_rxbuf *b = pme_rxbuf_alloc(ep, idx, (uint32_t)hdr_len, false);
    if (!b)
        return PME_RX_NO_BUFFER;
    struct pme_rndv *r = calloc(1, sizeof(*r));
    uint32_t id = r ? pme_slots_put(&ep->rndvs, r) : 0;
    if (!id) {
        free(r);
        pme_rxbuf_free(ep, b);
        return PME_RX_NO_BUFFER;
    }
    memcpy(b->data, hdr, hdr_len);
    b->hdr_len = (uint16_t)hdr_len;
    r->state = RNDV_OFFERED;
    r->peer = idx;
    r->peer_epoch = p->rx_epoch;
    r->id = id;
    r->send_id = ntohl(rts->send_id);
    r->total = be64toh(rts->total);
    r->hdrbuf = b;
    struct pme_event *e = pme_evq_push(ep, PME_EV_RTS, PME_OK, idx);
    e->hdr = b->data;
    e->hdr_len = hdr_len;
    e->total = r->total;
    e->rndv = id;
    ep->ctr->rx_rndv++;
    p->ctr->rx_msgs++;
    return 0;
}

static void rndv_free(struct pme_ep *ep, struct pme_rndv *r)
{
    if (r->state == RNDV_ACCEPTED)
        pme_rndv_zc_recv_end(ep, r);
    if (r->hdrbuf)
        pme_rxbuf_free(ep, r->hdrbuf);
    pme_slots_del(&ep->rndvs, r->id);
    pme_ranges_free(&r->landed);
    free(r->iov);
    free(r);
}

static void free_one(void *ptr, void *arg)
{
    rndv_free(arg, ptr);
}

/* The endpoint closes: every rendezvous receive goes, without events. */
void pme_rndv_free_all(struct pme_ep *ep)
{
    pme_slots_each(&ep->rndvs, free_one, ep);
    pme_slots_free(&ep->rndvs);
}

static void free_sendreq(void *ptr, void *arg)
{
    struct pme_ep *ep = arg;
    struct pme_sendreq *req = ptr;
    if (req->owned)
        pme_txmsg_free(ep, req->owned);
    free(req);
}

/* The endpoint closes: every rendezvous send goes, without events. */
void pme_sendreq_free_all(struct pme_ep *ep)
{
    pme_slots_each(&ep->sendreqs, free_sendreq, ep);
    pme_slots_free(&ep->sendreqs);
}

static void rndv_done(struct pme_ep *ep, struct pme_rndv *r, int status)
{
    struct pme_event *e = pme_evq_push(ep, PME_EV_RECV_DONE, status, r->peer);
    e->ctx = r->ctx;
    e->data_len = r->received;
    e->total = r->total;
    if (r->state == RNDV_ACCEPTED) {
        struct pme_peer *p = pme_peer_get(ep, r->peer);
        if (p->rndv_in)
            p->rndv_in--;
    }
    rndv_free(ep, r);
}

/* Queue the answer to an offer. */
static int answer(struct pme_ep *ep, struct pme_rndv *r, uint64_t accepted, uint16_t aux)
{
    struct pme_txmsg *m = pme_txmsg_new(ep, PME_T_CTS, 0);
    if (!m)
        return PME_ERR_NOMEM;
    m->send_id = r->send_id;
    m->rndv_id = r->id;
    m->accepted = accepted;
    m->aux = aux;
    pme_link_enqueue(ep, r->peer, m);
    pme_link_pump(ep, r->peer);
    return PME_OK;
}

int pme_rndv_do_accept(struct pme_ep *ep, pme_rndv_t rndv, const struct iovec *iov,
                       int iovcnt, void *ctx)
{
    struct pme_rndv *r = pme_slots_get(&ep->rndvs, rndv);
    if (!r || r->state != RNDV_OFFERED || iovcnt < 0 || (iovcnt && !iov))
        return PME_ERR_INVAL;
    ep->now = pme_now_ns();
    struct pme_peer *p = pme_peer_get(ep, r->peer);
    pme_rxbuf_free(ep, r->hdrbuf);
    r->hdrbuf = NULL;
    r->ctx = ctx;
    if (r->status || p->tx_state == TX_FAILED || r->peer_epoch != p->rx_epoch) {
        rndv_done(ep, r, r->status ? r->status : p->fail_status ? p->fail_status
                                                                 : PME_ERR_PEER_DEAD);
        return PME_OK;
    }
    uint64_t room = pme_iov_total(iov, iovcnt);
    r->expected = room < r->total ? room : r->total;
    if (r->expected == 0) {
        int rc = answer(ep, r, 0, 0);
        if (rc)
            return rc;
        rndv_done(ep, r, r->total ? PME_ERR_TRUNC : PME_OK);
        return PME_OK;
    }
    r->iov = malloc((size_t)iovcnt * sizeof(*iov));
    if (!r->iov)
        return PME_ERR_NOMEM;
    memcpy(r->iov, iov, (size_t)iovcnt * sizeof(*iov));
    pme_iov_cursor_init(&r->cur, r->iov, iovcnt);
    pme_rndv_zc_recv_begin(ep, r);
    int rc = answer(ep, r, r->expected, 0);
    if (rc) {
        pme_rndv_zc_recv_end(ep, r);
        free(r->iov);
        r->iov = NULL;
        return rc;
    }
    r->state = RNDV_ACCEPTED;
    p->rndv_in++;
    pme_timer_rearm(ep, r->peer);
    return PME_OK;
}

int pme_rndv_do_discard(struct pme_ep *ep, pme_rndv_t rndv)
{
    struct pme_rndv *r = pme_slots_get(&ep->rndvs, rndv);
    if (!r || r->state != RNDV_OFFERED)
        return PME_ERR_INVAL;
    ep->now = pme_now_ns();
    struct pme_peer *p = pme_peer_get(ep, r->peer);
    if (!r->status && p->tx_state != TX_FAILED && r->peer_epoch == p->rx_epoch) {
        int rc = answer(ep, r, 0, PME_CTS_DISCARD);
        if (rc)
            return rc;
    }
    rndv_free(ep, r);
    return PME_OK;
}

void pme_rndv_on_rdata(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len)
{
    const struct pme_wire_rdata *rd = (const void *)sub;
    if (len < sizeof(*rd)) {
        ep->ctr->drop_bad_header++;
        return;
    }
    const uint8_t *payload = sub + sizeof(*rd);
    len -= sizeof(*rd);
    struct pme_rndv *r = pme_slots_get(&ep->rndvs, ntohl(rd->rndv_id));
    uint64_t off = be64toh(rd->offset);
    if (!r || r->peer != idx || r->state != RNDV_ACCEPTED || off > r->expected ||
        len > r->expected - off) {
        ep->ctr->drop_bad_header++;
        return;
    }
    int zc = pme_rndv_zc_landed(ep, r, off, len);
    if (zc < 0) {
        ep->ctr->drop_bad_header++;
        return;
    }
    /* Fragments come in any order when the stream is striped over rails, and a dead
     * rail's piece comes again over another: count each byte once. */
    uint64_t fresh = pme_ranges_add(&r->landed, off, off + len);
    if (!fresh)
        return;
    if (!zc) {
        pme_iov_cursor_seek(&r->cur, off);
        pme_iov_cursor_copy_in(&r->cur, payload, len);
    }
    r->received += fresh;
    if (r->received == r->expected)
        rndv_done(ep, r, r->expected < r->total ? PME_ERR_TRUNC : PME_OK);
}

/* ---- a peer failed: everything in flight with it ends with its status ---- */

struct fail_ctx {
    struct pme_ep *ep;
    pme_peer_t idx;
    int status;
};

static void fail_sendreq(void *ptr, void *arg)
{
    struct fail_ctx *c = arg;
    struct pme_sendreq *req = ptr;
    /* SENDING ones are completed with their RDATA item by the queue purge. */
    if (req->peer == c->idx && req->state == SREQ_WAIT_CTS)
        pme_sendreq_complete(c->ep, req, c->status);
}

static void fail_rndv(void *ptr, void *arg)
{
    struct fail_ctx *c = arg;
    struct pme_rndv *r = ptr;
    if (r->peer != c->idx)
        return;
    if (r->state == RNDV_ACCEPTED)
        rndv_done(c->ep, r, c->status);
    else
        r->status = c->status; /* told when the caller answers the offer */
}

void pme_rndv_fail_peer(struct pme_ep *ep, pme_peer_t idx, int status)
{
    struct fail_ctx c = {ep, idx, status};
    pme_slots_each(&ep->sendreqs, fail_sendreq, &c);
    pme_slots_each(&ep->rndvs, fail_rndv, &c);
}
