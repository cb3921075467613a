// SPDX-License-Identifier: GPL-2.0-only
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
 *
 * A flood of PINGs must not silence the answers to the true ones: each PING is answered
 * at most once (a window of nonces per peer, like pme_core's), only for a peer the
 * endpoint (or a sibling: its files on other interfaces) sent to and at the address
 * and interface it sends to (pme_peers.c), within a budget of that peer's own; a PING
 * over it, of a peer we do not know or of an incarnation other than the one answered
 * goes to the ring for the process to judge. Copies of a PING answered already are
 * dropped before any MAC is computed.
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
 * At most this many PONGs per peer and period: even a member of the job cannot make
 * the driver a traffic amplifier, nor use up the answers owed to another peer.
 */
#define PME_PONG_BURST 64
#define PME_PONG_PERIOD (HZ / 10)
/* Nonces of a peer's PINGs remembered below the highest one, as pme_core's window. */
#define PME_PING_WINDOW 64

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

/* What becomes of a PING. */
enum pme_ping_verdict {
	PME_PING_ANSWER,        /* fresh, of a peer we answer for: check it, answer it */
	PME_PING_PASS,          /* the process's to judge: into the ring */
	PME_PING_REFUSE,        /* a copy of one seen, or not authentic: dropped */
};

/*
 * The verdict on a PING of incarnation inc and nonce of peer kp (NULL: not one the
 * endpoint sent to), before its check; under live_lock.
 */
static enum pme_ping_verdict pme_ping_judge(const struct pme_kpeer *kp, __be32 inc, u64 nonce)
{
	u64 back;

	if (!kp)
		return PME_PING_PASS;	/* no address of it we could trust */
	if (!kp->ping_known)
		return PME_PING_ANSWER;	/* its first: it names the incarnation answered */
	/* Another one: a restart, or a PING recorded in an old run; pme_core knows which. */
	if (kp->ping_inc != inc)
		return kp->ping_relearn ? PME_PING_ANSWER : PME_PING_PASS;
	if (nonce > kp->ping_top)
		return PME_PING_ANSWER;
	back = kp->ping_top - nonce;
	if (back >= PME_PING_WINDOW || (kp->ping_seen & BIT_ULL(back)))
		return PME_PING_REFUSE;
	return PME_PING_ANSWER;
}

/* Remember an authentic PING that pme_ping_judge let through; under live_lock. */
static void pme_ping_mark(struct pme_kpeer *kp, __be32 inc, u64 nonce)
{
	u64 ahead;

	if (!kp->ping_known || kp->ping_inc != inc) {
		kp->ping_known = true;
		kp->ping_inc = inc;
		kp->ping_top = nonce;
		kp->ping_seen = 1;
	} else if (nonce > kp->ping_top) {
		ahead = nonce - kp->ping_top;
		kp->ping_seen = ahead >= PME_PING_WINDOW ? 1 : kp->ping_seen << ahead | 1;
		kp->ping_top = nonce;
	} else {
		kp->ping_seen |= BIT_ULL(kp->ping_top - nonce);
	}
	kp->ping_relearn = false;
}

/* Whether another PONG may go to the peer in this period; under live_lock. */
static bool pme_pong_allowed(struct pme_kpeer *kp)
{
	if (time_after(jiffies, kp->pong_period + PME_PONG_PERIOD)) {
		kp->pong_period = jiffies;
		kp->pong_count = 0;
	}
	if (kp->pong_count >= PME_PONG_BURST)
		return false;
	kp->pong_count++;
	return true;
}

/* Where a PONG goes: the interface and the MAC the endpoint's frames to the peer take. */
struct pme_ping_dest {
	struct net_device *dev;
	u8 mac[ETH_ALEN];
};

/*
 * Judge a PING that came in on dev: cheaply first, then by its check, then again under
 * the lock (another CPU may have answered the same copy meanwhile). The peer is looked
 * for in the endpoint's table, then in its siblings' (pme_ep_table.c). Under
 * rcu_read_lock.
 */
static enum pme_ping_verdict pme_ping_verdict(struct pme_ep *ep, struct net_device *dev,
					      u8 *h, unsigned int n, struct pme_ping_dest *to)
{
	const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)h;
	u64 nonce = be64_to_cpu(wh->nonce);
	struct pme_ep *owner = ep;
	enum pme_ping_verdict v;
	struct pme_kpeer *kp;

	spin_lock_bh(&ep->live_lock);
	kp = pme_peers_find(ep, wh->src_node, wh->src_ep);
	spin_unlock_bh(&ep->live_lock);
	if (!kp)
		kp = pme_ep_sibling_peer(ep, wh->src_node, wh->src_ep, &owner);
	spin_lock_bh(&owner->live_lock);
	v = pme_ping_judge(kp, wh->incarnation, nonce);
	spin_unlock_bh(&owner->live_lock);
	if (v != PME_PING_ANSWER)
		return v;
	if (!pme_live_verify(ep, h, n))
		return PME_PING_REFUSE;
	spin_lock_bh(&owner->live_lock);
	v = pme_ping_judge(kp, wh->incarnation, nonce);
	if (v == PME_PING_ANSWER) {
		pme_ping_mark(kp, wh->incarnation, nonce);
		if (pme_pong_allowed(kp))
			memcpy(to->mac, kp->mac, ETH_ALEN);
		else
			v = PME_PING_PASS;
	}
	spin_unlock_bh(&owner->live_lock);
	/* A sibling's interface may be going away: its notifier runs before a grace period. */
	to->dev = owner == ep ? dev : READ_ONCE(owner->dev);
	if (v == PME_PING_ANSWER && (!to->dev || !netif_running(to->dev)))
		v = PME_PING_PASS;
	return v;
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
 * Returns false when the frame goes to the endpoint's ring as any other: the driver
 * does not answer for the endpoint, or leaves this PING to the process (of a peer it
 * does not know, of another incarnation, over the peer's budget). Returns true when
 * the driver took the frame: answered, or refused and counted (malformed, a copy of
 * one answered, a bad check).
 */
bool pme_live_ping(struct pme_ep *ep, struct net_device *dev, const u8 *eth,
		   const struct sk_buff *skb, int off, unsigned int plen)
{
	u8 in[PME_HDR_LEN + sizeof(struct pme_wire_ping)];
	const struct pme_wire_hdr *wh = (const struct pme_wire_hdr *)in;
	const struct pme_wire_ping *ping = (const struct pme_wire_ping *)(wh + 1);
	struct pme_wire_ping pong = {};
	struct pme_ping_dest dest;
	enum pme_ping_verdict v;
	struct pme_live_to to;
	u8 out[PME_LIVE_FRAME];
	unsigned int n, len;

	if (!(ep->live_flags & PME_KBIND_LIVENESS))
		return false;
	n = PME_HDR_LEN + sizeof(*ping);
	if (plen < n || skb_copy_bits(skb, off, in, n) ||
	    get_unaligned_be16(&wh->len) != sizeof(*ping))
		v = PME_PING_REFUSE;
	else
		v = pme_ping_verdict(ep, dev, in, n, &dest);
	if (v == PME_PING_PASS) {
		pme_live_count(ep, PME_KCNT_PING_PASSED);
		return false;
	}
	if (v == PME_PING_REFUSE) {
		pme_live_count(ep, PME_KCNT_PING_REFUSED);
		return true;
	}
	pong.token = ping->token;
	/* To the peer its header names, where the endpoint's own frames to it go. */
	to.mac = dest.mac;
	to.dst_node = wh->src_node;
	/* The node the pinger knows us by: right even when we bound to any node. */
	to.src_node = wh->dst_node;
	to.dst_ep = wh->src_ep;
	to.rail = wh->rail;
	to.version = wh->version;
	len = pme_live_make(ep, dest.dev, out, &to, PME_T_PONG, &pong, sizeof(pong));
	if (pme_live_xmit(dest.dev, out, len, GFP_ATOMIC))
		pme_live_count(ep, PME_KCNT_PONG_SENT);
	return true;
}

/**
 * pme_live_bye_all - tell every peer the endpoint sent to that it is gone
 * @ep: the endpoint, unreachable already (its file is being released)
 * @dev: its interface, held by the caller
 */
void pme_live_bye_all(struct pme_ep *ep, struct net_device *dev)
{
	struct pme_live_to to;
	struct pme_kpeer *kp;
	u8 out[PME_LIVE_FRAME];
	unsigned int len;

	if (!(ep->live_flags & PME_KBIND_LIVENESS) || !netif_running(dev))
		return;
	/* Nobody adds peers any more: the doorbell cannot run on a file being released. */
	list_for_each_entry(kp, &ep->kpeer_list, node) {
		to.mac = kp->mac;
		to.dst_node = kp->dst_node;
		to.src_node = kp->src_node;
		to.dst_ep = kp->dst_ep;
		to.rail = kp->rail;
		to.version = kp->version;
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
