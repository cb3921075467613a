/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * route_fwd.h - the mesh forwarder (src/bpf/pme_fwd.bpf.c) on a node's data
 * interfaces: loaded from the node's route file, shown, removed. When pme_route is
 * built without BPF support every call fails saying what to install.
 */
#ifndef PME_ROUTE_FWD_H
#define PME_ROUTE_FWD_H

#include <stddef.h>
#include <stdio.h>

#include "routefile.h"

/* Load one forwarder with rf's routes and attach it to every interface rf lists
 * (replacing a forwarder installed before). */
int fwd_load(const struct routefile *rf, char *err, size_t errlen);

/* Detach the forwarder from every interface rf lists; 0 also when none was there. */
int fwd_unload(const struct routefile *rf, char *err, size_t errlen);

/* Print where the forwarder is attached, its counters and its routes (kv: the
 * counters as one key=value line). 0, or -1 with a message when it is not loaded. */
int fwd_show(const struct routefile *rf, FILE *out, int kv, char *err, size_t errlen);

#endif
