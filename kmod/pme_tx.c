// SPDX-License-Identifier: GPL-2.0-only
/*
 * The doorbell: every frame the process queued in its send ring is copied
 * out, checked, given the endpoint's true source and sent. A process can thus send
 * nothing but PME frames, and only from its own endpoint.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <asm/unaligned.h>

#include "pme.h"

/* Frames between two looks at whether another task needs the CPU. */
#define PME_TX_RESCHED_EVERY 64

static bool pme_stamp(u8 *field, const void *val, size_t n)
{
	if (!memcmp(field, val, n))
		return false;
	memcpy(field, val, n);
	return true;
}

static bool pme_stamp_be32(u8 *field, u32 val)
{
	__be32 v = cpu_to_be32(val);

	return pme_stamp(field, &v, sizeof(v));
}

/*
 * Write the source fields of frame f (Ethernet source, src_ep; for version 2 also
 * src_node and incarnation) as the endpoint is bound. Returns whether any differed
 * from what the process wrote.
 */
static bool pme_tx_stamp(const struct pme_ep *ep, const struct net_device *dev, u8 *f,
			 u8 version, u8 type)
{
	__be16 src_ep = cpu_to_be16(ep->ep_id);
	bool forged;

	forged = pme_stamp(f + ETH_ALEN, dev->dev_addr, ETH_ALEN);
	forged |= pme_stamp(f + PME_WIRE_OFF_SRC_EP, &src_ep, sizeof(src_ep));
	if (pme_kwire_v2_header(version) && type != PME_T_VERSION_NAK) {
		forged |= pme_stamp_be32(f + PME_WIRE_OFF_SRC_NODE, ep->node_id);
		forged |= pme_stamp_be32(f + PME_WIRE_OFF_INCARNATION, ep->incarnation);
	}
	return forged;
}

/* The reason frame f of len bytes may not go out, or PME_KCNT_TX_FRAMES. */
static enum pme_kcounter pme_tx_check(const u8 *f, unsigned int len)
{
	unsigned int need;

	if (get_unaligned((__be16 *)(f + 2 * ETH_ALEN)) != htons(pme_ethertype))
		return PME_KCNT_TX_BAD_ETHERTYPE;
	need = pme_wire_hdr_need(f[PME_WIRE_OFF_VERSION], f[PME_WIRE_OFF_TYPE]);
	if (!need)
		return PME_KCNT_TX_BAD_VERSION;
	if (len < ETH_HLEN + need)
		return PME_KCNT_TX_BAD_LENGTH;
	return PME_KCNT_TX_FRAMES;
}

/*
 * Hand the frame to the interface, or to an endpoint of this host when it is the
 * destination (the wire would never bring it back). Consumes skb. Counted on ep (under
 * its tx_lock) or, for the driver's own frames (ep NULL), globally only.
 */
void pme_tx_out(struct pme_ep *ep, struct net_device *dev, struct sk_buff *skb)
{
	unsigned int len = skb->len;
	const u8 *f = skb->data;
	int rc;

	if (ether_addr_equal(f, dev->dev_addr)) {
		pme_rx_deliver(dev, f, skb, ETH_HLEN);
		consume_skb(skb);
		pme_count(ep, PME_KCNT_TX_LOCAL, 1);
	} else {
		if (is_multicast_ether_addr(f))
			pme_rx_deliver(dev, f, skb, ETH_HLEN);
		rc = dev_queue_xmit(skb);
		if (net_xmit_eval(rc)) {
			pme_count(ep, PME_KCNT_TX_DROPPED, 1);
			return;
		}
	}
	pme_count(ep, PME_KCNT_TX_FRAMES, 1);
	pme_count(ep, PME_KCNT_TX_BYTES, len);
}

/* A copy of the frame in slot (len bytes, checked by the caller), or ERR_PTR(-ENOMEM). */
static struct sk_buff *pme_tx_copy_skb(struct net_device *dev, const struct pme_kslot *slot,
				       unsigned int len)
{
	struct sk_buff *skb;

	skb = alloc_skb(LL_RESERVED_SPACE(dev) + len + dev->needed_tailroom, GFP_KERNEL);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_put_data(skb, (const u8 *)slot + PME_KSLOT_HDR_LEN, len);
	return skb;
}

static void pme_tx_one(struct pme_ep *ep, struct net_device *dev,
		       const struct pme_kslot *slot, bool zc)
{
	unsigned int len = READ_ONCE(slot->len);
	enum pme_kcounter why;
	struct sk_buff *skb;
	u8 *f;

	if (len < ETH_HLEN + 4 || len > ETH_HLEN + dev->mtu ||
	    len > ep->slot_size - PME_KSLOT_HDR_LEN) {
		pme_count(ep, PME_KCNT_TX_BAD_LENGTH, 1);
		return;
	}
	/* Zero copy: the headers in the slot, the payload from the region's pages. */
	skb = zc ? pme_zc_tx_skb(ep, dev, slot, len) : pme_tx_copy_skb(dev, slot, len);
	if (IS_ERR(skb)) {
		pme_count(ep, PTR_ERR(skb) == -EINVAL ? PME_KCNT_TX_BAD_LENGTH :
			  PME_KCNT_TX_DROPPED, 1);
		return;
	}
	f = skb->data;
	/*
	 * From here on only the copy counts: the process can change the slot under us,
	 * so what is checked and stamped must be what is sent.
	 */
	why = pme_tx_check(f, len);
	if (why != PME_KCNT_TX_FRAMES) {
		kfree_skb(skb);
		pme_count(ep, why, 1);
		return;
	}
	if (pme_tx_stamp(ep, dev, f, f[PME_WIRE_OFF_VERSION], f[PME_WIRE_OFF_TYPE]))
		pme_count(ep, PME_KCNT_TX_SRC_REWRITTEN, 1);
	if (pme_kwire_v2_header(f[PME_WIRE_OFF_VERSION]) &&
	    f[PME_WIRE_OFF_TYPE] != PME_T_VERSION_NAK)
		pme_peers_note(ep, f);
	skb->dev = dev;
	skb->protocol = htons(pme_ethertype);
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	pme_tx_out(ep, dev, skb);
}

/**
 * pme_tx_kick - the doorbell: send every queued slot of the endpoint's send ring
 * @ep: a bound endpoint
 *
 * Returns the number of slots taken (sent or refused and counted), -ENODEV when the
 * interface is gone or -ENETDOWN when it is down (the slots stay queued).
 */
int pme_tx_kick(struct pme_ep *ep)
{
	struct pme_kslot *slot;
	struct net_device *dev;
	int taken = 0;
	u32 status;

	mutex_lock(&ep->tx_lock);
	dev = ep->dev;  /* stays held: the notifier needs tx_lock to take it away */
	if (!dev || !netif_running(dev)) {
		mutex_unlock(&ep->tx_lock);
		return dev ? -ENETDOWN : -ENODEV;
	}
	while (taken < ep->tx_slots) {
		slot = pme_tx_slot(ep, ep->tx_tail);
		/* Acquire: the frame's bytes are the process's until it says "send". */
		status = smp_load_acquire(&slot->status);
		if (status == PME_KTX_SEND_ZC && ep->abi < 3)
			status = PME_KTX_FREE;
		if (status != PME_KTX_SEND && status != PME_KTX_SEND_ZC)
			break;
		pme_tx_one(ep, dev, slot, status == PME_KTX_SEND_ZC);
		/* Release: the process may reuse the slot once it sees this. */
		smp_store_release(&slot->status, PME_KTX_FREE);
		ep->tx_tail = ep->tx_tail + 1 == ep->tx_slots ? 0 : ep->tx_tail + 1;
		if (++taken % PME_TX_RESCHED_EVERY == 0)
			cond_resched();
	}
	mutex_unlock(&ep->tx_lock);
	if (taken)
		pme_ep_wake(ep);
	return taken;
}
