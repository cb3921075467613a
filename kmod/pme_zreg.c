// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regions of a process's memory pinned for zero copy, and the cache that
 * keeps them pinned between uses.
 *
 * A region is a run of whole pages pinned with pin_user_pages_fast(FOLL_LONGTERM),
 * charged to the process's RLIMIT_MEMLOCK (mm->pinned_vm, as RDMA drivers do) and
 * watched by an mmu_interval_notifier. The process holds a region (PME_IOC_ZC_REG) to
 * send from it, an arm (pme_zc.c) uses one to receive into it. A region nobody uses
 * stays pinned in the cache, up to zc_cache_mb per endpoint, so that a buffer sent or
 * received again is not pinned again: Open-MX's registration cache. When the process
 * unmaps, remaps or replaces any page of a region the notifier drops it at once:
 * nothing is written into it or sent from it any more, and the reaper (a work item,
 * because the notifier may not sleep) unpins its pages and, once nobody uses it,
 * removes it.
 */
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pme.h"

/* Pages pinned per call: bounds the time between two looks at a pending signal. */
#define PME_ZREG_PIN_CHUNK 512
/* Pinning races an invalidation of the same range at most this often. */
#define PME_ZREG_PIN_TRIES 3

struct pme_zreg {
	struct mmu_interval_notifier mni;
	struct list_head lru;           /* in ep->zc_lru; under zc_mutex */
	struct pme_ep *ep;
	unsigned long start;            /* address of the first page */
	unsigned long npages;
	u32 id;
	u32 access;                     /* PME_KZC_SEND and/or PME_KZC_RECV */
	/* Under ep->zc_lock. */
	struct page **pages;            /* pinned; NULL once the notifier dropped them */
	struct page **dead;             /* pages it dropped, for the reaper to unpin */
	u32 holds;                      /* PME_IOC_ZC_REG not yet let go */
	u32 arms;                       /* arms writing into it */
};

unsigned int pme_zc_max_region_mb = 1024;
module_param_named(zc_max_region_mb, pme_zc_max_region_mb, uint, 0644);
MODULE_PARM_DESC(zc_max_region_mb, "Largest region one zero-copy registration pins, MiB (default 1024)");

unsigned int pme_zc_cache_mb = 64;
module_param_named(zc_cache_mb, pme_zc_cache_mb, uint, 0644);
MODULE_PARM_DESC(zc_cache_mb, "Idle zero-copy regions one endpoint keeps pinned, MiB (default 64)");

/* Unpin the region's pages and give back what pinning them charged. Under zc_mutex. */
static void pme_zreg_unpin(struct pme_ep *ep, struct pme_zreg *zr, struct page **pages)
{
	if (zr->access & PME_KZC_RECV)
		unpin_user_pages_dirty_lock(pages, zr->npages, true);
	else
		unpin_user_pages(pages, zr->npages);
	kvfree(pages);
	atomic64_sub(zr->npages, &ep->zc_mm->pinned_vm);
	pme_count(ep, PME_KCNT_ZC_PINNED_PAGES, -(u64)zr->npages);
}

/* Whether nobody uses the region. Under zc_lock. */
static bool pme_zreg_idle(const struct pme_zreg *zr)
{
	return !zr->holds && !zr->arms;
}

/*
 * Remove a region whatever its users (the caller knows there are none, or is closing
 * the endpoint): no lookup finds it after the erase, no notifier call runs after the
 * remove, and its pages go back. Under zc_mutex, which may sleep here.
 */
static void pme_zreg_destroy(struct pme_ep *ep, struct pme_zreg *zr)
{
	struct page **pages, **dead;

	spin_lock_bh(&ep->zc_lock);
	xa_erase(&ep->zc_regions, zr->id);
	pages = zr->pages;
	dead = zr->dead;
	zr->pages = NULL;
	zr->dead = NULL;
	spin_unlock_bh(&ep->zc_lock);
	list_del(&zr->lru);
	ep->zc_nregions--;
	/* Waits for a notifier call on this range that is still running. */
	mmu_interval_notifier_remove(&zr->mni);
	if (pages)
		pme_zreg_unpin(ep, zr, pages);
	if (dead)
		pme_zreg_unpin(ep, zr, dead);
	kfree(zr);
}

/* Unpin what the notifier dropped; remove dropped regions nobody uses. */
static void pme_zreg_reap(struct work_struct *work)
{
	struct pme_ep *ep = container_of(work, struct pme_ep, zc_reaper);
	struct pme_zreg *zr, *tmp;
	struct page **dead;
	bool gone;

	mutex_lock(&ep->zc_mutex);
	list_for_each_entry_safe(zr, tmp, &ep->zc_lru, lru) {
		spin_lock_bh(&ep->zc_lock);
		dead = zr->dead;
		zr->dead = NULL;
		gone = !zr->pages && pme_zreg_idle(zr);
		spin_unlock_bh(&ep->zc_lock);
		if (dead)
			pme_zreg_unpin(ep, zr, dead);
		if (gone)
			pme_zreg_destroy(ep, zr);
	}
	mutex_unlock(&ep->zc_mutex);
}

/*
 * The notifier: the process changes the mapping of some of the region's pages. Events
 * that leave every page where it is (protection changes, NUMA hinting, the write
 * protection of fork, which copies pinned pages for the child instead) keep the
 * region; any other drops it. Runs under the mm's locks, perhaps where it may not
 * sleep: it takes only zc_lock and leaves the unpinning to the reaper.
 */
static bool pme_zreg_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range, unsigned long cur_seq)
{
	struct pme_zreg *zr = container_of(mni, struct pme_zreg, mni);
	struct pme_ep *ep = zr->ep;
	bool dropped = false;

	spin_lock_bh(&ep->zc_lock);
	mmu_interval_set_seq(mni, cur_seq);
	switch (range->event) {
	case MMU_NOTIFY_PROTECTION_VMA:
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
		break;
	default:
		if (zr->pages) {
			zr->dead = zr->pages;
			zr->pages = NULL;
			dropped = true;
			pme_count(ep, PME_KCNT_ZC_INVALIDATIONS, 1);
		}
	}
	spin_unlock_bh(&ep->zc_lock);
	if (dropped)
		schedule_work(&ep->zc_reaper);
	return true;
}

static const struct mmu_interval_notifier_ops pme_zreg_mni_ops = {
	.invalidate = pme_zreg_invalidate,
};

/* Pin the region's pages, unless an invalidation of the range got in the way. */
static int pme_zreg_pin_once(struct pme_ep *ep, struct pme_zreg *zr, struct page **pages)
{
	unsigned int gup = FOLL_LONGTERM | (zr->access & PME_KZC_RECV ? FOLL_WRITE : 0);
	unsigned long done = 0, seq, n;
	int rc = 0;

	seq = mmu_interval_read_begin(&zr->mni);
	while (done < zr->npages) {
		if (fatal_signal_pending(current)) {
			rc = -EINTR;
			break;
		}
		n = min_t(unsigned long, zr->npages - done, PME_ZREG_PIN_CHUNK);
		rc = pin_user_pages_fast(zr->start + (done << PAGE_SHIFT), n, gup, pages + done);
		if (rc <= 0) {
			rc = rc ?: -EFAULT;
			break;
		}
		done += rc;
		rc = 0;
	}
	if (!rc) {
		spin_lock_bh(&ep->zc_lock);
		if (mmu_interval_read_retry(&zr->mni, seq))
			rc = -EAGAIN;
		else
			zr->pages = pages;
		spin_unlock_bh(&ep->zc_lock);
	}
	if (rc)
		unpin_user_pages(pages, done);
	return rc;
}

static int pme_zreg_pin(struct pme_ep *ep, struct pme_zreg *zr)
{
	struct page **pages;
	int rc = -EAGAIN, tries;

	pages = kvmalloc_array(zr->npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (tries = 0; rc == -EAGAIN && tries < PME_ZREG_PIN_TRIES; tries++)
		rc = pme_zreg_pin_once(ep, zr, pages);
	if (rc)
		kvfree(pages);
	return rc;
}

/* Remove the least recently used idle region; false if there is none. Under zc_mutex. */
static bool pme_zreg_evict_one(struct pme_ep *ep)
{
	struct pme_zreg *zr;
	bool idle;

	list_for_each_entry_reverse(zr, &ep->zc_lru, lru) {
		spin_lock_bh(&ep->zc_lock);
		idle = pme_zreg_idle(zr);
		spin_unlock_bh(&ep->zc_lock);
		if (idle) {
			pme_zreg_destroy(ep, zr);
			return true;
		}
	}
	return false;
}

/* Keep the idle regions within zc_cache_mb; remove the dropped ones. Under zc_mutex. */
static void pme_zreg_trim(struct pme_ep *ep)
{
	unsigned long room = (unsigned long)READ_ONCE(pme_zc_cache_mb) << (20 - PAGE_SHIFT);
	unsigned long kept = 0;
	struct pme_zreg *zr, *tmp;
	bool idle, dropped;

	list_for_each_entry_safe(zr, tmp, &ep->zc_lru, lru) {
		spin_lock_bh(&ep->zc_lock);
		idle = pme_zreg_idle(zr);
		dropped = !zr->pages;
		spin_unlock_bh(&ep->zc_lock);
		if (!idle)
			continue;
		if (dropped || kept + zr->npages > room)
			pme_zreg_destroy(ep, zr);
		else
			kept += zr->npages;
	}
}

/*
 * Charge npages to the process's RLIMIT_MEMLOCK (unless it has CAP_IPC_LOCK), making
 * room by evicting idle regions if need be. Under zc_mutex.
 */
static int pme_zreg_charge(struct pme_ep *ep, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	for (;;) {
		if (atomic64_add_return(npages, &ep->zc_mm->pinned_vm) <= limit ||
		    capable(CAP_IPC_LOCK))
			return 0;
		atomic64_sub(npages, &ep->zc_mm->pinned_vm);
		if (!pme_zreg_evict_one(ep))
			return -ENOMEM;
	}
}

/* A valid region that covers [addr, addr + len) with access; under zc_mutex. */
static struct pme_zreg *pme_zreg_find(struct pme_ep *ep, u64 addr, u64 len, u32 access)
{
	struct pme_zreg *zr;

	list_for_each_entry(zr, &ep->zc_lru, lru) {
		if ((zr->access & access) != access || addr < zr->start ||
		    addr + len > zr->start + (zr->npages << PAGE_SHIFT))
			continue;
		if (READ_ONCE(zr->pages)) {
			list_move(&zr->lru, &ep->zc_lru);
			return zr;
		}
	}
	return NULL;
}

/* Pin a new region, held once by the caller (arm: used once). Under zc_mutex. */
static int pme_zreg_create(struct pme_ep *ep, u64 addr, unsigned long npages, u32 access,
			   bool arm, struct pme_zreg **out)
{
	struct pme_zreg *zr;
	int rc;

	if (ep->zc_nregions >= PME_ZC_REGIONS_MAX && !pme_zreg_evict_one(ep))
		return -ENOSPC;
	zr = kzalloc(sizeof(*zr), GFP_KERNEL);
	if (!zr)
		return -ENOMEM;
	zr->ep = ep;
	zr->start = addr & PAGE_MASK;
	zr->npages = npages;
	zr->access = access;
	zr->holds = !arm;
	zr->arms = arm;
	rc = pme_zreg_charge(ep, npages);
	if (rc)
		goto out_free;
	rc = mmu_interval_notifier_insert(&zr->mni, ep->zc_mm, zr->start, npages << PAGE_SHIFT,
					  &pme_zreg_mni_ops);
	if (rc) {
		atomic64_sub(npages, &ep->zc_mm->pinned_vm);
		goto out_free;
	}
	rc = pme_zreg_pin(ep, zr);
	if (rc) {
		atomic64_sub(npages, &ep->zc_mm->pinned_vm);
		goto out_remove;
	}
	pme_count(ep, PME_KCNT_ZC_PINNED_PAGES, npages);
	/* Published whole: lookups by id take zc_lock and see it pinned. */
	rc = xa_alloc(&ep->zc_regions, &zr->id, zr, xa_limit_31b, GFP_KERNEL);
	if (rc) {
		pme_zreg_unpin(ep, zr, zr->pages);
		goto out_remove;
	}
	list_add(&zr->lru, &ep->zc_lru);
	ep->zc_nregions++;
	*out = zr;
	return 0;

out_remove:
	mmu_interval_notifier_remove(&zr->mni);
out_free:
	kfree(zr);
	return rc;
}

/**
 * pme_zreg_get - a region that covers a range of the caller's memory, from the cache
 * or pinned now
 * @ep: the endpoint, bound with ABI 3 or later
 * @addr: start of the range, any byte
 * @len: its length
 * @access: PME_KZC_SEND (the driver reads it), PME_KZC_RECV (writes it), or both
 * @arm: true for an arm's use (dropped with pme_zreg_arm_drop), false for a hold
 *	 (dropped with pme_zreg_put)
 * @out: the region
 *
 * Process context, the process whose memory it is. Returns 0 or a negative errno.
 */
int pme_zreg_get(struct pme_ep *ep, u64 addr, u64 len, u32 access, bool arm,
		 struct pme_zreg **out)
{
	unsigned long npages;
	struct pme_zreg *zr;
	int rc = 0;

	if (ep->abi < 3)
		return -EPROTO;
	if (!len || !access || (access & ~(PME_KZC_SEND | PME_KZC_RECV)))
		return -EINVAL;
	if (addr + len < addr || !access_ok((void __user *)(uintptr_t)addr, len))
		return -EFAULT;
	npages = (PAGE_ALIGN(addr + len) - (addr & PAGE_MASK)) >> PAGE_SHIFT;
	if (npages > (unsigned long)READ_ONCE(pme_zc_max_region_mb) << (20 - PAGE_SHIFT))
		return -E2BIG;
	mutex_lock(&ep->zc_mutex);
	if (!ep->zc_mm) {
		/* Regions are the memory of the process that registers first. */
		mmgrab(current->mm);
		ep->zc_mm = current->mm;
	} else if (ep->zc_mm != current->mm) {
		rc = -EPERM;
		goto out;
	}
	spin_lock_bh(&ep->zc_lock);
	zr = pme_zreg_find(ep, addr, len, access);
	if (zr) {
		if (arm)
			zr->arms++;
		else
			zr->holds++;
	}
	spin_unlock_bh(&ep->zc_lock);
	if (zr) {
		pme_count(ep, PME_KCNT_ZC_CACHE_HITS, 1);
	} else {
		pme_count(ep, PME_KCNT_ZC_CACHE_MISSES, 1);
		rc = pme_zreg_create(ep, addr, npages, access, arm, &zr);
	}
	if (!rc)
		*out = zr;
out:
	if (rc)
		pme_count(ep, PME_KCNT_ZC_REFUSED, 1);
	mutex_unlock(&ep->zc_mutex);
	return rc;
}

/*
 * An arm is done with the region: it may be idle now. Under zc_lock (the packet
 * handler ends an arm with its last byte); a dropped region nobody uses any more is
 * left to the reaper, an idle valid one stays cached.
 */
void pme_zreg_arm_drop(struct pme_ep *ep, struct pme_zreg *zr)
{
	zr->arms--;
	if (!zr->pages && pme_zreg_idle(zr))
		schedule_work(&ep->zc_reaper);
}

/* Trim the cache after a region may have become idle. Process context. */
void pme_zreg_settle(struct pme_ep *ep)
{
	mutex_lock(&ep->zc_mutex);
	pme_zreg_trim(ep);
	mutex_unlock(&ep->zc_mutex);
}

/* Whether the region's pages may be used for access; under zc_lock. */
bool pme_zreg_usable(const struct pme_zreg *zr, u32 access)
{
	return zr->pages && (zr->access & access) == access;
}

/* The region of this id that covers [addr, addr + len), or NULL; under zc_lock. */
struct pme_zreg *pme_zreg_lookup(struct pme_ep *ep, u32 id, u64 addr, u64 len)
{
	struct pme_zreg *zr = xa_load(&ep->zc_regions, id);

	if (!zr || addr < zr->start || len > zr->npages << PAGE_SHIFT ||
	    addr - zr->start > (zr->npages << PAGE_SHIFT) - len)
		return NULL;
	return zr;
}

/* The pinned page that holds user address addr, and addr's offset in it; zc_lock. */
struct page *pme_zreg_page(const struct pme_zreg *zr, u64 addr, unsigned int *off)
{
	*off = offset_in_page(addr);
	return zr->pages[(addr - zr->start) >> PAGE_SHIFT];
}

/* PME_IOC_ZC_REG: hold a region for sending from (or receiving into) it. */
long pme_zreg_ioctl_reg(struct pme_ep *ep, void __user *arg)
{
	struct pme_kzc_reg r;
	struct pme_zreg *zr;
	int rc;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (r.reserved[0] || r.reserved[1] || r.id)
		return -EINVAL;
	rc = pme_zreg_get(ep, r.addr, r.len, r.flags, false, &zr);
	if (rc)
		return rc;
	r.id = zr->id;
	if (copy_to_user(arg, &r, sizeof(r))) {
		pme_zreg_put(ep, zr->id);
		return -EFAULT;
	}
	return 0;
}

/**
 * pme_zreg_put - let go of one hold of a region
 * @ep: the endpoint
 * @id: the region's id
 *
 * The region stays pinned in the cache while it fits. Returns -EINVAL when the caller
 * holds no region of that id (never held, or let go already).
 */
int pme_zreg_put(struct pme_ep *ep, u32 id)
{
	struct pme_zreg *zr;
	int rc = -EINVAL;

	mutex_lock(&ep->zc_mutex);
	spin_lock_bh(&ep->zc_lock);
	zr = xa_load(&ep->zc_regions, id);
	if (zr && zr->holds) {
		zr->holds--;
		rc = 0;
	}
	spin_unlock_bh(&ep->zc_lock);
	if (!rc)
		pme_zreg_trim(ep);
	mutex_unlock(&ep->zc_mutex);
	return rc;
}

/* PME_IOC_ZC_UNREG */
long pme_zreg_ioctl_unreg(struct pme_ep *ep, u32 __user *arg)
{
	u32 id;

	if (get_user(id, arg))
		return -EFAULT;
	return pme_zreg_put(ep, id);
}

void pme_zreg_init(struct pme_ep *ep)
{
	mutex_init(&ep->zc_mutex);
	spin_lock_init(&ep->zc_lock);
	xa_init_flags(&ep->zc_regions, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&ep->zc_lru);
	INIT_WORK(&ep->zc_reaper, pme_zreg_reap);
}

/*
 * The file is closed: every region goes, whoever used it (the arms are gone already).
 * Once the notifiers are removed nothing schedules the reaper; a run of it still
 * pending finds no region.
 */
void pme_zreg_release(struct pme_ep *ep)
{
	struct pme_zreg *zr, *tmp;

	mutex_lock(&ep->zc_mutex);
	list_for_each_entry_safe(zr, tmp, &ep->zc_lru, lru)
		pme_zreg_destroy(ep, zr);
	mutex_unlock(&ep->zc_mutex);
	cancel_work_sync(&ep->zc_reaper);
	xa_destroy(&ep->zc_regions);
	if (ep->zc_mm)
		mmdrop(ep->zc_mm);
	ep->zc_mm = NULL;
}
