// SPDX-License-Identifier: GPL-2.0-only
/*
 * The peers of an endpoint: every destination its frames went to, remembered as the
 * doorbell sends them. They are whom the driver says BYE to when the file closes, and
 * the only sources whose PINGs it answers, at the address the endpoint itself sends
 * them to: a PING's Ethernet source is anybody's to rewrite, only its PME header is
 * under the MAC, and a PING of a peer the endpoint never sent to is the process's to
 * judge (pme_live.c).
 */
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "pme.h"

static u32 pme_peers_key(__be32 node, __be16 ep_id)
{
	return (__force u32)node ^ (__force u16)ep_id;
}

void pme_peers_init(struct pme_ep *ep)
{
	spin_lock_init(&ep->live_lock);
	hash_init(ep->kpeer_hash);
	INIT_LIST_HEAD(&ep->kpeer_list);
}

/**
 * pme_peers_find - the peer at a node and endpoint id, as frames' headers name them
 * @ep: the endpoint
 * @node: the peer's node
 * @ep_id: the peer's endpoint id
 *
 * Under live_lock, or tx_lock (whose holder is the only one to add peers).
 */
struct pme_kpeer *pme_peers_find(struct pme_ep *ep, __be32 node, __be16 ep_id)
{
	struct pme_kpeer *kp;

	hash_for_each_possible(ep->kpeer_hash, kp, hnode, pme_peers_key(node, ep_id))
		if (kp->dst_node == node && kp->dst_ep == ep_id)
			return kp;
	return NULL;
}

/* Whether the frame tells nothing new of its peer (so live_lock need not be taken). */
static bool pme_peers_same(const struct pme_kpeer *kp, const u8 *f,
			   const struct pme_wire_hdr *wh)
{
	return wh->type != PME_T_HELLO_ACK && !memcmp(kp->mac, f, ETH_ALEN) &&
	       kp->src_node == wh->src_node && kp->rail == wh->rail &&
	       kp->version == wh->version;
}

/* Under live_lock once the peer is in the table. */
static void pme_peers_update(struct pme_kpeer *kp, const u8 *f, const struct pme_wire_hdr *wh)
{
	memcpy(kp->mac, f, ETH_ALEN);
	kp->src_node = wh->src_node;
	kp->rail = wh->rail;
	kp->version = wh->version;
	/*
	 * The process answers a HELLO only of an incarnation of the peer it believes in:
	 * maybe a new one (the peer's process was replaced), so the next authentic PING
	 * may name another incarnation than the one answered so far.
	 */
	if (wh->type == PME_T_HELLO_ACK)
		kp->ping_relearn = true;
}

/**
 * pme_peers_note - remember the destination of a frame the endpoint sends
 * @ep: the sender; under its tx_lock
 * @f: the frame as stamped (version 2's header)
 *
 * The table is bounded: a destination beyond it gets no BYE and no PONG from the
 * driver (the endpoint's BYE counter tells).
 */
void pme_peers_note(struct pme_ep *ep, const u8 *f)
{
	const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)(f + ETH_HLEN);
	struct pme_kpeer *kp = ep->kpeer_last;

	if (!(ep->live_flags & PME_KBIND_LIVENESS) || wh->type == PME_T_BYE ||
	    is_multicast_ether_addr(f))
		return;
	/* The common case: the same peer as the last frame, as it was. */
	if (!kp || kp->dst_ep != wh->dst_ep || kp->dst_node != wh->dst_node)
		kp = pme_peers_find(ep, wh->dst_node, wh->dst_ep);
	if (kp) {
		ep->kpeer_last = kp;
		if (!pme_peers_same(kp, f, wh)) {
			spin_lock_bh(&ep->live_lock);
			pme_peers_update(kp, f, wh);
			spin_unlock_bh(&ep->live_lock);
		}
		return;
	}
	kp = ep->nkpeers < PME_KPEERS_MAX ? kzalloc(sizeof(*kp), GFP_KERNEL_ACCOUNT) : NULL;
	if (!kp) {
		ep->kpeers_overflow = true;
		return;
	}
	kp->dst_ep = wh->dst_ep;
	kp->dst_node = wh->dst_node;
	kp->pong_period = jiffies;
	pme_peers_update(kp, f, wh);
	spin_lock_bh(&ep->live_lock);
	hash_add(ep->kpeer_hash, &kp->hnode, pme_peers_key(kp->dst_node, kp->dst_ep));
	list_add_tail(&kp->node, &ep->kpeer_list);
	spin_unlock_bh(&ep->live_lock);
	ep->nkpeers++;
	ep->kpeer_last = kp;
}

/* When the endpoint is freed: no packet handler can find it any more. */
void pme_peers_free(struct pme_ep *ep)
{
	struct pme_kpeer *kp, *next;

	list_for_each_entry_safe(kp, next, &ep->kpeer_list, node)
		kfree(kp);
	INIT_LIST_HEAD(&ep->kpeer_list);
	ep->nkpeers = 0;
}
