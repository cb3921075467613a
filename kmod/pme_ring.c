// SPDX-License-Identifier: GPL-2.0
/*
 * The area an endpoint maps: a control page, the receive ring and the
 * send ring, in one vmalloc_user() allocation (zeroed, so every receive slot starts
 * out the driver's and every send slot free).
 */
#include <linux/mm.h>
#include <linux/sizes.h>
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

/**
 * pme_ring_alloc - size and allocate an endpoint's rings
 * @ep: the endpoint
 * @mtu: the interface's MTU: one slot holds one frame of it
 * @rx_bytes: receive ring size wanted, 0 for the default
 * @tx_bytes: send ring size wanted, 0 for the default
 *
 * Sizes beyond the module's max_ring_kb are cut down to it (the sizes given are
 * reported back by bind).
 */
int pme_ring_alloc(struct pme_ep *ep, u32 mtu, u32 rx_bytes, u32 tx_bytes)
{
	u64 cap = (u64)READ_ONCE(pme_max_ring_kb) << 10, budget;
	size_t rx_off, tx_off, len;
	u32 slot_size, rx, tx;

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
	ep->mem = vmalloc_user(len);
	if (!ep->mem)
		return -ENOMEM;
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
 * the driver never sees. Each mapping holds the file, so the area lives as long.
 */
int pme_ring_mmap(struct pme_ep *ep, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long pages = ep->mem_len >> PAGE_SHIFT;

	/* Acquire: pairs with bind's release; ep->mem is set once it is seen. */
	if (!smp_load_acquire(&ep->bound))
		return -ENOTCONN;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff >= pages || len > (pages - vma->vm_pgoff) << PAGE_SHIFT)
		return -EINVAL;
	return remap_vmalloc_range(vma, ep->mem, vma->vm_pgoff);
}
