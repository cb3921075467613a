/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iflist.h - interface lists ("eth1", "xp,xm", "x*,y*"): expanding one into names, and
 * joining names back into one.
 */
#ifndef PME_IFLIST_H
#define PME_IFLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "pme.h"

#define PME_MAX_DEVS PME_MAX_IFACES
#define PME_IFNAME_LEN 16

/* Names and shell patterns separated by commas into at most PME_MAX_DEVS distinct
 * names, in the order given (a pattern's matches in name order). Returns how many, or
 * -1 with err saying why (an empty item, a pattern that matches nothing, too many). */
int pme_iflist_expand(const char *spec, char names[][PME_IFNAME_LEN], char *err,
                      size_t errlen);
/* n names joined with commas into buf ("xp,xm,yp,ym"), as many as fit. */
void pme_iflist_join(char names[][PME_IFNAME_LEN], unsigned n, char *buf, size_t len);

/* The default when nothing names the interfaces: every Ethernet interface of this
 * network namespace that is up, in name order, but loopback, bridges and the ones that
 * carry a default route (the management network's). Returns how many (0: none). */
int pme_iflist_default(char names[][PME_IFNAME_LEN]);

/* iflocal.c: for each interface, the cores near its NIC as hwloc sees them
 * ("0-7", "unknown" for a virtual interface) into cpus[i]; returns the first one near
 * the calling thread's cores, or -1 when none is, or all are (no preference). */
int pme_iflist_locality(char names[][PME_IFNAME_LEN], unsigned n, char (*cpus)[32]);

/* Whether a default route (IPv4 or IPv6) of this network namespace leaves by the
 * interface. */
bool pme_iface_has_default_route(const char *name);

#endif
