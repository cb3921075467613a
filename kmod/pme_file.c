// SPDX-License-Identifier: GPL-2.0-only
/*
 * /dev/pme: one endpoint per open file; ioctl binds it, rings the
 * doorbell and reads counters; mmap maps its rings; poll sleeps on them.
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/uaccess.h>

#include "pme.h"

static int pme_open(struct inode *inode, struct file *file)
{
	struct pme_ep *ep = pme_ep_alloc();

	if (!ep)
		return -ENOMEM;
	file->private_data = ep;
	return stream_open(inode, file);
}

static int pme_release(struct inode *inode, struct file *file)
{
	pme_ep_release(file->private_data);
	return 0;
}

static long pme_ioctl_bind(struct pme_ep *ep, void __user *arg)
{
	struct pme_kbind b;
	int rc;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	rc = pme_ep_bind(ep, &b);
	if (rc)
		return rc;
	/* Bound even if this copy fails: the caller can still map and use the file. */
	return copy_to_user(arg, &b, sizeof(b)) ? -EFAULT : 0;
}

static long pme_ioctl_counters(struct pme_ep *ep, void __user *arg, bool global)
{
	struct pme_kcounters c;

	if (global)
		pme_stats_global(&c);
	else
		pme_stats_ep(ep, &c);
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

/* Zero copy: regions of the caller's memory, armed receives (pme_zreg.c, pme_zc.c). */
static long pme_ioctl_zc(struct pme_ep *ep, unsigned int cmd, void __user *arg)
{
	/* Acquire: pairs with bind's release; ep->abi is set once it is seen. */
	if (!smp_load_acquire(&ep->bound))
		return -ENOTCONN;
	if (ep->abi < 3)
		return -EPROTO;
	switch (cmd) {
	case PME_IOC_ZC_REG:
		return pme_zreg_ioctl_reg(ep, arg);
	case PME_IOC_ZC_UNREG:
		return pme_zreg_ioctl_unreg(ep, arg);
	case PME_IOC_ZC_ARM:
		return pme_zc_ioctl_arm(ep, arg);
	default:
		return pme_zc_ioctl_disarm(ep, arg);
	}
}

static long pme_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pme_ep *ep = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PME_IOC_VERSION:
		return put_user((__u32)PME_ABI_VERSION, (__u32 __user *)uarg);
	case PME_IOC_BIND:
		return pme_ioctl_bind(ep, uarg);
	case PME_IOC_SEND:
		/* Acquire: pairs with bind's release; the rings are set up once it is seen. */
		if (!smp_load_acquire(&ep->bound))
			return -ENOTCONN;
		return pme_tx_kick(ep);
	case PME_IOC_COUNTERS:
		return pme_ioctl_counters(ep, uarg, false);
	case PME_IOC_GLOBAL_COUNTERS:
		return pme_ioctl_counters(ep, uarg, true);
	case PME_IOC_ZC_REG:
	case PME_IOC_ZC_UNREG:
	case PME_IOC_ZC_ARM:
	case PME_IOC_ZC_DISARM:
		return pme_ioctl_zc(ep, cmd, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * POLLIN when the slot the driver filled last is still the process's (slots are
 * handed back in order, so then at least that one waits); POLLOUT when the next send
 * slot is free; POLLERR and POLLHUP once the interface is gone.
 */
static __poll_t pme_poll(struct file *file, poll_table *wait)
{
	struct pme_ep *ep = file->private_data;
	__poll_t mask = 0;
	u32 prev;

	/* Acquire: pairs with bind's release; the rings are set up once it is seen. */
	if (!smp_load_acquire(&ep->bound))
		return EPOLLERR;
	poll_wait(file, &ep->wq, wait);
	/* Pairs with pme_ep_wake: be on the queue before looking at the rings. */
	smp_mb();
	if (READ_ONCE(ep->state) & PME_KSTATE_GONE)
		return EPOLLERR | EPOLLHUP;
	prev = READ_ONCE(ep->rx_head);
	prev = prev ? prev - 1 : ep->rx_slots - 1;
	if (READ_ONCE(pme_rx_slot(ep, prev)->status) != PME_KRX_KERNEL)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(pme_tx_slot(ep, READ_ONCE(ep->tx_tail))->status) == PME_KTX_FREE)
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}

static int pme_mmap(struct file *file, struct vm_area_struct *vma)
{
	return pme_ring_mmap(file->private_data, vma);
}

const struct file_operations pme_fops = {
	.owner = THIS_MODULE,
	.open = pme_open,
	.release = pme_release,
	.unlocked_ioctl = pme_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = pme_poll,
	.mmap = pme_mmap,
	.llseek = no_llseek,
};
