// SPDX-License-Identifier: BSD-3-Clause
/*
 * check_nic.c - pme_info --check: the NIC settings that low-latency MPI tuning guides
 * look at: interrupt coalescing, receive/segmentation offloads, where the NIC's
 * interrupts run and which cores are near the NIC. Read only; each finding prints the
 * command that would change it.
 */
#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

static int ethtool_get(const char *ifname, void *cmd)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    ifr.ifr_data = cmd;
    int rc = ioctl(s, SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
    close(s);
    return rc;
}

/* Why an ethtool query gave nothing, in the user's terms. */
static const char *ethtool_why(int err)
{
    return err == EOPNOTSUPP ? "the driver has no such setting"
           : err == EPERM    ? "reading it needs privilege here (run as root)"
                             : strerror(err);
}

static void check_coalescing(const struct check_iface *ci, struct check_report *r)
{
    struct ethtool_coalesce ec = {.cmd = ETHTOOL_GCOALESCE};
    int err = ethtool_get(ci->name, &ec);
    if (err) {
        check_say(r, CHECK_INFO, NULL, NULL, "interrupt coalescing: not known (%s)", ethtool_why(err));
        return;
    }
    if (!ec.rx_coalesce_usecs && !ec.use_adaptive_rx_coalesce && ec.rx_max_coalesced_frames <= 1) {
        check_say(r, CHECK_OK, NULL, NULL, "interrupt coalescing off: every frame interrupts at once");
        return;
    }
    char run[160];
    snprintf(run, sizeof(run), "ethtool -C %s adaptive-rx off rx-usecs 0 rx-frames 1", ci->name);
    check_say(r, CHECK_WARN,
              "the NIC holds a received frame back to batch interrupts, which adds that "
              "delay to every small-message round trip when a rank blocks (PME_WAIT); "
              "latency-oriented MPI tuning turns it off (costs CPU at high frame rates)",
              run, "interrupt coalescing: rx-usecs %u, rx-frames %u, adaptive-rx %s",
              ec.rx_coalesce_usecs, ec.rx_max_coalesced_frames,
              ec.use_adaptive_rx_coalesce ? "on" : "off");
}

static void check_offloads(const struct check_iface *ci, struct check_report *r)
{
    struct ethtool_value gro = {.cmd = ETHTOOL_GGRO}, tso = {.cmd = ETHTOOL_GTSO},
                         flags = {.cmd = ETHTOOL_GFLAGS};
    int egro = ethtool_get(ci->name, &gro), etso = ethtool_get(ci->name, &tso),
        eflags = ethtool_get(ci->name, &flags);
    if (egro && etso && eflags) {
        check_say(r, CHECK_INFO, NULL, NULL, "offloads: not known (%s)", ethtool_why(egro));
        return;
    }
    int lro = !eflags && (flags.data & ETH_FLAG_LRO);
    char run[160];
    snprintf(run, sizeof(run), "ethtool -K %s gro off lro off", ci->name);
    check_say(r, CHECK_INFO,
              "these merge and split TCP/IP traffic only: PME's frames pass unchanged, so PME "
              "needs no change; guides for MPI over TCP on the same NIC turn GRO and LRO "
              "off for latency",
              (!egro && gro.data) || lro ? run : NULL, "offloads: GRO %s, LRO %s, TSO %s",
              egro ? "?" : gro.data ? "on" : "off", eflags ? "?" : lro ? "on" : "off",
              etso ? "?" : tso.data ? "on" : "off");
}

/* The cores near the NIC, from hwloc's view of the PCI tree: 0 and the list in out. */
static int nic_local_cpus(const struct check_iface *ci, char *out, size_t len, int *numa)
{
    hwloc_topology_t topo;
    int rc = -1;
    if (hwloc_topology_init(&topo))
        return -1;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) == 0) {
        hwloc_obj_t os = NULL;
        while ((os = hwloc_get_next_osdev(topo, os)))
            if (os->name && !strcmp(os->name, ci->name))
                break;
        hwloc_obj_t near = os ? hwloc_get_non_io_ancestor_obj(topo, os) : NULL;
        if (near && near->cpuset) {
            hwloc_bitmap_list_snprintf(out, len, near->cpuset);
            *numa = -1;
            if (near->nodeset && hwloc_bitmap_weight(near->nodeset) == 1)
                *numa = hwloc_bitmap_first(near->nodeset);
            rc = 0;
        }
    }
    hwloc_topology_destroy(topo);
    return rc;
}

/* Does every CPU of list (a kernel cpu list, "0-3,8") lie in local? Both parsed by
 * hwloc's list syntax, which is the kernel's. */
static int cpus_within(const char *list, const char *local)
{
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
    int in = a && b && hwloc_bitmap_list_sscanf(a, list) == 0 &&
             hwloc_bitmap_list_sscanf(b, local) == 0 && hwloc_bitmap_isincluded(a, b);
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
    return in;
}

/* The NIC's interrupts: the MSI vectors its PCI device owns (the device itself, or its
 * parent for a virtio NIC, whose net device hangs below a virtio bus device). */
static int nic_irqs(const struct check_iface *ci, int *irq, int max)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/class/net/%s/device/msi_irqs", ci->name);
    DIR *d = opendir(path);
    if (!d) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/device/../msi_irqs", ci->name);
        d = opendir(path);
    }
    int n = 0;
    struct dirent *e;
    while (d && n < max && (e = readdir(d)))
        if (e->d_name[0] != '.')
            irq[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void check_irqs(const struct check_iface *ci, const char *local, struct check_report *r)
{
    int irq[256], n = nic_irqs(ci, irq, 256), far = 0, unread = 0;
    char seen[512] = "", path[64], aff[256];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq[i]);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(aff, sizeof(aff), f)) {
            unread++;
        } else {
            aff[strcspn(aff, "\n")] = 0;
            if (local && !cpus_within(aff, local))
                far++;
            size_t used = strlen(seen);
            if (used < sizeof(seen) - 40)
                snprintf(seen + used, sizeof(seen) - used, "%s%d->%s", used ? " " : "", irq[i], aff);
        }
        if (f)
            fclose(f);
    }
    if (!n) {
        check_say(r, CHECK_INFO, NULL, NULL, "interrupts: no MSI vectors listed for its device");
        return;
    }
    if (unread)
        check_say(r, CHECK_INFO, NULL, NULL, "interrupts: %d of %d affinities unreadable here", unread, n);
    if (far) {
        char run[200];
        snprintf(run, sizeof(run), "echo %s > /proc/irq/<irq>/smp_affinity_list  (and stop "
                 "irqbalance or ban those cores from it)", local);
        check_say(r, CHECK_WARN,
                  "an interrupt served on a core far from the NIC crosses the socket "
                  "interconnect for every frame; guides pin the NIC's IRQs to its local cores",
                  run, "interrupts: %d of %d may run on cores away from the NIC (irq->cores: %s)",
                  far, n, seen);
    } else {
        check_say(r, CHECK_OK, NULL, NULL, "interrupts on cores near the NIC (irq->cores: %s)", seen);
    }
}

void check_nic(const struct check_iface *ci, struct check_report *r)
{
    check_coalescing(ci, r);
    check_offloads(ci, r);
    if (ci->is_virtual) {
        check_say(r, CHECK_INFO, NULL, NULL,
                  "virtual interface (%s): no interrupts, IRQ affinity or NUMA locality of "
                  "its own to check; on real hosts these apply to the physical NIC",
                  ci->driver[0] ? ci->driver : "no device");
        return;
    }
    if (!ci->sysfs_ours) {
        check_say(r, CHECK_INFO, "/sys was mounted in another network namespace (entered with "
                  "nsenter or setns, not `ip netns exec`), so the NIC's interrupts and "
                  "locality cannot be read from it", NULL,
                  "interrupts, locality: not known here");
        return;
    }
    char local[256];
    int numa = -1;
    if (nic_local_cpus(ci, local, sizeof(local), &numa) == 0) {
        check_say(r, CHECK_INFO,
                  "ranks bound to these cores reach the NIC without crossing sockets",
                  "mpiexec -bind-to core ... (and place ranks on those cores first)",
                  "locality: NIC %s is near cores %s (NUMA node %d)",
                  ci->bus[0] ? ci->bus : ci->name, local, numa);
        check_irqs(ci, local, r);
    } else {
        check_say(r, CHECK_INFO, NULL, NULL, "locality: hwloc does not place this NIC");
        check_irqs(ci, NULL, r);
    }
}
