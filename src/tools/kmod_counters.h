/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod_counters.h - what pme.ko (/dev/pme) counts, as pme_info shows it beside PME's own
 * counters: the module's totals (sysfs) and each endpoint's (/proc/driver/pme).
 */
#ifndef PME_KMOD_COUNTERS_H
#define PME_KMOD_COUNTERS_H

/* A line saying whether the module is loaded, then its non-zero totals. */
void kmod_show_global(void);
/* The non-zero counters the module keeps for endpoint ep_id of process pid on ifname;
 * nothing when it has no such endpoint. */
void kmod_show_endpoint(int pid, unsigned ep_id, const char *ifname, const char *indent);

#endif
