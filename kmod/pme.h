/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of pme.ko share: the endpoint, its rings, the table the
 * packet handler looks endpoints up in, and the counters.
 */
#ifndef PME_KMOD_H
#define PME_KMOD_H

#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <crypto/aes.h>
#include <crypto/b128ops.h>

#include "pme_ioctl.h"

/* Zero copy: regions and arms one endpoint may hold at once. */
#define PME_ZC_REGIONS_MAX 256
#define PME_ZC_ARMS_MAX 64

struct pme_zreg;

/* An armed rendezvous receive (pme_zc.c); free while zr is NULL. Under zc_lock. */
struct pme_zarm {
	struct pme_zreg *zr;            /* the region it writes into, one use of it held */
	u64 addr;                       /* user address of offset 0 */
	u64 len;                        /* bytes expected */
	u64 hwm;                        /* end of the furthest frame seen: placed are below */
	u32 rndv_id;
	u32 src_node;
	u16 src_ep;
};

/*
 * Peers an endpoint remembers having sent to: for the BYEs when its file closes, and
 * the only sources whose PINGs the driver answers, at the address the endpoint itself
 * sends them to (pme_peers.c, pme_live.c).
 */
#define PME_KPEERS_MAX 4096
#define PME_KPEER_HASH_BITS 8

struct pme_kpeer {
	struct hlist_node hnode;        /* in ep->kpeer_hash */
	struct list_head node;          /* in ep->kpeer_list, in the order met */
	/* Set when added, then constant: what the table is searched by. */
	__be16 dst_ep;
	__be32 dst_node;
	/* From the endpoint's latest frame to it; under live_lock. */
	u8 mac[ETH_ALEN];
	__be32 src_node;                /* the node it knows us by (as stamped) */
	u8 rail;
	u8 version;                     /* the wire version the endpoint speaks to it */
	/* Its PINGs (pme_live.c); under live_lock. */
	bool ping_known;                /* ping_inc is the incarnation whose PINGs we answer */
	bool ping_relearn;              /* its next authentic PING may name another one */
	__be32 ping_inc;
	u64 ping_top;                   /* the highest nonce of ping_inc answered */
	u64 ping_seen;                  /* bit i: nonce ping_top - i seen */
	unsigned long pong_period;      /* start of its PONG rate period, jiffies */
	u32 pong_count;                 /* PONGs sent to it in that period */
};

/*
 * One endpoint: one open file of /dev/pme.
 *
 * Lifetime: allocated at open, freed at release after an RCU grace period, because the
 * packet handler may still be writing into its receive ring (it finds endpoints under
 * rcu_read_lock only). Release runs only when no mapping of the rings is left (each
 * mapping holds the file), so the rings outlive every user-space access.
 *
 * Locking:
 *  - pme_lock (global mutex) guards the endpoint table (pme_ep_table.c), the list of
 *    bound endpoints and ep->dev; the table's readers use RCU instead.
 *  - tx_lock serialises the doorbell against itself and against the notifier taking
 *    the interface away (which takes it inside pme_lock).
 *  - rx_lock (spinlock, taken in softirq) serialises the writers of the receive ring:
 *    the packet handler on any CPU and local delivery from another endpoint's doorbell.
 *  - zc_mutex serialises the zero-copy ioctls, the cache of regions and its reaper;
 *    zc_lock (spinlock, taken in softirq and by the MMU notifier, which may not sleep)
 *    guards each region's pages, validity and users, and the arms.
 *  - live_lock (spinlock, taken in softirq) guards the table of peers as the packet
 *    handler reads it (peers are added under tx_lock too) and their PING state.
 *  Order: rtnl -> pme_lock -> tx_lock -> zc_mutex -> mmap_lock -> rx_lock -> zc_lock
 *  (the MMU notifier runs under mmap_lock and takes only zc_lock); live_lock is taken
 *  with no other spinlock held, and takes none.
 */
struct pme_ep {
	struct hlist_node hnode;        /* in pme_ep_table while reachable */
	struct hlist_node snode;        /* in pme_ep_siblings while reachable */
	struct list_head node;          /* in pme_eps while bound */
	struct rcu_head rcu;
	bool hashed;                    /* under pme_lock */

	/* Set once at bind, then constant until release. */
	bool bound;                     /* published with release; read with acquire */
	u32 abi;                        /* the ABI version the process bound with */
	u16 ep_id;
	u32 job_id;
	u32 node_id;
	u32 incarnation;
	int ifindex;                    /* for the listing, when dev is gone */
	char ifname[IFNAMSIZ];
	pid_t pid;
	kuid_t uid;

	/* Held while bound; NULL once the interface left (read under RCU by a sibling). */
	struct net_device *dev;
	const void *key_dev;            /* the table's key: dev at bind, never dereferenced */
	u32 state;                      /* PME_KSTATE_*, mirrored into ctl->state */

	/* The mapped area: control page, receive ring, send ring (pme_ring.c). */
	void *mem;
	size_t mem_len;
	struct pme_ring_user *ring_user;        /* whose share it is counted in */
	size_t ring_charged;
	struct pme_kring_ctl *ctl;
	u8 *rx_ring;
	u8 *tx_ring;
	u32 rx_slots;
	u32 tx_slots;
	u32 slot_size;

	spinlock_t rx_lock;             /* receive ring writers, receive counters */
	u32 rx_head;                    /* next slot the driver fills; under rx_lock */
	struct mutex tx_lock;           /* the doorbell, send counters, ep->dev's use */
	u32 tx_tail;                    /* next slot the doorbell reads; under tx_lock */

	wait_queue_head_t wq;           /* pollers: frames came, slots freed, state changed */

	/* Receive counters change under rx_lock, send counters under tx_lock. */
	u64 cnt[PME_KCNT_NR];

	/* Liveness (pme_live.c): set at bind before the endpoint is reachable. */
	u32 live_flags;                 /* PME_KBIND_* */
	struct crypto_aes_ctx aes;      /* the job key's schedule (PME_KBIND_CHECK_MAC) */
	be128 ghash_key;                /* E_K(0^128), GHASH's key */
	atomic64_t knonce;              /* kernel frames sent so far */
	/*
	 * Destinations of the endpoint's frames (pme_peers.c): added under tx_lock and
	 * live_lock, never removed before the endpoint is freed.
	 */
	spinlock_t live_lock;
	DECLARE_HASHTABLE(kpeer_hash, PME_KPEER_HASH_BITS);
	struct list_head kpeer_list;
	u32 nkpeers;                    /* under tx_lock */
	struct pme_kpeer *kpeer_last;   /* the last one sent to; under tx_lock */
	bool kpeers_overflow;           /* one more was not remembered; under tx_lock */

	/* Zero copy (pme_zreg.c, pme_zc.c); the locks are described above. */
	struct mutex zc_mutex;          /* the zero-copy ioctls, the cache, its reaper */
	spinlock_t zc_lock;             /* regions' pages, validity and users; the arms */
	/* id -> struct pme_zreg: added under zc_mutex, erased under both, read under either */
	struct xarray zc_regions;
	struct list_head zc_lru;        /* the regions, most recently used first; zc_mutex */
	u32 zc_nregions;                /* under zc_mutex */
	struct mm_struct *zc_mm;        /* whose memory the regions are (mmgrab held) */
	struct work_struct zc_reaper;   /* unpins what the notifier dropped */
	struct pme_zarm zc_arms[PME_ZC_ARMS_MAX]; /* under zc_lock */
	u32 zc_narms;                   /* under zc_lock; read unlocked as a hint */
};

/* pme_main.c */
extern u16 pme_ethertype;
extern unsigned int pme_max_ring_kb;
extern unsigned int pme_user_ring_mb;

/* pme_file.c */
extern const struct file_operations pme_fops;

/* pme_ep.c: endpoints' lifecycle (bind, release) and the interfaces' fate */
struct pme_ep *pme_ep_alloc(void);
int pme_ep_bind(struct pme_ep *ep, struct pme_kbind *b);
void pme_ep_release(struct pme_ep *ep);
int pme_ep_notifier_register(void);
void pme_ep_notifier_unregister(void);
extern struct mutex pme_lock;
extern struct list_head pme_eps;

/*
 * pme_ep_table.c: the table of bound endpoints, read under RCU by the receive path;
 * written (pme_ep_hash, pme_ep_unhash) under pme_lock by pme_ep.c only.
 */
void pme_ep_hash(struct pme_ep *ep);
void pme_ep_unhash(struct pme_ep *ep);
struct pme_ep *pme_ep_lookup(const struct net_device *dev, u16 ep_id);
struct pme_kpeer *pme_ep_sibling_peer(struct pme_ep *ep, __be32 node, __be16 ep_id,
				      struct pme_ep **owner);
void pme_ep_wake(struct pme_ep *ep);

/* pme_ring.c: the mapped area */
struct pme_ring_user;
int pme_ring_alloc(struct pme_ep *ep, u32 mtu, u32 rx_bytes, u32 tx_bytes);
void pme_ring_uncharge(struct pme_ep *ep);
void pme_ring_free(struct pme_ep *ep);
int pme_ring_mmap(struct pme_ep *ep, struct vm_area_struct *vma);

static inline struct pme_kslot *pme_rx_slot(const struct pme_ep *ep, u32 i)
{
	return (struct pme_kslot *)(ep->rx_ring + (size_t)i * ep->slot_size);
}

static inline struct pme_kslot *pme_tx_slot(const struct pme_ep *ep, u32 i)
{
	return (struct pme_kslot *)(ep->tx_ring + (size_t)i * ep->slot_size);
}

/* Of the PME header (not the frame): the bytes after it, be16, from version 2 on. */
#define PME_WIRE_OFF_LEN 6

/*
 * Bytes of PME header the driver needs to see in a frame of this version and type, or
 * 0 for a version it does not carry. A VERSION_NAK keeps its frozen 16-byte layout in
 * every version, so that peers of any version can tell each other what they speak.
 */
static inline unsigned int pme_wire_hdr_need(u8 version, u8 type)
{
	if (type == PME_T_VERSION_NAK)
		return 16;
	if (version == PME_KWIRE_V1)
		return PME_KWIRE_V1_HDR_LEN;
	if (pme_kwire_v2_header(version))
		return PME_KWIRE_V2_HDR_LEN;
	return 0;
}

/* pme_zreg.c: regions of user memory pinned for zero copy, and their cache */
void pme_zreg_init(struct pme_ep *ep);
void pme_zreg_release(struct pme_ep *ep);
int pme_zreg_get(struct pme_ep *ep, u64 addr, u64 len, u32 access, bool arm,
		 struct pme_zreg **out);
int pme_zreg_put(struct pme_ep *ep, u32 id);
void pme_zreg_arm_drop(struct pme_ep *ep, struct pme_zreg *zr);
void pme_zreg_settle(struct pme_ep *ep);
bool pme_zreg_usable(const struct pme_zreg *zr, u32 access);
struct pme_zreg *pme_zreg_lookup(struct pme_ep *ep, u32 id, u64 addr, u64 len);
struct page *pme_zreg_page(const struct pme_zreg *zr, u64 addr, unsigned int *off);
long pme_zreg_ioctl_reg(struct pme_ep *ep, void __user *arg);
long pme_zreg_ioctl_unreg(struct pme_ep *ep, u32 __user *arg);
extern unsigned int pme_zc_max_region_mb;
extern unsigned int pme_zc_cache_mb;

/* pme_zc.c: the zero-copy data path: armed receives, sends from pinned pages */
long pme_zc_ioctl_arm(struct pme_ep *ep, void __user *arg);
long pme_zc_ioctl_disarm(struct pme_ep *ep, u32 __user *arg);
void pme_zc_disarm_all(struct pme_ep *ep);
unsigned int pme_zc_place(struct pme_ep *ep, const u8 *eth, const struct sk_buff *skb,
			  int off, unsigned int plen, struct pme_kslot *slot);
struct sk_buff *pme_zc_tx_skb(struct pme_ep *ep, struct net_device *dev,
			      const struct pme_kslot *slot, unsigned int hlen);

/* pme_rx.c: the packet handler */
void pme_rx_register(void);
void pme_rx_unregister(void);
int pme_rx_deliver(struct net_device *dev, const u8 *eth, struct sk_buff *skb,
		   int off);

/* pme_tx.c: the doorbell */
int pme_tx_kick(struct pme_ep *ep);
void pme_tx_out(struct pme_ep *ep, struct net_device *dev, struct sk_buff *skb);

/* pme_peers.c: the peers an endpoint sent to */
void pme_peers_init(struct pme_ep *ep);
void pme_peers_note(struct pme_ep *ep, const u8 *f);
struct pme_kpeer *pme_peers_find(struct pme_ep *ep, __be32 node, __be16 ep_id);
void pme_peers_free(struct pme_ep *ep);

/* pme_live.c: PONG and BYE on the endpoint's behalf */
struct pme_kbind;
void pme_live_setup(struct pme_ep *ep, struct pme_kbind *b);
void pme_live_wipe(struct pme_ep *ep);
bool pme_live_ping(struct pme_ep *ep, struct net_device *dev, const u8 *eth,
		   const struct sk_buff *skb, int off, unsigned int plen);
void pme_live_bye_all(struct pme_ep *ep, struct net_device *dev);

/* pme_stats.c: counters, sysfs and /proc */
int pme_stats_init(void);
void pme_stats_exit(void);
void pme_count_global(enum pme_kcounter c, u64 n);
void pme_stats_global(struct pme_kcounters *out);
void pme_stats_ep(const struct pme_ep *ep, struct pme_kcounters *out);
extern const struct attribute_group *pme_attr_groups[];

/* Count on the endpoint (under the lock of that counter's direction) and globally. */
static inline void pme_count(struct pme_ep *ep, enum pme_kcounter c, u64 n)
{
	if (ep)
		ep->cnt[c] += n;
	pme_count_global(c, n);
}

#endif /* PME_KMOD_H */
