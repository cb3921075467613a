// SPDX-License-Identifier: BSD-3-Clause
/*
 * api_rma.c - the public entry points of one-sided communication (pme.h). Each takes
 * the endpoint's lock (eplock.h), turns its arguments into the request's sub-header,
 * and hands it to the origin side, or acts on it at once when it names our own window
 * (PME_PEER_SELF).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "eplock.h"
#include "rma.h"
#include "rma_acc.h"

static struct pme_wire_rma request(unsigned op, uint32_t key, uint64_t offset, uint64_t len,
                                   unsigned flags)
{
    struct pme_wire_rma r;
    memset(&r, 0, sizeof(r));
    r.op = (uint8_t)op;
    r.flags = (uint8_t)flags;
    r.key = htonl(key);
    r.offset = htobe64(offset);
    r.len = htobe64(len);
    return r;
}

/* Send r with the payload of iov, or do it here on our own window (payload: its bytes
 * in one piece, result: where an answer lands). What acting on our own window made due
 * (a lock granted to a peer that waited) goes out now; a request to a peer leaves in this
 * call unless frames to that peer wait for an acknowledgement (link_tx.c's gathering), as
 * small messages do. */
static int submit(struct pme_ep *ep, pme_peer_t peer, const struct pme_wire_rma *r,
                  const struct iovec *iov, int iovcnt, const void *payload, void *result)
{
    if ((r->flags & ~(PME_RMA_TAKE_SHARED | PME_RMA_TAKE_EXCL)) ||
        (r->flags & PME_RMA_TAKE_SHARED && r->flags & PME_RMA_TAKE_EXCL))
        return PME_ERR_INVAL;
    pme_ep_lock(ep);
    int rc;
    if (peer == PME_PEER_SELF) {
        rc = r->flags && r->op != PME_RMA_LOCK ? PME_ERR_INVAL
                                              : pme_rma_local(ep, r, payload, result);
        if (ep->dirty.n)
            pme_link_after_batch(ep);
    } else {
        rc = pme_rma_issue(ep, peer, r, iov, iovcnt, result);
    }
    pme_ep_unlock(ep);
    return rc;
}

int pme_rma_expose(pme_ep_t *ep, void *base, uint64_t size, uint32_t *key)
{
    pme_ep_lock(ep);
    int rc = pme_rwin_expose(ep, base, size, key);
    pme_ep_unlock(ep);
    return rc;
}

int pme_rma_withdraw(pme_ep_t *ep, uint32_t key)
{
    pme_ep_lock(ep);
    int rc = pme_rma_do_withdraw(ep, key);
    if (ep->dirty.n)
        pme_link_after_batch(ep);
    pme_ep_unlock(ep);
    return rc;
}

int pme_rma_put(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset, const void *buf,
                size_t len, unsigned flags)
{
    struct pme_wire_rma r = request(PME_RMA_PUT, key, offset, len, flags);
    struct iovec v = {(void *)buf, len};
    return submit(ep, peer, &r, &v, 1, buf, NULL);
}

int pme_rma_get(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset, void *buf,
                size_t len, unsigned flags)
{
    struct pme_wire_rma r = request(PME_RMA_GET, key, offset, len, flags);
    return submit(ep, peer, &r, NULL, 0, NULL, buf);
}

int pme_rma_acc(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset, const void *buf,
                void *result, size_t len, int aop, int dtype, unsigned flags)
{
    if (!pme_acc_valid((unsigned)aop, (unsigned)dtype) || len % pme_dtype_size((unsigned)dtype))
        return PME_ERR_INVAL;
    if (!buf) {
        /* NO_OP reads no operand: the frame carries whatever the result buffer holds. */
        if (aop != PME_AOP_NO_OP || !result)
            return PME_ERR_INVAL;
        buf = result;
    }
    struct pme_wire_rma r = request(result ? PME_RMA_FETCH : PME_RMA_ACC, key, offset, len, flags);
    r.aop = (uint8_t)aop;
    r.dtype = (uint8_t)dtype;
    struct iovec v = {(void *)buf, len};
    return submit(ep, peer, &r, &v, 1, buf, result);
}

int pme_rma_cas(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset,
                const void *compare, const void *swap, void *result, int dtype, unsigned flags)
{
    size_t size = pme_dtype_size((unsigned)dtype);
    if (!size || !result)
        return PME_ERR_INVAL;
    struct pme_wire_rma r = request(PME_RMA_CAS, key, offset, size, flags);
    r.dtype = (uint8_t)dtype;
    struct iovec v[2] = {{(void *)compare, size}, {(void *)swap, size}};
    uint8_t both[16];
    memcpy(both, compare, size);
    memcpy(both + size, swap, size);
    return submit(ep, peer, &r, v, 2, both, result);
}

int pme_rma_lock(pme_ep_t *ep, pme_peer_t peer, uint32_t key, int type)
{
    if (type != PME_RMA_LOCK_SHARED && type != PME_RMA_LOCK_EXCL)
        return PME_ERR_INVAL;
    struct pme_wire_rma r = request(PME_RMA_LOCK, key, 0, 0, (unsigned)type);
    return submit(ep, peer, &r, NULL, 0, NULL, NULL);
}

int pme_rma_unlock(pme_ep_t *ep, pme_peer_t peer, uint32_t key)
{
    if (peer != PME_PEER_SELF) {
        struct pme_wire_rma r = request(PME_RMA_UNLOCK, key, 0, 0, 0);
        return submit(ep, peer, &r, NULL, 0, NULL, NULL);
    }
    pme_ep_lock(ep);
    int rc = pme_rma_local_unlock(ep, key);
    if (ep->dirty.n)
        pme_link_after_batch(ep);
    pme_ep_unlock(ep);
    return rc;
}

uint32_t pme_rma_pending(pme_ep_t *ep, pme_peer_t peer)
{
    pme_ep_lock(ep);
    struct pme_peer *p = peer == PME_PEER_SELF ? NULL : pme_peer_get(ep, peer);
    uint32_t n = peer == PME_PEER_SELF ? ep->rma_self_pending : p ? p->rma_pending : 0;
    pme_ep_unlock(ep);
    return n;
}

int pme_rma_error(pme_ep_t *ep, pme_peer_t peer)
{
    pme_ep_lock(ep);
    struct pme_peer *p = pme_peer_get(ep, peer);
    int rc = p ? p->rma_status : PME_OK;
    if (p)
        p->rma_status = PME_OK;
    pme_ep_unlock(ep);
    return rc;
}

size_t pme_rma_frame_room(pme_ep_t *ep, pme_peer_t peer)
{
    pme_ep_lock(ep);
    size_t room = pme_rma_room(ep, peer);
    pme_ep_unlock(ep);
    return room;
}

void pme_rma_exclusive(pme_ep_t *ep, int on)
{
    __atomic_store_n(&ep->helper_held, on ? 1 : 0, __ATOMIC_SEQ_CST);
    /* Wait out a helper pass under way: from our release on, the helper sees the flag. */
    if (on) {
        pme_ep_lock(ep);
        pme_ep_unlock(ep);
    }
}
