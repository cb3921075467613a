// SPDX-License-Identifier: BSD-3-Clause
/*
 * check_iface.c - pme_info --check: the interfaces, read through ioctls, the routing
 * tables and the ethtool ioctl (none of which needs privilege), and whether PME may
 * use each.
 */
#include <ifaddrs.h>
#include <net/if_arp.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "iflist.h"

static const char *sysfs_path(char *path, size_t len, const char *ifname, const char *entry)
{
    snprintf(path, len, "/sys/class/net/%s/%s", ifname, entry);
    return path;
}

/* The first line of an attribute, without its newline. */
static int sysfs_read(const char *ifname, const char *attr, char *buf, size_t len)
{
    char path[256];
    FILE *f = fopen(sysfs_path(path, sizeof(path), ifname, attr), "r");
    int ok = f && fgets(buf, (int)len, f) != NULL;
    if (f)
        fclose(f);
    buf[ok ? strcspn(buf, "\n") : 0] = 0;
    return ok ? 0 : -1;
}

static int sysfs_has(const char *ifname, const char *entry)
{
    char path[256];
    return access(sysfs_path(path, sizeof(path), ifname, entry), F_OK) == 0;
}

static void read_drvinfo(int s, struct check_iface *ci)
{
    struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ci->name);
    ifr.ifr_data = (void *)&di;
    if (ioctl(s, SIOCETHTOOL, &ifr) == 0) {
        snprintf(ci->driver, sizeof(ci->driver), "%s", di.driver);
        if (!strncmp(di.bus_info, "0000:", 5))
            snprintf(ci->bus, sizeof(ci->bus), "%s", di.bus_info);
    }
}

/* /sys/class/net shows the interfaces of the network namespace /sys was mounted in,
 * which a process that entered a namespace with setns (nsenter, vcluster exec) does not
 * share: trust it for this interface only when its ifindex is the kernel's. */
static int sysfs_is_ours(const char *ifname, int ifindex)
{
    char buf[32];
    return sysfs_read(ifname, "ifindex", buf, sizeof(buf)) == 0 && atoi(buf) == ifindex;
}

/* Read through ioctls on a socket of this network namespace, which (unlike /sys) is
 * always the one the process is in. */
int check_iface_read(const char *name, struct check_iface *ci)
{
    memset(ci, 0, sizeof(*ci));
    snprintf(ci->name, sizeof(ci->name), "%s", name);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    int rc = -1;
    if (ioctl(s, SIOCGIFINDEX, &ifr) == 0) {
        int ifindex = ifr.ifr_ifindex;
        rc = 0;
        if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
            ci->up = (ifr.ifr_flags & IFF_UP) != 0;
            ci->carrier = (ifr.ifr_flags & IFF_RUNNING) != 0;
            ci->loopback = (ifr.ifr_flags & IFF_LOOPBACK) != 0;
        }
        ci->mtu = ioctl(s, SIOCGIFMTU, &ifr) == 0 ? ifr.ifr_mtu : -1;
        ci->ether = ioctl(s, SIOCGIFHWADDR, &ifr) == 0 && ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER;
        read_drvinfo(s, ci);
        ci->bridge = !strcmp(ci->driver, "bridge");
        ci->sysfs_ours = sysfs_is_ours(name, ifindex);
        ci->is_virtual = ci->sysfs_ours ? !sysfs_has(name, "device") : !ci->bus[0];
        ci->default_route = pme_iface_has_default_route(name);
    }
    close(s);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct check_iface *)a)->name, ((const struct check_iface *)b)->name);
}

int check_iface_list(struct check_iface *out, int max)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return 0;
    int n = 0;
    for (struct ifaddrs *i = ifs; i && n < max; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET &&
            check_iface_read(i->ifa_name, &out[n]) == 0 && out[n].ether && !out[n].loopback &&
            !out[n].bridge)
            n++;
    freeifaddrs(ifs);
    qsort(out, (size_t)n, sizeof(*out), by_name);
    return n;
}

int check_iface_usable(const struct check_iface *ci, int chosen, struct check_report *r)
{
    char run[160];
    int bad = 0;
    if (!ci->ether) {
        check_say(r, CHECK_BLOCK, "PME sends Ethernet frames of its own EtherType", NULL,
                  "not an Ethernet interface");
        return 1;
    }
    if (ci->bridge) {
        check_say(r, CHECK_BLOCK,
                  "a bridge's own frames leave through its ports: use the port (or the "
                  "host's veth into the bridge) instead",
                  NULL, "a bridge");
        bad = 1;
    }
    if (!ci->up) {
        snprintf(run, sizeof(run), "ip link set %s up", ci->name);
        check_say(r, CHECK_BLOCK, "a down interface sends and receives nothing", run, "down");
        bad = 1;
    } else if (!ci->carrier) {
        check_say(r, CHECK_BLOCK, "up but without a link: check the cable, the switch port "
                  "or (veth) that the other end is up", NULL, "no carrier");
        bad = 1;
    }
    if (ci->default_route) {
        snprintf(run, sizeof(run), "PME_IFACE=<another interface>");
        if (chosen)
            check_say(r, CHECK_INFO,
                      "PME's frames share it with the host's IP traffic; you chose it, so "
                      "PME uses it",
                      NULL, "carries the default route");
        else
            check_say(r, CHECK_WARN,
                      "PME's automatic choice avoids it while another interface is up: "
                      "bulk IP traffic on it delays MPI frames; name a dedicated interface",
                      run, "carries the default route");
    }
    if (!bad)
        check_say(r, CHECK_OK, NULL, NULL, "PME may use it (Ethernet, up, link present)");
    return bad;
}
