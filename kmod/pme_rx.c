// SPDX-License-Identifier: GPL-2.0-only
/*
 * The packet handler. Every frame of PME's EtherType that an interface
 * receives goes into the receive ring of the endpoint it is addressed to, or is
 * counted and dropped. Frames one endpoint sends to another on its own interface come
 * here too (pme_tx.c), since the wire never returns them.
 */
#include <linux/etherdevice.h>
#include <linux/skbuff.h>
#include <asm/unaligned.h>

#include "pme.h"

/*
 * Whether an endpoint takes this frame: version 2 frames must name its node (unless it
 * bound to any node) and its job. Returns the counter of the reason it does not, or
 * PME_KCNT_RX_FRAMES when it does.
 */
static enum pme_kcounter pme_rx_match(const struct pme_ep *ep, const u8 *h,
				      u8 version, u8 type)
{
	u32 node, job;

	if (!pme_kwire_v2_header(version) || type == PME_T_VERSION_NAK)
		return PME_KCNT_RX_FRAMES;
	node = get_unaligned_be32(h + PME_WIRE_OFF_DST_NODE - PME_ETH_HLEN);
	job = get_unaligned_be32(h + PME_WIRE_OFF_JOB_ID - PME_ETH_HLEN);
	if (ep->node_id != PME_NODE_ANY && node != ep->node_id)
		return PME_KCNT_RX_WRONG_NODE;
	if (job != ep->job_id)
		return PME_KCNT_RX_WRONG_JOB;
	return PME_KCNT_RX_FRAMES;
}

/*
 * Copy the frame into the endpoint's next slot, if the process has handed it back; the
 * payload of an armed rendezvous goes straight to its buffer instead (pme_zc.c).
 */
static bool pme_rx_place(struct pme_ep *ep, const u8 *eth, const struct sk_buff *skb,
			 int off, unsigned int plen)
{
	unsigned int total = ETH_HLEN + plen, in_slot;
	struct pme_kslot *slot;
	u8 *data;

	slot = pme_rx_slot(ep, ep->rx_head);
	/* The process may write anything here; only "handed back" lets us write. */
	if (READ_ONCE(slot->status) != PME_KRX_KERNEL) {
		pme_count(ep, PME_KCNT_RX_RING_FULL, 1);
		return false;
	}
	in_slot = pme_zc_place(ep, eth, skb, off, plen, slot);
	if (!in_slot) {
		if (total > ep->slot_size - PME_KSLOT_HDR_LEN) {
			pme_count(ep, PME_KCNT_RX_TOO_LONG, 1);
			return false;
		}
		data = (u8 *)slot + PME_KSLOT_HDR_LEN;
		memcpy(data, eth, ETH_HLEN);
		if (skb_copy_bits(skb, off, data + ETH_HLEN, plen)) {
			pme_count(ep, PME_KCNT_RX_BAD_FRAME, 1);
			return false;
		}
		WRITE_ONCE(slot->zc_flags, 0);
		in_slot = total;
	}
	WRITE_ONCE(slot->len, in_slot);
	/* Publish: the process reads the frame only after it sees this with acquire. */
	smp_store_release(&slot->status, PME_KRX_USER);
	ep->rx_head = ep->rx_head + 1 == ep->rx_slots ? 0 : ep->rx_head + 1;
	pme_count(ep, PME_KCNT_RX_FRAMES, 1);
	pme_count(ep, PME_KCNT_RX_BYTES, total);
	return true;
}

/**
 * pme_rx_deliver - put one frame into the ring of the endpoint it is addressed to
 * @dev: the interface it arrived on (or was sent on, for local delivery)
 * @eth: its 14-byte Ethernet header
 * @skb: the frame; its PME header starts at @off
 * @off: offset of the PME header in @skb
 *
 * Callable from softirq and from process context. Returns 0 when the frame was
 * delivered (or a PING answered by the driver), -ENOENT when it was counted and
 * dropped.
 */
int pme_rx_deliver(struct net_device *dev, const u8 *eth, struct sk_buff *skb, int off)
{
	u8 buf[PME_KWIRE_V2_HDR_LEN];
	unsigned int plen = skb->len - off, need;
	enum pme_kcounter why;
	struct pme_ep *ep;
	bool placed = false, answered = false;
	const u8 *h;
	u8 version, type;

	h = plen >= 4 ? skb_header_pointer(skb, off, 4, buf) : NULL;
	if (!h) {
		pme_count(NULL, PME_KCNT_RX_BAD_FRAME, 1);
		return -ENOENT;
	}
	version = h[PME_WIRE_OFF_VERSION - PME_ETH_HLEN];
	type = h[PME_WIRE_OFF_TYPE - PME_ETH_HLEN];
	need = pme_wire_hdr_need(version, type);
	h = need && plen >= need ? skb_header_pointer(skb, off, need, buf) : NULL;
	/*
	 * A version 2 frame whose len claims more bytes than it carries is malformed (a
	 * shorter one is padded, as short Ethernet frames are): drop it here, as too short,
	 * instead of spending a ring slot and a wakeup on a frame pme_core can only refuse.
	 * A VERSION_NAK keeps its frozen layout and is not judged by this field.
	 */
	if (h && pme_kwire_v2_header(version) && type != PME_T_VERSION_NAK &&
	    get_unaligned_be16(h + PME_WIRE_OFF_LEN) > plen - need)
		h = NULL;
	if (!h) {
		pme_count(NULL, PME_KCNT_RX_BAD_FRAME, 1);
		return -ENOENT;
	}

	rcu_read_lock();
	ep = pme_ep_lookup(dev, get_unaligned_be16(h));
	if (!ep) {
		pme_count(NULL, PME_KCNT_RX_NO_ENDPOINT, 1);
	} else if (type == PME_T_PING && pme_kwire_v2_header(version) &&
		   pme_rx_match(ep, h, version, type) == PME_KCNT_RX_FRAMES &&
		   pme_live_ping(ep, dev, eth, skb, off, plen)) {
		/* The driver answered for the endpoint (or refused a bad PING). */
		answered = true;
	} else {
		/* Softirq here, process context for local delivery: _bh serves both. */
		spin_lock_bh(&ep->rx_lock);
		why = pme_rx_match(ep, h, version, type);
		if (why == PME_KCNT_RX_FRAMES)
			placed = pme_rx_place(ep, eth, skb, off, plen);
		else
			pme_count(ep, why, 1);
		spin_unlock_bh(&ep->rx_lock);
		if (placed)
			pme_ep_wake(ep);
	}
	rcu_read_unlock();
	return placed || answered ? 0 : -ENOENT;
}

static int pme_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
		   struct net_device *orig_dev)
{
	int rc = -ENOENT;

	/* Frames for other hosts (a promiscuous interface) are none of ours. */
	if (skb->pkt_type != PACKET_OTHERHOST && skb->pkt_type != PACKET_LOOPBACK &&
	    skb_mac_header_was_set(skb) && skb_mac_header_len(skb) == ETH_HLEN)
		rc = pme_rx_deliver(dev, skb_mac_header(skb), skb, 0);
	if (rc) {
		kfree_skb(skb);
		return NET_RX_DROP;
	}
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

static struct packet_type pme_packet_type __read_mostly = {
	.func = pme_rcv,
};

void pme_rx_register(void)
{
	pme_packet_type.type = htons(pme_ethertype);
	dev_add_pack(&pme_packet_type);
}

/* dev_remove_pack waits (synchronize_net) until no handler runs any more. */
void pme_rx_unregister(void)
{
	dev_remove_pack(&pme_packet_type);
}
