// SPDX-License-Identifier: BSD-3-Clause
/*
 * rndv_zc.c - zero copy for rendezvous data, where the device offers it (the kernel
 * device, pme.ko, see dev.h's zc_* operations): the sender's frames go from its buffer's
 * own pages and the receiver's buffer is written by the driver as the frames arrive, so
 * neither process copies the data. The rendezvous itself (rndv.c) is unchanged: every
 * frame still passes the link's sequencing, acknowledgement and MAC check, and a frame
 * the device did not place (a loss, a retransmission) arrives whole and is copied as
 * on any other device.
 *
 * Only a rendezvous of at least PME_ZC_MIN bytes whose data is one contiguous buffer
 * qualifies; a device refusal (RLIMIT_MEMLOCK reached, say) just leaves it copied.
 */
#include "msg.h"

/* The device that reaches the peer, if it moves data without copies. Not over several
 * rails: a striped stream's frames come and go on several devices, and each would have
 * to pin and place the same buffer (later work); they are copied. */
static struct pme_dev *zc_dev(struct pme_ep *ep, pme_peer_t idx)
{
    const struct pme_peer *p = pme_peer_get(ep, idx);
    if (p->nrails != 1)
        return NULL;
    struct pme_dev *dev = ep->devs[p->rail[0].dev];
    return dev->ops->zc_send_begin ? dev : NULL;
}

/* The buffer that holds an iovec's first len bytes when its first entry does, or NULL;
 * also NULL when len is too small to be worth it. */
static uint8_t *zc_buffer(const struct pme_ep *ep, const struct iovec *iov, uint64_t len)
{
    if (!ep->cfg.zc_min_bytes || len < ep->cfg.zc_min_bytes || !iov || iov[0].iov_len < len)
        return NULL;
    return iov[0].iov_base;
}

/* The offer was accepted: its frames may go from the buffer's pages until it ends. */
void pme_rndv_zc_send_begin(struct pme_ep *ep, struct pme_sendreq *req)
{
    struct pme_dev *dev = zc_dev(ep, req->peer);
    uint8_t *buf = zc_buffer(ep, req->iov, req->total);
    if (dev && buf)
        dev->ops->zc_send_begin(dev, buf, req->total);
}

/* Every frame was acknowledged (or the peer failed): the pages may go. */
void pme_rndv_zc_send_end(struct pme_ep *ep, struct pme_sendreq *req)
{
    struct pme_dev *dev = zc_dev(ep, req->peer);
    uint8_t *buf = zc_buffer(ep, req->iov, req->total);
    if (dev && buf)
        dev->ops->zc_send_end(dev, buf, req->total);
}

/* Before the CTS goes: the device places the data the sender then streams. */
void pme_rndv_zc_recv_begin(struct pme_ep *ep, struct pme_rndv *r)
{
    struct pme_dev *dev = zc_dev(ep, r->peer);
    uint8_t *buf = zc_buffer(ep, r->iov, r->expected);
    struct pme_peer *p = pme_peer_get(ep, r->peer);
    if (dev && buf)
        dev->ops->zc_recv_begin(dev, r->id, p->node, p->ep_id, buf, r->expected);
}

/* The receive ends: once this returns the device writes nothing more into the buffer. */
void pme_rndv_zc_recv_end(struct pme_ep *ep, struct pme_rndv *r)
{
    struct pme_dev *dev = zc_dev(ep, r->peer);
    if (dev)
        dev->ops->zc_recv_end(dev, r->id);
}

/* Whether the payload of the RDATA frame being delivered (len bytes at offset off of
 * r) is in place already: 1, 0 when it is to be copied, -1 when the device placed it
 * somewhere else (never, unless the device is wrong: the frame is then dropped). */
int pme_rndv_zc_landed(struct pme_ep *ep, const struct pme_rndv *r, uint64_t off, size_t len)
{
    for (unsigned i = 0; i < ep->ndev; i++) {
        const struct pme_dev_placed *pl = ep->devs[i]->placed;
        if (!pl)
            continue;
        const uint8_t *buf = zc_buffer(ep, r->iov, r->expected);
        return buf && pl->len == len && pl->data == buf + off ? 1 : -1;
    }
    return 0;
}
