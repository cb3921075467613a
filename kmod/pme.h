/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pme.h - what the files of pme.ko share: the endpoint, its rings, the table the
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

#include "pme_ioctl.h"

/*
 * One endpoint: one open file of /dev/pme.
 *
 * Lifetime: allocated at open, freed at release after an RCU grace period, because the
 * packet handler may still be writing into its receive ring (it finds endpoints under
 * rcu_read_lock only). Release runs only when no mapping of the rings is left (each
 * mapping holds the file), so the rings outlive every user-space access.
 *
 * Locking:
 *  - pme_lock (global mutex) guards the endpoint table, the list of bound endpoints
 *    and ep->dev; the table's readers use RCU instead.
 *  - tx_lock serialises the doorbell against itself and against the notifier taking
 *    the interface away (which takes it inside pme_lock).
 *  - rx_lock (spinlock, taken in softirq) serialises the writers of the receive ring:
 *    the packet handler on any CPU and local delivery from another endpoint's doorbell.
 *  Order: rtnl -> pme_lock -> tx_lock -> rx_lock (of any endpoint).
 */
struct pme_ep {
	struct hlist_node hnode;        /* in pme_ep_table while reachable */
	struct list_head node;          /* in pme_eps while bound */
	struct rcu_head rcu;
	bool hashed;                    /* under pme_lock */

	/* Set once at bind, then constant until release. */
	bool bound;                     /* published with release; read with acquire */
	u16 ep_id;
	u32 job_id;
	u32 node_id;
	u32 incarnation;
	int ifindex;                    /* for the listing, when dev is gone */
	char ifname[IFNAMSIZ];
	pid_t pid;
	kuid_t uid;

	struct net_device *dev;         /* held while bound; NULL once the interface left */
	const void *key_dev;            /* the table's key: dev at bind, never dereferenced */
	u32 state;                      /* PME_KSTATE_*, mirrored into ctl->state */

	/* The mapped area: control page, receive ring, send ring (vmalloc_user). */
	void *mem;
	size_t mem_len;
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
};

/* pme_main.c */
extern u16 pme_ethertype;
extern unsigned int pme_max_ring_kb;

/* pme_file.c */
extern const struct file_operations pme_fops;

/* pme_ep.c: the table of bound endpoints and the interfaces' fate */
struct pme_ep *pme_ep_alloc(void);
int pme_ep_bind(struct pme_ep *ep, struct pme_kbind *b);
void pme_ep_release(struct pme_ep *ep);
struct pme_ep *pme_ep_lookup(const struct net_device *dev, u16 ep_id);
int pme_ep_notifier_register(void);
void pme_ep_notifier_unregister(void);
void pme_ep_wake(struct pme_ep *ep);
extern struct mutex pme_lock;
extern struct list_head pme_eps;

/* pme_ring.c: the mapped area */
int pme_ring_alloc(struct pme_ep *ep, u32 mtu, u32 rx_bytes, u32 tx_bytes);
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
	if (version == PME_KWIRE_V2)
		return PME_KWIRE_V2_HDR_LEN;
	return 0;
}

/* pme_rx.c: the packet handler */
void pme_rx_register(void);
void pme_rx_unregister(void);
int pme_rx_deliver(struct net_device *dev, const u8 *eth, struct sk_buff *skb,
		   int off);

/* pme_tx.c: the doorbell */
int pme_tx_kick(struct pme_ep *ep);

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
