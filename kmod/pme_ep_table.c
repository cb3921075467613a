// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table of bound endpoints: what the receive path uses for every frame. It finds
 * the endpoint a frame is addressed to by (interface, endpoint id), finds an
 * endpoint's siblings (the files one PME endpoint bound on its other interfaces) by
 * (endpoint id, incarnation), and wakes an endpoint's pollers. Binding, release and
 * the interfaces' events, which decide what is in the table, are pme_ep.c's.
 *
 * Locking: the table is read under rcu_read_lock, by the packet handler (softirq, or
 * process context for local delivery, pme_rx.c) and by the liveness code it calls
 * (pme_live.c), or under pme_lock by pme_ep.c when it claims an id. It is written only
 * through pme_ep_hash and pme_ep_unhash, under pme_lock (bind, release, and the
 * notifier letting go of an interface, which holds the endpoint's tx_lock too). An
 * endpoint taken out of the table is freed only after an RCU grace period
 * (pme_ep_release), so a reader may use an endpoint it found, and that endpoint's
 * peers, until its rcu_read_unlock.
 */
#include <linux/hashtable.h>
#include <linux/lockdep.h>
#include <linux/rculist.h>
#include <linux/wait.h>

#include "pme.h"

/* Bound endpoints by (interface, id): written under pme_lock, read under RCU. */
static DEFINE_HASHTABLE(pme_ep_table, 10);

static unsigned long pme_ep_key(const void *dev, u16 ep_id)
{
	return (unsigned long)dev ^ ep_id;
}

/*
 * The same bound endpoints by (endpoint id, incarnation), to find an endpoint's
 * siblings: the other open files one PME endpoint of a process bound on its other
 * interfaces (its rails, a mesh node's links). Same writers and readers.
 */
static DEFINE_HASHTABLE(pme_ep_siblings, 8);

static u32 pme_ep_sib_key(const struct pme_ep *ep)
{
	return ep->incarnation ^ ep->ep_id;
}

/*
 * Make a bound endpoint reachable by its key_dev and ep_id, and by its siblings.
 * Under pme_lock, with everything the readers look at already set.
 */
void pme_ep_hash(struct pme_ep *ep)
{
	lockdep_assert_held(&pme_lock);
	hash_add_rcu(pme_ep_table, &ep->hnode, pme_ep_key(ep->key_dev, ep->ep_id));
	hash_add_rcu(pme_ep_siblings, &ep->snode, pme_ep_sib_key(ep));
	ep->hashed = true;
}

/*
 * Take the endpoint out of both tables. Under pme_lock; readers that found it may go
 * on using it until their grace period ends.
 */
void pme_ep_unhash(struct pme_ep *ep)
{
	lockdep_assert_held(&pme_lock);
	hash_del_rcu(&ep->hnode);
	hash_del_rcu(&ep->snode);
	ep->hashed = false;
}

/* The endpoint bound to ep_id on dev; under rcu_read_lock or pme_lock. */
struct pme_ep *pme_ep_lookup(const struct net_device *dev, u16 ep_id)
{
	struct pme_ep *ep;

	hash_for_each_possible_rcu(pme_ep_table, ep, hnode, pme_ep_key(dev, ep_id),
				   lockdep_is_held(&pme_lock)) {
		if (ep->key_dev == dev && ep->ep_id == ep_id)
			return ep;
	}
	return NULL;
}

/* Whether s is another file of the PME endpoint ep is a file of (set at bind). */
static bool pme_ep_is_sibling(const struct pme_ep *s, const struct pme_ep *ep)
{
	return s != ep && s->ep_id == ep->ep_id && s->incarnation == ep->incarnation &&
	       s->pid == ep->pid && uid_eq(s->uid, ep->uid) && s->job_id == ep->job_id &&
	       s->live_flags == ep->live_flags;
}

/**
 * pme_ep_sibling_peer - a peer the endpoint's siblings sent to
 * @ep: the endpoint
 * @node: the peer's node
 * @ep_id: the peer's endpoint id
 * @owner: set to the sibling whose table holds the peer
 *
 * On a mesh a peer's frames may come in by another interface than ours go out to it;
 * its PINGs are answered where our frames go. Under rcu_read_lock: a sibling found is
 * not freed (nor its peers) before it is unlocked.
 */
struct pme_kpeer *pme_ep_sibling_peer(struct pme_ep *ep, __be32 node, __be16 ep_id,
				      struct pme_ep **owner)
{
	struct pme_kpeer *kp;
	struct pme_ep *s;

	hash_for_each_possible_rcu(pme_ep_siblings, s, snode, pme_ep_sib_key(ep)) {
		if (!pme_ep_is_sibling(s, ep))
			continue;
		spin_lock_bh(&s->live_lock);
		kp = pme_peers_find(s, node, ep_id);
		spin_unlock_bh(&s->live_lock);
		if (kp) {
			*owner = s;
			return kp;
		}
	}
	return NULL;
}

/* Wake pollers, without taking the queue's lock when nobody sleeps. */
void pme_ep_wake(struct pme_ep *ep)
{
	/*
	 * Order the ring or state write before the look at the wait queue; pme_poll has
	 * the matching barrier between joining the queue and reading the ring, so either
	 * it sees the write or we see it waiting.
	 */
	smp_mb();
	/* Safe unlocked thanks to the barrier pair above. */
	if (waitqueue_active(&ep->wq))
		wake_up_interruptible(&ep->wq);
}
