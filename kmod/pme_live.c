// SPDX-License-Identifier: GPL-2.0
/*
 * Answering for an endpoint while its process cannot: a PONG to every
 * authentic PING addressed to it for as long as its file is open (the process may be
 * computing for an hour, its receive ring full), and a BYE to every peer it sent to
 * once the file is closed (the process ended or was killed), so that those peers fail
 * at once instead of after their timeout.
 *
 * These frames must be as authentic as the job's own: they carry the job's MAC (GMAC,
 * AES-128, exactly as src/pme_core/wire.c computes it) or CRC32C, PME_F_KERNEL, and
 * nonces from a space of their own (PME_KNONCE_BASE), for which receivers keep a
 * replay window apart from the process's.
 */
#include <crypto/aes.h>
#include <crypto/algapi.h>
#include <crypto/gf128mul.h>
#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/skbuff.h>
#include <asm/unaligned.h>

#include "pme.h"

/*
 * At most this many PONGs per endpoint and period: a flood of PINGs (or of forged
 * ones under PME_AUTH=crc) cannot make the driver a traffic amplifier.
 */
#define PME_PONG_BURST 256
#define PME_PONG_PERIOD (HZ / 10)

#define PME_HDR_LEN ((unsigned int)sizeof(struct pme_wire_hdr))
/* The longest kernel-checked or kernel-made frame: a header and a ping body. */
#define PME_LIVE_FRAME (ETH_HLEN + PME_HDR_LEN + sizeof(struct pme_wire_ping))

/* Y = (Y xor each 16-byte block of p, zero-padded) * H, as GCM's GHASH. */
static void pme_ghash(be128 *y, const be128 *h, const u8 *p, unsigned int n)
{
	be128 x;
	unsigned int k;

	while (n) {
		k = min(n, 16u);
		memset(&x, 0, sizeof(x));
		memcpy(&x, p, k);
		be128_xor(y, y, &x);
		gf128mul_lle(y, h);
		p += k;
		n -= k;
	}
}

/*
 * The check of a PME header followed by its payload (n bytes in all) whose hops_left
 * and check[] the caller has zeroed: GMAC with the 20-byte IV of pme_wire.h, or
 * CRC32C in the first four bytes.
 */
static void pme_live_check_of(const struct pme_ep *ep, const u8 *h, unsigned int n,
			      u8 out[16])
{
	const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)h;
	be128 j0 = {}, y = {}, len;
	u8 iv[PME_WIRE_MAC_IV_BYTES] = {};

	memset(out, 0, 16);
	if (ep->live_flags & PME_KBIND_CHECK_CRC) {
		put_unaligned_be32(~__crc32c_le(~0u, h, n), out);
		return;
	}
	if (!(ep->live_flags & PME_KBIND_CHECK_MAC))
		return;
	memcpy(iv, &wh->src_node, 4);
	memcpy(iv + 4, &wh->src_ep, 2);
	memcpy(iv + 8, &wh->incarnation, 4);
	memcpy(iv + 12, &wh->nonce, 8);
	/* An IV that is not 96 bits long: J0 = GHASH(IV || pad || 0^64 || bits(IV)). */
	pme_ghash(&j0, &ep->ghash_key, iv, sizeof(iv));
	len.a = 0;
	len.b = cpu_to_be64(8 * sizeof(iv));
	pme_ghash(&j0, &ep->ghash_key, (u8 *)&len, sizeof(len));
	/* No plaintext: the tag is E(J0) xor GHASH(A || pad || bits(A) || 0^64). */
	pme_ghash(&y, &ep->ghash_key, h, n);
	len.a = cpu_to_be64(8ull * n);
	len.b = 0;
	pme_ghash(&y, &ep->ghash_key, (u8 *)&len, sizeof(len));
	aes_encrypt(&ep->aes, out, (u8 *)&j0);
	crypto_xor(out, (u8 *)&y, 16);
	memzero_explicit(&j0, sizeof(j0));
}

/* The flag a frame of this job must carry for its check. */
static u16 pme_live_check_flag(const struct pme_ep *ep)
{
	if (ep->live_flags & PME_KBIND_CHECK_MAC)
		return PME_F_CHECK_MAC;
	if (ep->live_flags & PME_KBIND_CHECK_CRC)
		return PME_F_CHECK_CRC;
	return 0;
}

/* Whether the frame's header and payload (h, n bytes, writable) carry a good check. */
static bool pme_live_verify(const struct pme_ep *ep, u8 *h, unsigned int n)
{
	struct pme_wire_hdr *wh = (struct pme_wire_hdr *)h;
	u16 kind = pme_live_check_flag(ep);
	u8 got[16], want[16];

	if ((get_unaligned_be16(&wh->flags) & (PME_F_CHECK_MAC | PME_F_CHECK_CRC)) != kind)
		return false;
	if (!kind)
		return true;
	memcpy(got, wh->check, sizeof(got));
	wh->hops_left = 0;
	memset(wh->check, 0, sizeof(wh->check));
	pme_live_check_of(ep, h, n, want);
	return !crypto_memneq(got, want, kind == PME_F_CHECK_MAC ? 16 : 4);
}

/* The fields of a kernel-made frame that differ from one frame to the next. */
struct pme_live_to {
	const u8 *mac;
	__be32 dst_node;
	__be32 src_node;
	__be16 dst_ep;
	u8 rail;
	u8 version;                     /* the one the peer and the endpoint speak */
};

/*
 * Write a complete, checked frame of the endpoint into f (PME_LIVE_FRAME bytes of
 * room); returns its length.
 */
static unsigned int pme_live_make(struct pme_ep *ep, const struct net_device *dev, u8 *f,
				  const struct pme_live_to *to, u8 type, const void *body,
				  u16 body_len)
{
	struct pme_wire_hdr *wh = (struct pme_wire_hdr *)(f + ETH_HLEN);
	u64 nonce = PME_KNONCE_BASE | (u64)atomic64_inc_return(&ep->knonce);

	memcpy(f, to->mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, dev->dev_addr, ETH_ALEN);
	put_unaligned_be16(pme_ethertype, f + 2 * ETH_ALEN);
	memset(wh, 0, sizeof(*wh));
	wh->dst_ep = to->dst_ep;
	wh->version = to->version;
	wh->type = type;
	wh->src_ep = cpu_to_be16(ep->ep_id);
	wh->len = cpu_to_be16(body_len);
	wh->dst_node = to->dst_node;
	wh->src_node = to->src_node;
	wh->rail = to->rail;
	wh->flags = cpu_to_be16(PME_F_KERNEL | pme_live_check_flag(ep));
	wh->job_id = cpu_to_be32(ep->job_id);
	wh->incarnation = cpu_to_be32(ep->incarnation);
	wh->nonce = cpu_to_be64(nonce);
	memcpy(wh + 1, body, body_len);
	pme_live_check_of(ep, (u8 *)wh, PME_HDR_LEN + body_len, wh->check);
	wh->hops_left = PME_HOP_LIMIT_DEFAULT;
	return ETH_HLEN + PME_HDR_LEN + body_len;
}

/* Send a kernel-made frame (to the wire, or to an endpoint of this host). */
static bool pme_live_xmit(struct net_device *dev, const u8 *f, unsigned int len, gfp_t gfp)
{
	struct sk_buff *skb;

	skb = alloc_skb(LL_RESERVED_SPACE(dev) + len + dev->needed_tailroom, gfp);
	if (!skb)
		return false;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_put_data(skb, f, len);
	skb->dev = dev;
	skb->protocol = htons(pme_ethertype);
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	pme_tx_out(NULL, dev, skb);
	return true;
}

/* Count on the endpoint under rx_lock: PONGs are counted from any CPU's softirq. */
static void pme_live_count(struct pme_ep *ep, enum pme_kcounter c)
{
	spin_lock_bh(&ep->rx_lock);
	pme_count(ep, c, 1);
	spin_unlock_bh(&ep->rx_lock);
}

/* Whether another PONG may go out in this period; under rx_lock. */
static bool pme_live_pong_allowed(struct pme_ep *ep)
{
	if (time_after(jiffies, ep->pong_period + PME_PONG_PERIOD)) {
		ep->pong_period = jiffies;
		ep->pong_count = 0;
	}
	return ep->pong_count++ < PME_PONG_BURST;
}

/**
 * pme_live_ping - answer a PING addressed to the endpoint
 * @ep: the endpoint it is addressed to (job and node already matched)
 * @dev: the interface it came on
 * @eth: its Ethernet header
 * @skb: the frame
 * @off: where its PME header starts in @skb
 * @plen: bytes of @skb from there on
 *
 * Returns false when the endpoint does not let the driver answer for it (the frame
 * goes to its ring as any other), true when the driver took the frame: answered, or
 * refused and counted (a bad check, a malformed PING, too many of them).
 */
bool pme_live_ping(struct pme_ep *ep, struct net_device *dev, const u8 *eth,
		   const struct sk_buff *skb, int off, unsigned int plen)
{
	u8 in[PME_HDR_LEN + sizeof(struct pme_wire_ping)];
	const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)in;
	const struct pme_wire_ping *ping = (const struct pme_wire_ping *)(wh + 1);
	struct pme_wire_ping pong = {};
	struct pme_live_to to;
	u8 out[PME_LIVE_FRAME];
	unsigned int n, len;
	bool ok;

	if (!(ep->live_flags & PME_KBIND_LIVENESS))
		return false;
	n = PME_HDR_LEN + sizeof(*ping);
	ok = plen >= n && !skb_copy_bits(skb, off, in, n) &&
	     get_unaligned_be16(&wh->len) == sizeof(*ping) && pme_live_verify(ep, in, n);
	if (ok) {
		spin_lock_bh(&ep->rx_lock);
		ok = pme_live_pong_allowed(ep);
		spin_unlock_bh(&ep->rx_lock);
	}
	if (!ok) {
		pme_live_count(ep, PME_KCNT_PING_REFUSED);
		return true;
	}
	pong.token = ping->token;
	to.mac = eth + ETH_ALEN;
	to.dst_node = wh->src_node;
	/* The node the pinger knows us by: right even when we bound to any node. */
	to.src_node = wh->dst_node;
	to.dst_ep = wh->src_ep;
	to.rail = wh->rail;
	to.version = wh->version;
	len = pme_live_make(ep, dev, out, &to, PME_T_PONG, &pong, sizeof(pong));
	if (pme_live_xmit(dev, out, len, GFP_ATOMIC))
		pme_live_count(ep, PME_KCNT_PONG_SENT);
	return true;
}

/**
 * pme_live_note - remember the destination of a frame the endpoint sends
 * @ep: the sender; under its tx_lock
 * @f: the frame as stamped (version 2's header)
 *
 * The table is bounded: a destination beyond it gets no BYE (and is counted then).
 */
void pme_live_note(struct pme_ep *ep, const u8 *f)
{
	const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)(f + ETH_HLEN);
	struct pme_kpeer *kp;
	u32 i;

	if (!(ep->live_flags & PME_KBIND_LIVENESS) || wh->type == PME_T_BYE ||
	    is_multicast_ether_addr(f))
		return;
	kp = &ep->kpeers[ep->kpeer_last];
	if (ep->nkpeers && kp->dst_ep == wh->dst_ep && kp->dst_node == wh->dst_node) {
		kp->version = wh->version;
		return;		/* the common case: the same peer as the last frame */
	}
	for (i = 0; i < ep->nkpeers; i++) {
		kp = &ep->kpeers[i];
		if (kp->dst_ep == wh->dst_ep && kp->dst_node == wh->dst_node) {
			kp->version = wh->version;
			ep->kpeer_last = i;
			return;
		}
	}
	if (ep->nkpeers == PME_KPEERS_MAX) {
		ep->kpeers_overflow = true;
		return;
	}
	kp = &ep->kpeers[ep->nkpeers];
	memcpy(kp->mac, f, ETH_ALEN);
	kp->dst_ep = wh->dst_ep;
	kp->dst_node = wh->dst_node;
	kp->src_node = wh->src_node;
	kp->rail = wh->rail;
	kp->version = wh->version;
	ep->kpeer_last = ep->nkpeers++;
}

/**
 * pme_live_bye_all - tell every peer the endpoint sent to that it is gone
 * @ep: the endpoint, unreachable already (its file is being released)
 * @dev: its interface, held by the caller
 */
void pme_live_bye_all(struct pme_ep *ep, struct net_device *dev)
{
	struct pme_live_to to;
	u8 out[PME_LIVE_FRAME];
	unsigned int len;
	u32 i;

	if (!(ep->live_flags & PME_KBIND_LIVENESS) || !netif_running(dev))
		return;
	for (i = 0; i < ep->nkpeers; i++) {
		to.mac = ep->kpeers[i].mac;
		to.dst_node = ep->kpeers[i].dst_node;
		to.src_node = ep->kpeers[i].src_node;
		to.dst_ep = ep->kpeers[i].dst_ep;
		to.rail = ep->kpeers[i].rail;
		to.version = ep->kpeers[i].version;
		len = pme_live_make(ep, dev, out, &to, PME_T_BYE, NULL, 0);
		if (pme_live_xmit(dev, out, len, GFP_KERNEL))
			pme_live_count(ep, PME_KCNT_BYE_SENT);
	}
	if (ep->kpeers_overflow)
		pme_live_count(ep, PME_KCNT_BYE_UNTRACKED);
}

/**
 * pme_live_setup - take the liveness part of a bind request
 * @ep: the endpoint being bound
 * @b: the request, checked by the caller; its key is wiped here
 */
void pme_live_setup(struct pme_ep *ep, struct pme_kbind *b)
{
	static const u8 zero[AES_BLOCK_SIZE];
	u8 key[AES_KEYSIZE_128];

	ep->live_flags = b->flags;
	atomic64_set(&ep->knonce, 0);
	if (b->flags & PME_KBIND_CHECK_MAC) {
		memcpy(key, b->liveness_key, sizeof(key));
		aes_expandkey(&ep->aes, key, sizeof(key));
		aes_encrypt(&ep->aes, (u8 *)&ep->ghash_key, zero);
		memzero_explicit(key, sizeof(key));
	}
	memzero_explicit(b->liveness_key, sizeof(b->liveness_key));
}

/* Forget the key before the endpoint's memory is freed. */
void pme_live_wipe(struct pme_ep *ep)
{
	memzero_explicit(&ep->aes, sizeof(ep->aes));
	memzero_explicit(&ep->ghash_key, sizeof(ep->ghash_key));
}
