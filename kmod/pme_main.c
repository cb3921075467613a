// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pme.ko: PME's kernel device. Unprivileged processes (of group pme, by
 * the udev rule) send and receive PME frames through /dev/pme without CAP_NET_RAW,
 * and only PME frames from their own endpoint.
 *
 * rmmod: every open file holds the module (the misc device's fops owner), so the
 * module can only go once every endpoint is closed and unmapped; then the packet
 * handler is removed (waiting for running ones), and rcu_barrier() lets the last
 * endpoints be freed before the code that frees them goes.
 */
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "pme.h"

u16 pme_ethertype = PME_ETHERTYPE_DEFAULT;
module_param_named(ethertype, pme_ethertype, ushort, 0444);
MODULE_PARM_DESC(ethertype, "EtherType of PME frames (default 0x88B5)");

unsigned int pme_max_ring_kb = 65536;
module_param_named(max_ring_kb, pme_max_ring_kb, uint, 0644);
MODULE_PARM_DESC(max_ring_kb, "Largest receive plus send ring of one endpoint, KiB (default 65536)");

/* Until set (at load or later): a quarter of the RAM, from pme_init. */
#define PME_USER_RING_MB_AUTO UINT_MAX
unsigned int pme_user_ring_mb = PME_USER_RING_MB_AUTO;
module_param_named(user_ring_mb, pme_user_ring_mb, uint, 0644);
MODULE_PARM_DESC(user_ring_mb,
		 "Rings all endpoints of one user may hold together, MiB (default: a quarter of the RAM; 0: no limit)");

static struct miscdevice pme_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pme",
	.fops = &pme_fops,
	.mode = 0660,
	.groups = pme_attr_groups,
};

static int __init pme_init(void)
{
	int rc;

	if (pme_ethertype < ETH_P_802_3_MIN) {
		pr_err("pme: ethertype 0x%04x is a length, not a type (need >= 0x0600)\n",
		       pme_ethertype);
		return -EINVAL;
	}
	if (pme_user_ring_mb == PME_USER_RING_MB_AUTO)
		pme_user_ring_mb = max(totalram_pages() >> (20 - PAGE_SHIFT) >> 2, 1ul);
	rc = pme_stats_init();
	if (rc)
		return rc;
	rc = pme_ep_notifier_register();
	if (rc)
		goto out_stats;
	pme_rx_register();
	rc = misc_register(&pme_misc);
	if (rc)
		goto out_rx;
	pr_info("pme: /dev/pme ready, EtherType 0x%04x, ABI %d\n", pme_ethertype,
		PME_ABI_VERSION);
	return 0;

out_rx:
	pme_rx_unregister();
	pme_ep_notifier_unregister();
out_stats:
	pme_stats_exit();
	return rc;
}

static void __exit pme_exit(void)
{
	misc_deregister(&pme_misc);
	pme_rx_unregister();
	pme_ep_notifier_unregister();
	rcu_barrier();
	pme_stats_exit();
}

module_init(pme_init);
module_exit(pme_exit);
MODULE_DESCRIPTION("PME: MPI frames over Ethernet for unprivileged processes");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
