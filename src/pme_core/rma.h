/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.h - layer 4: one-sided communication. The target side acts on requests when they
 * arrive (rma_target.c), on windows it exposes and locks (rma_win.c); the origin side
 * issues requests and counts them complete by the link's acknowledgements or by their
 * answers (rma_origin.c). The wire format is pme_wire.h's PME_T_RMA.
 */
#ifndef PME_RMA_H
#define PME_RMA_H

#include "link.h"

/* What a PME_T_RMA queue item's completion does (pme_txmsg.send_id of such an item). */
#define PME_RMA_ITEM_COUNTS 0x1u  /* an operation of ours complete on acknowledgement */
#define PME_RMA_ITEM_ANSWER 0x2u  /* our answer to the peer's request */
#define PME_RMA_ITEM_READS 0x4u   /* it streams from a window (owner): release it */
#define PME_RMA_ITEM_HOLDS 0x8u   /* ... and keeps its peer's hold of the lock */

/* Answers a target owes one peer, unacknowledged, before that peer's requests wait
 * (refused for now, resent by the link). */
#define PME_RMA_MAX_ANSWERS 1024

/* Requests of ours that one peer has yet to answer, at most (rma_origin.c): the rest
 * wait in order at the origin. A target's answers queue behind its own requests to the
 * origin; were the origin allowed more than the target answers before it refuses, two
 * processes getting from each other could each refuse the other's requests forever.
 * The margin covers acknowledgements of answers still on their way. */
#define PME_RMA_MAX_ASKING (PME_RMA_MAX_ANSWERS / 2)

/* Operations in one bundle, at most. A target acts on a bundle only with room for an
 * answer to each of its requests (rma_bundle_in.c), and an origin asks at most
 * PME_RMA_MAX_ASKING answers at a time: with at most this many more, a bundle always
 * finds room once the answers owed are acknowledged. (Frames of 64 KiB hold over a
 * thousand small operations.) */
#define PME_RMA_BUNDLE_MAX_OPS 256u
_Static_assert(PME_RMA_MAX_ASKING + PME_RMA_BUNDLE_MAX_OPS <= PME_RMA_MAX_ANSWERS,
               "a bundle of requests must fit the answers a target may owe");

/* Answers to gets of at most this many bytes are copied when the target acts on them
 * (they may then ride in a bundle); larger ones stream from the window, which stays
 * held until the answer is acknowledged. */
#define PME_RMA_GET_COPY_MAX 4096u

/* Whether a request is answered (DATA, DONE or NAK) rather than complete when the link
 * acknowledges it. */
static inline bool pme_rma_answered(const struct pme_wire_rma *r)
{
    return r->op == PME_RMA_GET || r->op == PME_RMA_FETCH || r->op == PME_RMA_CAS ||
           r->op == PME_RMA_LOCK || (r->flags & (PME_RMA_F_SHARED | PME_RMA_F_EXCL));
}

/* Whether a request takes the window's lock (and so may wait at the target). */
static inline bool pme_rma_takes_lock(const struct pme_wire_rma *r)
{
    return r->op == PME_RMA_LOCK || (r->flags & (PME_RMA_F_SHARED | PME_RMA_F_EXCL));
}

/* A lock request that waits, with the request that carried it (sub-header and payload),
 * acted on once the lock is granted. */
struct pme_rlock_wait {
    struct pme_rlock_wait *next;
    pme_peer_t peer;        /* PME_PEER_SELF: our own caller */
    uint8_t type;           /* PME_RMA_LOCK_SHARED or _EXCL */
    bool unlock_after;      /* its UNLOCK came meanwhile: release once acted on */
    uint32_t len;           /* bytes of req */
    uint8_t req[];          /* struct pme_wire_rma + payload */
};

/* rma_item.c: a PME_T_RMA queue item carrying r (the sub-header of its first frame;
 * frame i's offset is r's plus the payload of the frames before) and a payload gathered
 * from iov (at most 2 entries), or, with inline_bytes, from a buffer of its own
 * (pme_rma_item_inline) the caller fills. */
struct pme_txmsg *pme_rma_item(struct pme_ep *ep, const struct pme_wire_rma *r,
                               const struct iovec *iov, int iovcnt, size_t inline_bytes);
uint8_t *pme_rma_item_inline(struct pme_txmsg *m);
/* The item's sub-header. */
const struct pme_wire_rma *pme_rma_item_header(const struct pme_txmsg *m);
/* Copy the item's sub-header and its whole payload to dst (as a frame of its own
 * carries them); returns the bytes copied. */
size_t pme_rma_item_flatten(const struct pme_txmsg *m, uint8_t *dst);

/* rma_bundle.c: one-sided requests and answers to a peer coalesced into bundles */
/* Queue item m (a request or answer of ours) on the peer's link: in a bundle when it
 * would wait anyway (an answer: when others of this batch go with it). Returns whether
 * it joined a bundle. The caller pumps the peer (answers: after the batch). */
bool pme_rma_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m);

/* rma_bundle_in.c: a bundle from the peer, every record checked, then acted on in
 * order. */
int pme_rma_on_bundle(struct pme_ep *ep, pme_peer_t idx, const uint8_t *bytes, size_t len,
                      uint16_t flags);

/* rma_win.c: exposed windows and their locks */
int pme_rwin_expose(struct pme_ep *ep, void *base, uint64_t size, uint32_t *key);
struct pme_rwin *pme_rwin_find(struct pme_ep *ep, uint32_t key);
void pme_rwin_free(struct pme_ep *ep, struct pme_rwin *w);
/* Whether [off, off + len) lies in the window. */
bool pme_rwin_fits(const struct pme_rwin *w, uint64_t off, uint64_t len);
/* Grant peer the lock now if nobody waits and it is free enough; false: it must wait. */
bool pme_rwin_try_lock(struct pme_rwin *w, pme_peer_t peer, unsigned type);
/* Queue a lock request (req: len bytes to act on once granted, may be 0). */
struct pme_rlock_wait *pme_rwin_wait(struct pme_rwin *w, pme_peer_t peer, unsigned type,
                                     const void *req, uint32_t len);
/* peer's waiting request, if any. */
struct pme_rlock_wait *pme_rwin_waiting(struct pme_rwin *w, pme_peer_t peer);
/* Release peer's hold: PME_RWIN_RELEASED, PME_RWIN_RELEASING (answers to its gets still
 * read the window: released when the last is acknowledged), PME_RWIN_NOT_HELD. */
enum { PME_RWIN_RELEASED, PME_RWIN_RELEASING, PME_RWIN_NOT_HELD };
int pme_rwin_unlock(struct pme_rwin *w, pme_peer_t peer);
/* An answer to peer's get reads the window: its hold (if it holds the lock) lasts until
 * the answer is acknowledged. Returns whether it was counted. */
bool pme_rwin_reader_start(struct pme_rwin *w, pme_peer_t peer);
/* ... acknowledged (counted: what reader_start returned): true when that released the
 * peer's releasing hold. */
bool pme_rwin_reader_done(struct pme_rwin *w, pme_peer_t peer, bool counted);
/* The first waiter, now holding the lock, when it can be granted; NULL otherwise. The
 * caller acts on it and frees it. */
struct pme_rlock_wait *pme_rwin_grant_next(struct pme_rwin *w);
/* Forget peer's holds and waits on w. */
void pme_rwin_forget_peer(struct pme_rwin *w, pme_peer_t peer);

/* rma_target.c: requests in, answers out */
int pme_rma_on_request(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len,
                       uint16_t flags);
void pme_rma_target_fail_peer(struct pme_ep *ep, pme_peer_t idx);
void pme_rma_answer_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m);
/* Refuse the peer's one-frame request r (NAK why). */
void pme_rma_refuse(struct pme_ep *ep, pme_peer_t idx, const struct pme_wire_rma *r,
                    unsigned why);
/* Our own caller on its own windows (PME_PEER_SELF). */
int pme_rma_local(struct pme_ep *ep, const struct pme_wire_rma *r, const uint8_t *payload,
                  uint8_t *result);
int pme_rma_local_unlock(struct pme_ep *ep, uint32_t key);
int pme_rma_do_withdraw(struct pme_ep *ep, uint32_t key);
void pme_rma_free_windows(struct pme_ep *ep);

/* rma_origin.c: requests out, answers in */
int pme_rma_issue(struct pme_ep *ep, pme_peer_t peer, const struct pme_wire_rma *r,
                  const struct iovec *iov, int iovcnt, uint8_t *dst);
int pme_rma_on_answer(struct pme_ep *ep, pme_peer_t idx, const uint8_t *sub, size_t len);
void pme_rma_request_done(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m, int status);
void pme_rma_origin_fail_peer(struct pme_ep *ep, pme_peer_t idx, int status);
void pme_rma_peer_known(struct pme_ep *ep, pme_peer_t idx);
size_t pme_rma_room(struct pme_ep *ep, pme_peer_t idx);
void pme_rma_free_requests(struct pme_ep *ep);

#endif
