/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iflocal.h - iflocal.c's answer for a topology the caller loaded, with the two things it
 * asks the running system (an interface's MAC, the calling thread's cores) answered by
 * the caller: the seam that lets a test give it a machine with NUMA nodes and PCI NICs
 * (an hwloc XML file) that the machine running the test does not have.
 */
#ifndef PME_IFLOCAL_H
#define PME_IFLOCAL_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "iflist.h"

struct pme_iflocal_host {
    /* The interface's MAC as this network namespace has it, "aa:bb:cc:dd:ee:ff". */
    bool (*mac)(const char *ifname, char *out, size_t len);
    /* The cores the calling thread may run on, into mine; 0 or -1. */
    int (*cpubind)(hwloc_topology_t t, hwloc_bitmap_t mine);
};

/* The running system's answers (what pme_iface_locality and pme_iflist_locality use). */
extern const struct pme_iflocal_host pme_iflocal_system;

/* Load the topology with the I/O objects locality needs (hwloc honours HWLOC_XMLFILE
 * here as everywhere). 0 or -1; the caller destroys it. */
int pme_iflocal_load(hwloc_topology_t *t);

/* As pme_iface_locality and pme_iflist_locality (pme.h, iflist.h), in topology t. */
int pme_iface_locality_in(hwloc_topology_t t, const struct pme_iflocal_host *host,
                          const char *ifname, char *cpus, size_t len);
int pme_iflist_locality_in(hwloc_topology_t t, const struct pme_iflocal_host *host,
                           char names[][PME_IFNAME_LEN], unsigned n, char (*cpus)[32]);

#endif
