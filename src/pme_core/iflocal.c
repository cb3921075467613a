// SPDX-License-Identifier: BSD-3-Clause
/*
 * iflocal.c - which cores a NIC is near, as hwloc sees the machine: the NIC's PCI
 * device hangs below a package or NUMA node, and the cores of that object are near it
 * (its DMA and interrupts cross no inter-socket link to reach them). A virtual
 * interface (veth, a bridge) has no PCI device: hwloc knows nothing of it, and says
 * "unknown".
 */
#include <hwloc.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iflocal.h"

/* The I/O tree is loaded only when asked: it costs a walk of the PCI bus. */
int pme_iflocal_load(hwloc_topology_t *t)
{
    if (hwloc_topology_init(t))
        return -1;
    if (hwloc_topology_set_io_types_filter(*t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) ||
        hwloc_topology_load(*t)) {
        hwloc_topology_destroy(*t);
        return -1;
    }
    return 0;
}

/* The interface's MAC as the kernel of this network namespace has it, "aa:bb:..". */
static bool system_mac(const char *ifname, char *out, size_t len)
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    bool ok = fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0;
    if (fd >= 0)
        close(fd);
    const unsigned char *m = (const unsigned char *)ifr.ifr_hwaddr.sa_data;
    snprintf(out, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return ok;
}

static int system_cpubind(hwloc_topology_t t, hwloc_bitmap_t mine)
{
    return hwloc_get_cpubind(t, mine, HWLOC_CPUBIND_THREAD);
}

const struct pme_iflocal_host pme_iflocal_system = {system_mac, system_cpubind};

/* hwloc reads /sys/class/net, which shows the network namespace sysfs was mounted in:
 * in another one (a virtual cluster's node) a name may be another device's. The NIC is
 * ours only when its address is the interface's too. */
static hwloc_obj_t find_nic(hwloc_topology_t t, const struct pme_iflocal_host *host,
                            const char *ifname)
{
    char mac[24];
    if (!host->mac(ifname, mac, sizeof(mac)))
        return NULL;
    hwloc_obj_t os = NULL;
    while ((os = hwloc_get_next_osdev(t, os))) {
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK || !os->name ||
            strcmp(os->name, ifname))
            continue;
        const char *addr = hwloc_obj_get_info_by_name(os, "Address");
        return addr && !strcasecmp(addr, mac) ? os : NULL;
    }
    return NULL;
}

int pme_iface_locality_in(hwloc_topology_t t, const struct pme_iflocal_host *host,
                          const char *ifname, char *cpus, size_t len)
{
    hwloc_obj_t os = find_nic(t, host, ifname);
    hwloc_obj_t near = os ? hwloc_get_non_io_ancestor_obj(t, os) : NULL;
    if (!near || !near->cpuset) {
        snprintf(cpus, len, "unknown");
        return -1;
    }
    hwloc_bitmap_list_snprintf(cpus, len, near->cpuset);
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    int here = -1;
    if (mine && host->cpubind(t, mine) == 0)
        here = hwloc_bitmap_isincluded(mine, near->cpuset) ? 1 : 0;
    hwloc_bitmap_free(mine);
    return here;
}

int pme_iface_locality(const char *ifname, char *cpus, size_t len)
{
    hwloc_topology_t t;
    if (pme_iflocal_load(&t)) {
        snprintf(cpus, len, "unknown");
        return -1;
    }
    int here = pme_iface_locality_in(t, &pme_iflocal_system, ifname, cpus, len);
    hwloc_topology_destroy(t);
    return here;
}

int pme_iflist_locality_in(hwloc_topology_t t, const struct pme_iflocal_host *host,
                           char names[][PME_IFNAME_LEN], unsigned n, char (*cpus)[32])
{
    int nearest = -1;
    bool all_near = true;
    for (unsigned i = 0; i < n; i++) {
        int here = pme_iface_locality_in(t, host, names[i], cpus[i], 32);
        if (here == 1 && nearest < 0)
            nearest = (int)i;
        all_near &= here == 1;
    }
    /* Every NIC near (one socket, or a machine with one NUMA node): no preference. */
    return all_near ? -1 : nearest;
}

int pme_iflist_locality(char names[][PME_IFNAME_LEN], unsigned n, char (*cpus)[32])
{
    hwloc_topology_t t;
    if (pme_iflocal_load(&t)) {
        for (unsigned i = 0; i < n; i++)
            snprintf(cpus[i], 32, "unknown");
        return -1;
    }
    int nearest = pme_iflist_locality_in(t, &pme_iflocal_system, names, n, cpus);
    hwloc_topology_destroy(t);
    return nearest;
}
