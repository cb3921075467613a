/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check.h - pme_info --check: what stands between this host and PME, found without
 * changing anything. Each part (interfaces, NIC tuning, permissions, other nodes) adds
 * findings to one report; a finding says what was seen, why it matters and the command
 * that would change it.
 */
#ifndef PME_TOOLS_CHECK_H
#define PME_TOOLS_CHECK_H

#include <net/if.h>
#include <stddef.h>

enum check_level { CHECK_OK, CHECK_INFO, CHECK_WARN, CHECK_BLOCK };

struct check_report {
    int blocking, warnings;
    int quiet; /* count, print nothing (--summary) */
};

/* One finding: fmt says what was seen; why (may be NULL) why it matters; run (may be
 * NULL) the command that would change it, which the checker never runs itself. */
void check_say(struct check_report *r, enum check_level level, const char *why, const char *run,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* What the checker knows of one network interface. */
struct check_iface {
    char name[IF_NAMESIZE];
    int ether;          /* ARPHRD_ETHER */
    int up, carrier, loopback, bridge;
    int mtu;
    int default_route;  /* carries an IPv4 or IPv6 default route */
    int is_virtual;     /* no device behind it (veth, bridge, tap...) */
    int sysfs_ours;     /* /sys/class/net shows this namespace's interface of that name */
    char driver[32];    /* from ETHTOOL_GDRVINFO, "" if unknown */
    char bus[32];       /* PCI address, "" if none */
};

int check_iface_read(const char *name, struct check_iface *ci);
/* The Ethernet interfaces of this network namespace (not loopback, not bridges). */
int check_iface_list(struct check_iface *out, int max);
/* Whether PME may use it; 0 if usable. chosen: the user named it. */
int check_iface_usable(const struct check_iface *ci, int chosen, struct check_report *r);

/* Interrupt coalescing, offloads, IRQ affinity and NUMA locality of the NIC. */
void check_nic(const struct check_iface *ci, struct check_report *r);

/* Whether this user can open PME's device on the interface (ring: CAP_NET_RAW or the
 * pme_rawsock broker; kernel: /dev/pme). */
void check_perm(const char *device, const char *ifname, struct check_report *r);

/* Runs `RSH HOST pme_info --check --summary` on every host of hostfile and compares
 * what they report (MTU of the interface PME uses, blocking findings). */
void check_hosts(const char *hostfile, const char *iface, const char *rsh, struct check_report *r);

/* Host names and interface names go into a shell command: only what they are made of. */
int check_plain_word(const char *s);
/* Hydra's hostfile: "host[:count]" per line, '#' comments; each host once, at most max
 * names of up to 127 characters. Returns how many. */
int check_read_hostfile(const char *file, char (*host)[128], int max, struct check_report *r);
/* What running pme_info on the hosts needs: its own path into exe and the remote shell
 * (*rsh, else HYDRA_LAUNCHER_EXEC, else ssh); NULL, reported, when iface is no plain
 * interface name or the path cannot be found. */
const char *check_remote(const char *iface, const char **rsh, char *exe, size_t len,
                         struct check_report *r);

/* pme_info --check --probe: frames of PME's EtherType, small and of the full MTU,
 * between every pair of hosts of the hostfile (check_probe.c), each host running
 * `pme_info --probe-agent` (probe_agent.c) at the same time. */
void check_probe(const char *hostfile, const char *iface, const char *rsh, int time_ms,
                 struct check_report *r);
int probe_agent_main(int argc, char **argv);

/* pme_info --config [--names] (config_show.c). */
int config_show_main(int argc, char **argv);

int pme_check_main(int argc, char **argv);

#endif
