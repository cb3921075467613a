// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_bundle.c - one-sided requests and answers to one peer, coalesced. A loop of small
 * puts or gets followed by a flush made one frame per operation, each with its system
 * call, its MAC and its acknowledgement, while MPICH's active messages over PME, which
 * coalesce as eager messages do, moved seven times as many 8-byte puts.
 *
 * As eager.c does for messages: an operation goes at once whenever the link takes it;
 * one that would wait anyway (items queued before it, or PME_COALESCE_AFTER frames to
 * the peer waiting for an acknowledgement: link_tx.c's gathering) starts a bundle, and
 * the operations that meet it at the tail of the queue travel with it (pme_wire.h,
 * PME_RMA_BUNDLE): one frame, one acknowledgement, which completes every put and
 * accumulate in it. Answers made in one receive batch always bundle: they go after
 * that batch, in the same pass, and never wait for gathering. Operations that take a
 * lock, answers that stream from a window and operations larger than a bundle go alone
 * as before.
 *
 * A bundle fills its frame, where a bundle of messages stops at PME_COALESCE bytes: that
 * bound spares the receiver's eager credit, which one-sided operations do not take.
 * Measured: puts of 1, 2 and 4 KiB in a stream ran 1.6, 2.5 and 1.9 times faster with
 * bundles of a 9000-byte frame than of 4 KiB
 * (doc/perf/history/2026-11-27-rma-bundles.md).
 */
#include <string.h>

#include "bundle.h"
#include "rma.h"

/* The largest bundle an item to the peer may be part of (a frame's room), or 0 when it
 * goes alone. (A peer that announced bundles without one-sided communication gets
 * none: the items pme_rma_peer_known fails must each be one request.) */
static uint32_t bundle_limit(const struct pme_ep *ep, const struct pme_peer *p)
{
    const uint8_t both = PME_FEAT_RMA | PME_FEAT_RMA_BUNDLE;
    if (!ep->cfg.coalesce_bytes || p->tx_state != TX_OPEN || (p->takes & both) != both)
        return 0;
    return pme_wire_rma_room(p->max_frame);
}

/* Whether item m may ride in a bundle: a lock request may wait at the target with its
 * payload, and an answer that reads a window holds it until acknowledged. */
static bool may_join(const struct pme_txmsg *m)
{
    return m->aux != PME_RMA_BUNDLE && !(m->send_id & PME_RMA_ITEM_READS) &&
           !pme_rma_takes_lock(pme_rma_item_header(m));
}

/* Whether b, the tail of the in-order queue, is a bundle that rec more bytes join. */
static bool joins(const struct pme_txmsg *b, uint32_t rec)
{
    return b && b->type == PME_T_RMA && b->aux == PME_RMA_BUNDLE && !b->started &&
           b->nrec < PME_RMA_BUNDLE_MAX_OPS &&
           (uint64_t)pme_bundle_next_rec(b->total, b->nrec) + PME_BUNDLE_REC + rec <= b->room;
}

static struct pme_txmsg *new_bundle(struct pme_ep *ep, uint32_t lim, bool answer)
{
    struct pme_txmsg *b = pme_txmsg_new(ep, PME_T_RMA, lim);
    if (!b)
        return NULL;
    b->aux = PME_RMA_BUNDLE;
    b->room = lim;
    b->total = PME_BUNDLE_HDR;
    b->may_gather = !answer;
    return b;
}

bool pme_rma_enqueue(struct pme_ep *ep, pme_peer_t idx, struct pme_txmsg *m)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    uint32_t lim = bundle_limit(ep, p);
    uint64_t rec = sizeof(struct pme_wire_rma) + m->len;
    bool answer = m->send_id & PME_RMA_ITEM_ANSWER;
    struct pme_txmsg *b = NULL;
    if (lim && may_join(m) && PME_BUNDLE_HDR + PME_BUNDLE_REC + rec <= lim) {
        b = p->rail[p->primary].q_tail;
        if (!joins(b, (uint32_t)rec) || !b->may_gather != answer)
            b = NULL;
        if (!b && (answer || pme_link_small_waits(ep, p))) {
            b = new_bundle(ep, lim, answer);
            if (b)
                pme_link_enqueue(ep, idx, b);
        }
    }
    if (!b) {
        pme_link_enqueue(ep, idx, m);
        return false;
    }
    uint32_t at = pme_bundle_next_rec(b->total, b->nrec);
    memset(b->data + b->total, 0, at - b->total); /* no stale bytes of the cache on the wire */
    pme_bundle_put_rec(b->data + at, (uint32_t)rec, 0);
    pme_rma_item_flatten(m, b->data + at + PME_BUNDLE_REC);
    b->total = at + PME_BUNDLE_REC + (uint32_t)rec;
    pme_bundle_put_count(b->data, ++b->nrec);
    b->send_id |= m->send_id;
    b->rma_counts += !!(m->send_id & PME_RMA_ITEM_COUNTS);
    b->rma_answers += !!(m->send_id & PME_RMA_ITEM_ANSWER);
    /* Counted as eager bundles are: once a second operation joins. */
    if (b->nrec == 2)
        ep->ctr->tx_bundles++;
    if (b->nrec >= 2)
        ep->ctr->tx_bundled += b->nrec == 2 ? 2 : 1;
    pme_txmsg_free(ep, m);
    return true;
}
