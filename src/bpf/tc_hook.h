/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_hook.h - attach a BPF program to an interface's TC hook (clsact, direct action)
 * and find it, and its maps, again later from another process. Used by the tools that
 * load PME's BPF programs (pme_faultctl, pme_route).
 *
 * Each PME program has its own filter slot (priority and handle below) so that they
 * coexist with each other and with anyone else's filters. The interface names are
 * those of the caller's network namespace.
 */
#ifndef PME_TC_HOOK_H
#define PME_TC_HOOK_H

#include <stddef.h>
#include <stdint.h>

#define PME_TC_HANDLE 0x504d        /* "PM" */
#define PME_TC_PRIO_FWD 0x5001      /* pme_fwd at ingress */
#define PME_TC_PRIO_FAULTS 0x5002   /* pme_faults at egress */

enum pme_tc_side { PME_TC_INGRESS, PME_TC_EGRESS };

/* All return 0 or a negative errno, with a message naming cause and fix in err. */

/* Route libbpf's own messages into the next error message instead of stderr. */
void pme_tc_quiet_libbpf(void);

int pme_tc_ifindex(const char *ifname, char *err, size_t errlen);

/* Attach prog_fd in our slot on that side (replacing what our slot held). */
int pme_tc_attach(const char *ifname, enum pme_tc_side side, uint32_t prio, int prog_fd,
                  char *err, size_t errlen);

/* Detach our slot; -ENOENT (with a message) when it held nothing. */
int pme_tc_detach(const char *ifname, enum pme_tc_side side, uint32_t prio, char *err,
                  size_t errlen);

/* *prog_id = the program in our slot, or 0 when the slot is empty. */
int pme_tc_query(const char *ifname, enum pme_tc_side side, uint32_t prio, uint32_t *prog_id,
                 char *err, size_t errlen);

/*
 * A file descriptor of the map called map_name that program prog_id uses, after
 * checking that the program is called prog_name. Returns the fd or a negative errno.
 */
int pme_tc_prog_map(uint32_t prog_id, const char *prog_name, const char *map_name, char *err,
                    size_t errlen);

#endif
