// SPDX-License-Identifier: GPL-2.0-only
/*
 * The area an endpoint maps: a control page, the receive ring and the
 * send ring, in one zeroed vmalloc allocation (so every receive slot starts out the
 * driver's and every send slot free).
 *
 * It is kernel memory a process asks for and keeps as long as its file is open, so it
 * is charged to the memory cgroup of the process that binds (GFP_KERNEL_ACCOUNT), and
 * the rings of one user's endpoints together are bounded by the user_ring_mb parameter:
 * without both, a member of group pme could hold max_ring_kb times its open files of
 * memory that no limit of the system sees.
 */
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "pme.h"

#define PME_RX_BYTES_DEFAULT SZ_4M
#define PME_TX_BYTES_DEFAULT SZ_1M
#define PME_SLOTS_MIN 8u
#define PME_SLOTS_MAX 65536u

static u32 pme_ring_slots(u32 bytes, u32 slot_size)
{
	return clamp(bytes / slot_size, PME_SLOTS_MIN, PME_SLOTS_MAX);
}

/* Ring memory held by one user's endpoints, for user_ring_mb. */
struct pme_ring_user {
	struct hlist_node hnode;
	kuid_t uid;
	u64 bytes;
};

static DEFINE_HASHTABLE(pme_ring_users, 6);
static DEFINE_MUTEX(pme_ring_users_lock);

/* The user's entry; under pme_ring_users_lock. */
static struct pme_ring_user *pme_ring_user_find(kuid_t uid)
{
	struct pme_ring_user *u;

	hash_for_each_possible(pme_ring_users, u, hnode, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * Count len bytes of rings against the calling user's share: -EDQUOT when they would
 * take it past user_ring_mb (0: no limit), -ENOMEM when there is no memory to count.
 */
static int pme_ring_charge(struct pme_ep *ep, size_t len)
{
	u64 limit = (u64)READ_ONCE(pme_user_ring_mb) << 20;
	kuid_t uid = current_uid();
	struct pme_ring_user *u, *fresh;
	int rc = 0;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	mutex_lock(&pme_ring_users_lock);
	u = pme_ring_user_find(uid);
	if (!u && fresh) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hash_add(pme_ring_users, &u->hnode, __kuid_val(uid));
	}
	if (!u) {
		rc = -ENOMEM;
	} else if (limit && u->bytes + len > limit) {
		rc = -EDQUOT;
		if (!u->bytes) {
			hash_del(&u->hnode);
			kfree(u);
		}
	} else {
		u->bytes += len;
		ep->ring_user = u;
		ep->ring_charged = len;
	}
	mutex_unlock(&pme_ring_users_lock);
	kfree(fresh);
	return rc;
}

/**
 * pme_ring_uncharge - give the rings' share back to their user
 * @ep: the endpoint; its rings are unreachable from user space (no mapping is left)
 */
void pme_ring_uncharge(struct pme_ep *ep)
{
	struct pme_ring_user *u = ep->ring_user;

	if (!u)
		return;
	mutex_lock(&pme_ring_users_lock);
	u->bytes -= ep->ring_charged;
	if (!u->bytes) {
		hash_del(&u->hnode);
		kfree(u);
	}
	mutex_unlock(&pme_ring_users_lock);
	ep->ring_user = NULL;
	ep->ring_charged = 0;
}

/**
 * pme_ring_alloc - size and allocate an endpoint's rings
 * @ep: the endpoint
 * @mtu: the interface's MTU: one slot holds one frame of it
 * @rx_bytes: receive ring size wanted, 0 for the default
 * @tx_bytes: send ring size wanted, 0 for the default
 *
 * Sizes beyond the module's max_ring_kb are cut down to it (the sizes given are
 * reported back by bind). Fails with -EDQUOT when the calling user's endpoints would
 * hold more than user_ring_mb, -ENOMEM when the memory (or the memory cgroup's
 * limit) does not allow it.
 */
int pme_ring_alloc(struct pme_ep *ep, u32 mtu, u32 rx_bytes, u32 tx_bytes)
{
	u64 cap = (u64)READ_ONCE(pme_max_ring_kb) << 10, budget;
	size_t rx_off, tx_off, len;
	u32 slot_size, rx, tx;
	int rc;

	slot_size = ALIGN(PME_KSLOT_HDR_LEN + ETH_HLEN + mtu, SMP_CACHE_BYTES);
	tx = pme_ring_slots(tx_bytes ?: PME_TX_BYTES_DEFAULT, slot_size);
	rx = pme_ring_slots(rx_bytes ?: PME_RX_BYTES_DEFAULT, slot_size);
	/* Over the limit: the send ring keeps at most a quarter, the rest receives. */
	budget = max_t(u64, cap / slot_size, 2 * PME_SLOTS_MIN);
	if (rx + tx > budget) {
		tx = min_t(u64, tx, max_t(u64, budget / 4, PME_SLOTS_MIN));
		rx = budget - tx;
	}
	rx_off = PAGE_SIZE;
	tx_off = PAGE_ALIGN(rx_off + (size_t)rx * slot_size);
	len = PAGE_ALIGN(tx_off + (size_t)tx * slot_size);
	rc = pme_ring_charge(ep, len);
	if (rc)
		return rc;
	/*
	 * vmalloc_user() takes no gfp flags, so pme_ring_mmap maps the pages itself. Over
	 * the cgroup's limit the bind fails (after reclaim) instead of calling its OOM
	 * killer: the caller asked for memory it may do without, and gets a clear error.
	 */
	ep->mem = __vmalloc(len, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN |
			    __GFP_RETRY_MAYFAIL);
	if (!ep->mem) {
		pme_ring_uncharge(ep);
		return -ENOMEM;
	}
	ep->mem_len = len;
	ep->slot_size = slot_size;
	ep->rx_slots = rx;
	ep->tx_slots = tx;
	ep->rx_ring = (u8 *)ep->mem + rx_off;
	ep->tx_ring = (u8 *)ep->mem + tx_off;
	ep->ctl = ep->mem;
	ep->ctl->abi_version = PME_ABI_VERSION;
	ep->ctl->rx_slots = rx;
	ep->ctl->tx_slots = tx;
	ep->ctl->slot_size = slot_size;
	ep->ctl->rx_offset = rx_off;
	ep->ctl->tx_offset = tx_off;
	return 0;
}

void pme_ring_free(struct pme_ep *ep)
{
	vfree(ep->mem);
	ep->mem = NULL;
}

/*
 * Map all or part of the area, shared only: a private copy of a ring would be a ring
 * the driver never sees. Each mapping holds the file, so the area lives as long. Page
 * by page, as remap_vmalloc_range() would, which wants a vmalloc_user() area.
 */
int pme_ring_mmap(struct pme_ep *ep, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long pages = ep->mem_len >> PAGE_SHIFT, off;
	int rc;

	/* Acquire: pairs with bind's release; ep->mem is set once it is seen. */
	if (!smp_load_acquire(&ep->bound))
		return -ENOTCONN;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff >= pages || len > (pages - vma->vm_pgoff) << PAGE_SHIFT)
		return -EINVAL;
	for (off = 0; off < len; off += PAGE_SIZE) {
		rc = vm_insert_page(vma, vma->vm_start + off,
				    vmalloc_to_page((u8 *)ep->mem +
						    (vma->vm_pgoff << PAGE_SHIFT) + off));
		if (rc)
			return rc;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	return 0;
}
