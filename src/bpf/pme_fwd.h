/* SPDX-License-Identifier: GPL-2.0-only OR BSD-3-Clause */
/*
 * pme_fwd.h - what the mesh forwarder (pme_fwd.bpf.c) and pme_route share besides
 * pme_route.h's table entries: the maps' names and the counters.
 */
#ifndef PME_FWD_H
#define PME_FWD_H

/* Map names (the tools find the maps through the attached program by these). */
#define PME_FWD_PROG "pme_fwd"
#define PME_FWD_MAP_ROUTES "fwd_routes"
#define PME_FWD_MAP_SELF "fwd_self"
#define PME_FWD_MAP_COUNTERS "fwd_cnt"

/* Indices of the per-CPU counters in "fwd_cnt". */
enum pme_fwd_counter {
	PME_FWD_FORWARDED,      /* sent on toward their destination */
	PME_FWD_LOCAL,          /* PME frames passed up: for this node, all nodes, or version 1 */
	PME_FWD_NO_ROUTE,       /* dropped: no route to their destination */
	PME_FWD_HOP_LIMIT,      /* dropped: hops_left ran out */
	PME_FWD_NOT_PME,        /* other EtherTypes, passed untouched */
	PME_FWD_COUNT
};

#define PME_FWD_COUNTER_NAMES { "forwarded", "local", "no_route", "hop_limit", "not_pme" }

#endif /* PME_FWD_H */
