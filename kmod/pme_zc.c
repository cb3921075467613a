// SPDX-License-Identifier: GPL-2.0-only
/*
 * Zero copy of rendezvous data.
 *
 * Receive: the process arms a rendezvous (PME_IOC_ZC_ARM: its buffer, the sender, the
 * rndv_id its RDATA frames carry). The packet handler writes the payload of the next
 * such frame straight into the buffer's pinned pages and puts only the frame's headers
 * into the receive ring, so that pme_core still sees every frame (sequence, ACK, its
 * MAC over the placed bytes) and copies nothing. Only the frame that starts where the
 * furthest one seen so far ended is placed: a loss, a retransmission or a forged frame
 * reaches the ring whole and takes the copying path, and bytes below that point, which
 * the process may have accepted already, are never written again.
 *
 * Send: a PME_KTX_SEND_ZC slot carries a frame's headers and names its payload in a
 * region the process holds (pme_zreg.c). The skb gets the headers copied and the
 * payload as page fragments of the region's pinned pages, each with a page reference
 * of its own, so a page outlives the region for as long as a queue holds the frame.
 * The process keeps the region held until its peer acknowledged the frames, so a
 * retransmission goes from the same pages.
 */
#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <linux/uaccess.h>
#include <asm/unaligned.h>

#include "pme.h"

/* The RDATA sub-header (pme_wire_rdata): rndv_id, pad, offset. */
#define PME_ZC_SUB_LEN 16
/* PME header and RDATA sub-header: what a placed frame leaves in its ring slot. */
#define PME_ZC_HDRS (PME_KWIRE_V2_HDR_LEN + PME_ZC_SUB_LEN)

/* The arm of this rendezvous from this sender, or NULL. Under zc_lock. */
static struct pme_zarm *pme_zc_arm_find(struct pme_ep *ep, u32 rndv_id, u32 src_node,
					u16 src_ep)
{
	struct pme_zarm *arm;

	for (arm = ep->zc_arms; arm < ep->zc_arms + PME_ZC_ARMS_MAX; arm++)
		if (arm->zr && arm->rndv_id == rndv_id && arm->src_node == src_node &&
		    arm->src_ep == src_ep)
			return arm;
	return NULL;
}

/* End an arm; under zc_lock. The region stays cached unless it was dropped. */
static void pme_zc_arm_end(struct pme_ep *ep, struct pme_zarm *arm)
{
	pme_zreg_arm_drop(ep, arm->zr);
	arm->zr = NULL;
	WRITE_ONCE(ep->zc_narms, ep->zc_narms - 1);
}

/* PME_IOC_ZC_ARM */
long pme_zc_ioctl_arm(struct pme_ep *ep, void __user *arg)
{
	struct pme_zarm *arm, *free = NULL;
	struct pme_kzc_arm a;
	struct pme_zreg *zr;
	int rc = 0;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.pad || a.reserved[0] || a.reserved[1] || a.reserved[2])
		return -EINVAL;
	rc = pme_zreg_get(ep, a.addr, a.len, PME_KZC_RECV, true, &zr);
	if (rc)
		return rc;
	spin_lock_bh(&ep->zc_lock);
	for (arm = ep->zc_arms; arm < ep->zc_arms + PME_ZC_ARMS_MAX; arm++) {
		if (!arm->zr && !free)
			free = arm;
		else if (arm->zr && arm->rndv_id == a.rndv_id)
			rc = -EEXIST;
	}
	if (!rc && !free)
		rc = -ENOSPC;
	if (rc) {
		pme_zreg_arm_drop(ep, zr);
	} else {
		free->addr = a.addr;
		free->len = a.len;
		free->hwm = 0;
		free->rndv_id = a.rndv_id;
		free->src_node = a.src_node;
		free->src_ep = a.src_ep;
		free->zr = zr;
		WRITE_ONCE(ep->zc_narms, ep->zc_narms + 1);
	}
	spin_unlock_bh(&ep->zc_lock);
	if (rc) {
		mutex_lock(&ep->zc_mutex);
		pme_count(ep, PME_KCNT_ZC_REFUSED, 1);
		mutex_unlock(&ep->zc_mutex);
		pme_zreg_settle(ep);
	}
	return rc;
}

/*
 * PME_IOC_ZC_DISARM. Taking zc_lock waits for a packet handler writing into the
 * buffer on another CPU: once this returns, nothing writes into it any more.
 */
long pme_zc_ioctl_disarm(struct pme_ep *ep, u32 __user *arg)
{
	struct pme_zarm *arm;
	int rc = -ENOENT;
	u32 rndv_id;

	if (get_user(rndv_id, arg))
		return -EFAULT;
	spin_lock_bh(&ep->zc_lock);
	for (arm = ep->zc_arms; arm < ep->zc_arms + PME_ZC_ARMS_MAX; arm++) {
		if (arm->zr && arm->rndv_id == rndv_id) {
			pme_zc_arm_end(ep, arm);
			rc = 0;
			break;
		}
	}
	spin_unlock_bh(&ep->zc_lock);
	if (!rc)
		pme_zreg_settle(ep);
	return rc;
}

/* The file is closing: every arm ends (the regions go with pme_zreg_release). */
void pme_zc_disarm_all(struct pme_ep *ep)
{
	struct pme_zarm *arm;

	spin_lock_bh(&ep->zc_lock);
	for (arm = ep->zc_arms; arm < ep->zc_arms + PME_ZC_ARMS_MAX; arm++)
		if (arm->zr)
			pme_zc_arm_end(ep, arm);
	spin_unlock_bh(&ep->zc_lock);
}

/* Copy len bytes of skb from off into the region's pages at user address addr. */
static int pme_zc_copy_in(const struct pme_zreg *zr, u64 addr, const struct sk_buff *skb,
			  int off, unsigned int len)
{
	unsigned int po, n;
	struct page *page;
	void *va;
	int rc;

	while (len) {
		page = pme_zreg_page(zr, addr, &po);
		n = min_t(unsigned int, len, PAGE_SIZE - po);
		va = kmap_local_page(page);
		rc = skb_copy_bits(skb, off, va + po, n);
		kunmap_local(va);
		flush_dcache_page(page);
		if (rc)
			return rc;
		addr += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * pme_zc_place - place an RDATA frame's payload where its arm says
 * @ep: the endpoint it is addressed to (job and node matched)
 * @eth: its Ethernet header
 * @skb: the frame; its PME header starts at @off
 * @off: where
 * @plen: bytes of @skb from there on
 * @slot: the free receive slot the frame goes to
 *
 * Returns the bytes of headers written into @slot when the payload was placed, 0 when
 * the frame goes into the slot whole. Under ep->rx_lock, softirq or process context.
 */
unsigned int pme_zc_place(struct pme_ep *ep, const u8 *eth, const struct sk_buff *skb,
			  int off, unsigned int plen, struct pme_kslot *slot)
{
	u8 buf[PME_ZC_HDRS], *data = (u8 *)slot + PME_KSLOT_HDR_LEN;
	unsigned int wlen, paylen, flags = PME_KZC_PLACED;
	struct pme_zarm *arm;
	const u8 *h;
	u64 pos;

	if (!READ_ONCE(ep->zc_narms) || plen < PME_ZC_HDRS)
		return 0;
	h = skb_header_pointer(skb, off, PME_ZC_HDRS, buf);
	if (!h || !pme_kwire_v2_header(h[PME_WIRE_OFF_VERSION - ETH_HLEN]) ||
	    h[PME_WIRE_OFF_TYPE - ETH_HLEN] != PME_T_RDATA)
		return 0;
	wlen = get_unaligned_be16(h + PME_WIRE_OFF_LEN);
	if (wlen <= PME_ZC_SUB_LEN || wlen > plen - PME_KWIRE_V2_HDR_LEN)
		return 0;
	paylen = wlen - PME_ZC_SUB_LEN;
	pos = get_unaligned_be64(h + PME_KWIRE_V2_HDR_LEN + 8);

	spin_lock(&ep->zc_lock);
	arm = pme_zc_arm_find(ep, get_unaligned_be32(h + PME_KWIRE_V2_HDR_LEN),
			      get_unaligned_be32(h + PME_WIRE_OFF_SRC_NODE - ETH_HLEN),
			      get_unaligned_be16(h + PME_WIRE_OFF_SRC_EP - ETH_HLEN));
	if (!arm) {
		spin_unlock(&ep->zc_lock);
		return 0;
	}
	if (pos > arm->len || paylen > arm->len - pos) {
		/* Not this arm's: pme_core will judge it. */
		pme_count(ep, PME_KCNT_ZC_RX_COPIED, 1);
		spin_unlock(&ep->zc_lock);
		return 0;
	}
	if (pos != arm->hwm || !pme_zreg_usable(arm->zr, PME_KZC_RECV) ||
	    pme_zc_copy_in(arm->zr, arm->addr + pos, skb, off + PME_ZC_HDRS, paylen)) {
		/* Whole, to be copied by the process; what it covers is never placed. */
		arm->hwm = max(arm->hwm, pos + paylen);
		pme_count(ep, PME_KCNT_ZC_RX_COPIED, 1);
		spin_unlock(&ep->zc_lock);
		return 0;
	}
	arm->hwm = pos + paylen;
	WRITE_ONCE(slot->zc_addr, arm->addr + pos);
	if (arm->hwm == arm->len) {
		pme_zc_arm_end(ep, arm);
		flags |= PME_KZC_FINISHED;
	}
	spin_unlock(&ep->zc_lock);

	memcpy(data, eth, ETH_HLEN);
	memcpy(data + ETH_HLEN, h, PME_ZC_HDRS);
	WRITE_ONCE(slot->zc_len, paylen);
	WRITE_ONCE(slot->zc_flags, flags);
	pme_count(ep, PME_KCNT_ZC_RX_FRAMES, 1);
	pme_count(ep, PME_KCNT_ZC_RX_BYTES, paylen);
	return ETH_HLEN + PME_ZC_HDRS;
}

/* Attach [addr, addr + len) of the region's pinned pages to skb as fragments. */
static void pme_zc_attach(struct sk_buff *skb, const struct pme_zreg *zr, u64 addr,
			  unsigned int len)
{
	unsigned int po, n, i = 0;
	struct page *page;

	while (len) {
		page = pme_zreg_page(zr, addr, &po);
		n = min_t(unsigned int, len, PAGE_SIZE - po);
		get_page(page);	/* the fragment's own: dropped when the skb is freed */
		skb_fill_page_desc(skb, i++, page, po, n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		addr += n;
		len -= n;
	}
	/* The process may write the pages while the frame waits in a queue. */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
}

/*
 * The payload of a slot whose region the process no longer has pinned (it unmapped or
 * remapped the memory): copied from its address as the process sees it now, as the
 * copying path would; lost if nothing is mapped there.
 */
static int pme_zc_copy_from_user(struct pme_ep *ep, struct sk_buff *skb, u64 addr,
				 unsigned int len)
{
	pme_count(ep, PME_KCNT_ZC_TX_COPIED, 1);
	if (current->mm != ep->zc_mm || pskb_expand_head(skb, 0, len, GFP_KERNEL))
		return -EFAULT;
	if (copy_from_user(skb_put(skb, len), (const void __user *)(uintptr_t)addr, len))
		return -EFAULT;
	return 0;
}

/**
 * pme_zc_tx_skb - the skb of a PME_KTX_SEND_ZC slot
 * @ep: the sender; under its tx_lock
 * @dev: the interface
 * @slot: the slot: hlen bytes of headers, zc_len bytes of payload at zc_addr in region
 *	  zc_region
 * @hlen: its length, checked against the slot and the MTU by the caller
 *
 * Only version 2 RDATA frames go this way. Returns the skb (headers linear, payload in
 * fragments), ERR_PTR(-EINVAL) for a slot that names no payload of a region the
 * endpoint holds, -ENOMEM, or -EFAULT for a payload no longer there.
 */
struct sk_buff *pme_zc_tx_skb(struct pme_ep *ep, struct net_device *dev,
			      const struct pme_kslot *slot, unsigned int hlen)
{
	unsigned int plen = READ_ONCE(slot->zc_len);
	u64 addr = READ_ONCE(slot->zc_addr);
	struct pme_zreg *zr;
	struct sk_buff *skb;
	bool pinned;
	u8 *f;

	if (hlen < ETH_HLEN + PME_ZC_HDRS || !plen || plen > ETH_HLEN + dev->mtu - hlen ||
	    (plen >> PAGE_SHIFT) + 2 > MAX_SKB_FRAGS)
		return ERR_PTR(-EINVAL);
	skb = alloc_skb(LL_RESERVED_SPACE(dev) + hlen + dev->needed_tailroom, GFP_KERNEL);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	f = skb_put(skb, hlen);
	memcpy(f, (const u8 *)slot + PME_KSLOT_HDR_LEN, hlen);
	if (!pme_kwire_v2_header(f[PME_WIRE_OFF_VERSION]) || f[PME_WIRE_OFF_TYPE] != PME_T_RDATA)
		goto bad;

	spin_lock_bh(&ep->zc_lock);
	zr = pme_zreg_lookup(ep, READ_ONCE(slot->zc_region), addr, plen);
	pinned = zr && pme_zreg_usable(zr, PME_KZC_SEND);
	if (pinned)
		pme_zc_attach(skb, zr, addr, plen);
	spin_unlock_bh(&ep->zc_lock);
	if (!zr)
		goto bad;
	if (pinned) {
		pme_count(ep, PME_KCNT_ZC_TX_FRAMES, 1);
		pme_count(ep, PME_KCNT_ZC_TX_BYTES, plen);
	} else if (pme_zc_copy_from_user(ep, skb, addr, plen)) {
		kfree_skb(skb);
		return ERR_PTR(-EFAULT);
	}
	return skb;

bad:
	kfree_skb(skb);
	return ERR_PTR(-EINVAL);
}
