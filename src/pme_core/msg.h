/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * msg.h - layer 4: messages over the link. Eager messages are copied into the send
 * queue and assembled into a receive-pool buffer; larger ones are offered (RTS), placed
 * by the receiver's choice (CTS) and streamed from buffer to buffer (RDATA). The
 * receive pool and its eager credit, and the events handed to the caller, live here.
 */
#ifndef PME_MSG_H
#define PME_MSG_H

#include "link.h"

/* msg.c: the upcalls this layer gives the link, and sending */
extern const struct pme_upcalls pme_msg_upcalls;
int pme_msg_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                 const struct iovec *iov, int iovcnt, unsigned flags, void *ctx);

/* eager.c */
int pme_eager_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                   const struct iovec *iov, int iovcnt, uint64_t total, unsigned flags,
                   void *ctx);
int pme_eager_on_data(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_hdr *wh,
                      const uint8_t *sub, size_t len, uint16_t flags);

/* rndv.c */
int pme_rndv_send(struct pme_ep *ep, pme_peer_t idx, const void *hdr, size_t hdr_len,
                  const struct iovec *iov, int iovcnt, uint64_t data_len, void *ctx);
int pme_rndv_convert(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m,
                     struct pme_txmsg **rts);
int pme_rndv_on_rts(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len);
void pme_rndv_on_cts(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len,
                     uint16_t aux);
void pme_rndv_on_rdata(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len);
void pme_rndv_sent(struct pme_ep *ep, struct pme_txmsg *m, int status);
void pme_sendreq_complete(struct pme_ep *ep, struct pme_sendreq *req, int status);
void pme_rndv_fail_peer(struct pme_ep *ep, pme_peer_t idx, int status);
void pme_rndv_free_all(struct pme_ep *ep);
void pme_sendreq_free_all(struct pme_ep *ep);
int pme_rndv_do_accept(struct pme_ep *ep, pme_rndv_t rndv, const struct iovec *iov, int iovcnt,
                       void *ctx);
int pme_rndv_do_discard(struct pme_ep *ep, pme_rndv_t rndv);

/* rndv_zc.c: zero copy where the device offers it (called by rndv.c only) */
void pme_rndv_zc_send_begin(struct pme_ep *ep, struct pme_sendreq *req);
void pme_rndv_zc_send_end(struct pme_ep *ep, struct pme_sendreq *req);
void pme_rndv_zc_recv_begin(struct pme_ep *ep, struct pme_rndv *r);
void pme_rndv_zc_recv_end(struct pme_ep *ep, struct pme_rndv *r);
int pme_rndv_zc_landed(struct pme_ep *ep, const struct pme_rndv *r, uint64_t off, size_t len);

/* pool.c: the endpoint's receive budget and the eager credit drawn from it */
struct pme_rxbuf *pme_rxbuf_alloc(struct pme_ep *ep, pme_peer_t idx, uint32_t len,
                                  bool on_credit);
/* Free b whatever holds it (its assembly failed, its peer went away). */
void pme_rxbuf_free(struct pme_ep *ep, struct pme_rxbuf *b);
/* An event done with b: freed with the last of its references (a bundle's messages). */
void pme_rxbuf_release(struct pme_ep *ep, struct pme_rxbuf *b);
uint32_t pme_pool_grant(struct pme_ep *ep);
void pme_pool_release_peer(struct pme_ep *ep, struct pme_peer *p);

/* events.c */
struct pme_event *pme_evq_push(struct pme_ep *ep, int type, int status, pme_peer_t peer);
int pme_evq_pop(struct pme_ep *ep, struct pme_event *ev);
void pme_evq_release(struct pme_ep *ep, struct pme_event *ev);
void pme_evq_free(struct pme_ep *ep);

#endif
