// SPDX-License-Identifier: GPL-2.0-only
/*
 * Endpoints' lifecycle: allocating one at open, binding it to an interface and an id,
 * releasing it at close, and what happens to it when its interface goes down or away
 * (the netdev notifier). The table the packet handler finds endpoints in is
 * pme_ep_table.c's; this file decides what goes in and out of it.
 *
 * Locking: all of it runs in process context and may sleep, but the RCU callback
 * that frees an endpoint. pme_lock (defined here) serialises bind, release and the
 * notifier against one another: it guards the table's writes (pme_ep_hash and
 * pme_ep_unhash are called only from here), the list of bound endpoints pme_eps and
 * each ep->dev. The notifier runs under rtnl and takes pme_lock, then an endpoint's
 * tx_lock while it takes the interface away from the doorbell. An endpoint leaves the
 * table at release, or when its interface is unregistered, and is freed only after an
 * RCU grace period, since the packet handler may have found it under rcu_read_lock.
 */
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "pme.h"

/* Guards the endpoint table's writers, pme_eps and each ep->dev (see pme.h). */
DEFINE_MUTEX(pme_lock);
/* Every bound endpoint, for the notifier and /proc/driver/pme. */
LIST_HEAD(pme_eps);

struct pme_ep *pme_ep_alloc(void)
{
	struct pme_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL);

	if (!ep)
		return NULL;
	INIT_LIST_HEAD(&ep->node);
	spin_lock_init(&ep->rx_lock);
	mutex_init(&ep->tx_lock);
	init_waitqueue_head(&ep->wq);
	pme_peers_init(ep);
	pme_zreg_init(ep);
	return ep;
}

/* A free id on dev, or -EBUSY when all are taken. Under pme_lock. */
static int pme_ep_free_id(const struct net_device *dev)
{
	u32 id;

	for (id = 0; id <= PME_EP_ID_MAX; id++)
		if (!pme_ep_lookup(dev, id))
			return id;
	return -EBUSY;
}

static int pme_bind_check(const struct pme_kbind *b)
{
	size_t i;

	if (b->abi_version < PME_ABI_VERSION_OLDEST || b->abi_version > PME_ABI_VERSION)
		return -EPROTO;
	if ((b->flags & ~PME_KBIND_FLAGS) || b->pad)
		return -EINVAL;
	if (b->abi_version == 1 && b->flags)
		return -EINVAL;
	if ((b->flags & PME_KBIND_CHECK_CRC) && (b->flags & PME_KBIND_CHECK_MAC))
		return -EINVAL;
	/* A key without MAC checks would be one the caller thinks in use. */
	if (!(b->flags & PME_KBIND_CHECK_MAC) && (b->liveness_key[0] || b->liveness_key[1]))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(b->reserved); i++)
		if (b->reserved[i])
			return -EINVAL;
	if (b->ep_id > PME_EP_ID_MAX && b->ep_id != PME_KEP_ANY)
		return -EINVAL;
	if (b->ethertype && b->ethertype != pme_ethertype)
		return -EPROTONOSUPPORT;
	if (!memchr(b->ifname, 0, sizeof(b->ifname)) || !b->ifname[0])
		return -EINVAL;
	return 0;
}

static void pme_bind_report(const struct pme_ep *ep, struct pme_kbind *b)
{
	b->ep_id = ep->ep_id;
	b->ethertype = pme_ethertype;
	b->incarnation = ep->incarnation;
	b->rx_slots = ep->rx_slots;
	b->tx_slots = ep->tx_slots;
	b->slot_size = ep->slot_size;
	b->rx_offset = ep->ctl->rx_offset;
	b->tx_offset = ep->ctl->tx_offset;
	b->mmap_len = ep->mem_len;
}

/* Claim the id and make the endpoint reachable. Under pme_lock. */
static int pme_ep_insert(struct pme_ep *ep, struct net_device *dev, u16 want)
{
	int id = want;

	/*
	 * An interface being unregistered has run, or will run, our notifier; either way
	 * it must not gain an endpoint (and a reference) now. Once the notifier runs it
	 * waits for pme_lock, so anything inserted before that is seen and released.
	 */
	if (dev->reg_state != NETREG_REGISTERED)
		return -ENODEV;
	if (want == PME_KEP_ANY)
		id = pme_ep_free_id(dev);
	else if (pme_ep_lookup(dev, want))
		id = -EBUSY;
	if (id < 0)
		return id;
	ep->ep_id = id;
	ep->key_dev = dev;
	ep->dev = dev;
	/* Down since the check in bind? Its NETDEV_DOWN has passed, or waits for us. */
	ep->state = netif_running(dev) ? 0 : PME_KSTATE_DOWN;
	ep->ctl->state = ep->state;
	pme_ep_hash(ep);
	list_add_tail(&ep->node, &pme_eps);
	return 0;
}

/**
 * pme_ep_bind - tie an open file to an interface and an endpoint id
 * @ep: the file's endpoint, not bound yet
 * @b: the request; filled with the result on success
 *
 * The interface is looked up in the caller's network namespace. The endpoint holds a
 * reference on it until release or until it is unregistered.
 */
int pme_ep_bind(struct pme_ep *ep, struct pme_kbind *b)
{
	struct net_device *dev;
	int rc;

	rc = pme_bind_check(b);
	if (rc)
		return rc;
	dev = dev_get_by_name(current->nsproxy->net_ns, b->ifname);
	if (!dev)
		return -ENODEV;
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN) {
		rc = -EOPNOTSUPP;
		goto out_put;
	}
	if (!netif_running(dev)) {
		rc = -ENETDOWN;
		goto out_put;
	}
	mutex_lock(&pme_lock);
	if (ep->bound) {
		rc = -EISCONN;
		goto out_unlock;
	}
	b->mtu = READ_ONCE(dev->mtu);
	memcpy(b->mac, dev->dev_addr, ETH_ALEN);
	rc = pme_ring_alloc(ep, b->mtu, b->rx_bytes, b->tx_bytes);
	if (rc)
		goto out_unlock;
	ep->abi = b->abi_version;
	ep->job_id = b->job_id;
	ep->node_id = b->node_id;
	ep->incarnation = b->incarnation;
	while (!ep->incarnation)
		ep->incarnation = get_random_u32();
	ep->ifindex = dev->ifindex;
	strscpy(ep->ifname, b->ifname, sizeof(ep->ifname));
	ep->pid = task_tgid_nr(current);
	ep->uid = current_uid();
	pme_live_setup(ep, b);
	rc = pme_ep_insert(ep, dev, b->ep_id);
	if (rc) {
		pme_ring_uncharge(ep);
		pme_ring_free(ep);
		goto out_unlock;
	}
	pme_bind_report(ep, b);
	/* mmap, poll and the doorbell look at the rings only once this is seen. */
	smp_store_release(&ep->bound, true);
	mutex_unlock(&pme_lock);
	return 0;	/* the reference on dev now belongs to ep */

out_unlock:
	mutex_unlock(&pme_lock);
out_put:
	dev_put(dev);
	return rc;
}

static void pme_ep_free_rcu(struct rcu_head *head)
{
	struct pme_ep *ep = container_of(head, struct pme_ep, rcu);

	pme_ring_free(ep);	/* vfree defers itself when called here, in softirq */
	pme_live_wipe(ep);
	pme_peers_free(ep);
	kfree(ep);
}

/*
 * The file is closed and no mapping is left. Unreachable at once; freed after every
 * packet handler that may have found it under RCU is done with it.
 */
void pme_ep_release(struct pme_ep *ep)
{
	struct net_device *dev;

	mutex_lock(&pme_lock);
	if (ep->hashed)
		pme_ep_unhash(ep);
	list_del(&ep->node);
	dev = ep->dev;
	WRITE_ONCE(ep->dev, NULL);
	mutex_unlock(&pme_lock);
	if (dev) {
		/* The process is gone, or closed the file: its peers need not wait. */
		pme_live_bye_all(ep, dev);
		dev_put(dev);
	}
	/*
	 * A packet handler that found the endpoint before it went out of the table may
	 * still run: once the arms are gone it writes into no user page, and the pages
	 * are unpinned only after that (the frames sent from them hold their own refs).
	 */
	pme_zc_disarm_all(ep);
	pme_zreg_release(ep);
	/* No mapping is left (each holds the file): the memory is the driver's alone. */
	pme_ring_uncharge(ep);
	call_rcu(&ep->rcu, pme_ep_free_rcu);
}

static void pme_ep_set_state(struct pme_ep *ep, u32 state)
{
	WRITE_ONCE(ep->state, state);
	WRITE_ONCE(ep->ctl->state, state);
	pme_ep_wake(ep);
}

/*
 * The interface is being unregistered (deleted, or moved to another namespace): each
 * endpoint on it lets go of its reference, so that the unregistration can finish,
 * and becomes dead. The doorbell holds tx_lock while it uses ep->dev. Under rtnl.
 */
static void pme_ep_detach(struct net_device *dev)
{
	struct pme_ep *ep;

	mutex_lock(&pme_lock);
	list_for_each_entry(ep, &pme_eps, node) {
		if (ep->dev != dev)
			continue;
		mutex_lock(&ep->tx_lock);
		pme_ep_unhash(ep);
		WRITE_ONCE(ep->dev, NULL);
		mutex_unlock(&ep->tx_lock);
		dev_put(dev);
		pme_ep_set_state(ep, ep->state | PME_KSTATE_GONE);
	}
	mutex_unlock(&pme_lock);
}

static void pme_ep_updown(struct net_device *dev, bool up)
{
	struct pme_ep *ep;

	mutex_lock(&pme_lock);
	list_for_each_entry(ep, &pme_eps, node) {
		if (ep->dev != dev)
			continue;
		pme_ep_set_state(ep, up ? ep->state & ~PME_KSTATE_DOWN :
					  ep->state | PME_KSTATE_DOWN);
	}
	mutex_unlock(&pme_lock);
}

static int pme_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_UNREGISTER:
		pme_ep_detach(dev);
		break;
	case NETDEV_DOWN:
		pme_ep_updown(dev, false);
		break;
	case NETDEV_UP:
		pme_ep_updown(dev, true);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block pme_netdev_nb = {
	.notifier_call = pme_netdev_event,
};

int pme_ep_notifier_register(void)
{
	return register_netdevice_notifier(&pme_netdev_nb);
}

void pme_ep_notifier_unregister(void)
{
	unregister_netdevice_notifier(&pme_netdev_nb);
}
