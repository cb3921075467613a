// SPDX-License-Identifier: GPL-2.0-only
/*
 * The counters: per endpoint (in struct pme_ep) and for the module
 * (per CPU, summed when read), readable by ioctl, in /sys/class/misc/pme/counters/
 * (one file per counter) and, per endpoint, in /proc/driver/pme.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>
#include <linux/uidgid.h>

#include "pme.h"

struct pme_global_cnt {
	u64 v[PME_KCNT_NR];
};

static struct pme_global_cnt __percpu *pme_gcnt;

void pme_count_global(enum pme_kcounter c, u64 n)
{
	this_cpu_add(pme_gcnt->v[c], n);
}

/* Sums per CPU: each value is exact, the set is not one instant's. */
void pme_stats_global(struct pme_kcounters *out)
{
	int cpu, i;

	memset(out, 0, sizeof(*out));
	out->count = PME_KCNT_NR;
	for_each_possible_cpu(cpu)
		for (i = 0; i < PME_KCNT_NR; i++)
			out->v[i] += per_cpu_ptr(pme_gcnt, cpu)->v[i];
}

/* Read without the endpoint's locks: each value is whole on a 64-bit machine. */
void pme_stats_ep(const struct pme_ep *ep, struct pme_kcounters *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	out->count = PME_KCNT_NR;
	for (i = 0; i < PME_KCNT_NR; i++)
		out->v[i] = READ_ONCE(ep->cnt[i]);
}

struct pme_cnt_attr {
	struct device_attribute attr;
	enum pme_kcounter idx;
};

static ssize_t pme_cnt_show(struct device *d, struct device_attribute *attr, char *buf)
{
	enum pme_kcounter idx = container_of(attr, struct pme_cnt_attr, attr)->idx;
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(pme_gcnt, cpu)->v[idx];
	return sysfs_emit(buf, "%llu\n", sum);
}

static const char *const pme_cnt_names[] = PME_KCNT_NAMES;

/* One sysfs file per counter, filled in at load (the names come from the ABI). */
static struct pme_cnt_attr pme_cnt_attrs[PME_KCNT_NR];
static struct attribute *pme_cnt_attr_list[PME_KCNT_NR + 1];

static const struct attribute_group pme_cnt_group = {
	.name = "counters",
	.attrs = pme_cnt_attr_list,
};

const struct attribute_group *pme_attr_groups[] = { &pme_cnt_group, NULL };

static void pme_cnt_attrs_init(void)
{
	struct pme_cnt_attr *a;
	int i;

	for (i = 0; i < PME_KCNT_NR; i++) {
		a = &pme_cnt_attrs[i];
		sysfs_attr_init(&a->attr.attr);
		a->attr.attr.name = pme_cnt_names[i];
		a->attr.attr.mode = 0444;
		a->attr.show = pme_cnt_show;
		a->idx = i;
		pme_cnt_attr_list[i] = &a->attr.attr;
	}
}

static const char *pme_state_name(u32 state)
{
	if (state & PME_KSTATE_GONE)
		return "gone";
	return state & PME_KSTATE_DOWN ? "down" : "up";
}

/*
 * One line per bound endpoint, of every namespace (interface names may repeat): for a
 * reader with CAP_NET_ADMIN (root) every endpoint, for anybody else only those its own
 * user bound. A job's id, node, incarnation and pid are nobody else's business, and a
 * user looks up its own endpoints only (pme_info -c). Judged by who opened the file.
 */
static int pme_proc_show(struct seq_file *m, void *v)
{
	bool all = file_ns_capable(m->file, &init_user_ns, CAP_NET_ADMIN);
	kuid_t reader = m->file->f_cred->uid;
	struct pme_kcounters c;
	struct pme_ep *ep;
	int i;

	seq_puts(m, "iface ifindex ep job node incarnation pid uid state");
	for (i = 0; i < PME_KCNT_NR; i++)
		seq_printf(m, " %s", pme_cnt_names[i]);
	seq_putc(m, '\n');
	mutex_lock(&pme_lock);
	list_for_each_entry(ep, &pme_eps, node) {
		if (!all && !uid_eq(ep->uid, reader))
			continue;
		pme_stats_ep(ep, &c);
		seq_printf(m, "%s %d %u %u %u %u %d %u %s", ep->ifname, ep->ifindex, ep->ep_id,
			   ep->job_id, ep->node_id, ep->incarnation, ep->pid,
			   from_kuid_munged(seq_user_ns(m), ep->uid),
			   pme_state_name(READ_ONCE(ep->state)));
		for (i = 0; i < PME_KCNT_NR; i++)
			seq_printf(m, " %llu", c.v[i]);
		seq_putc(m, '\n');
	}
	mutex_unlock(&pme_lock);
	return 0;
}

int pme_stats_init(void)
{
	BUILD_BUG_ON(PME_KCNT_NR > PME_KCNT_MAX);
	BUILD_BUG_ON(ARRAY_SIZE(pme_cnt_names) != PME_KCNT_NR);
	pme_cnt_attrs_init();
	pme_gcnt = alloc_percpu(struct pme_global_cnt);
	if (!pme_gcnt)
		return -ENOMEM;
	if (!proc_create_single("driver/pme", 0444, NULL, pme_proc_show)) {
		free_percpu(pme_gcnt);
		return -ENOMEM;
	}
	return 0;
}

void pme_stats_exit(void)
{
	remove_proc_entry("driver/pme", NULL);
	free_percpu(pme_gcnt);
}
