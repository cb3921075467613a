// SPDX-License-Identifier: BSD-3-Clause
/*
 * iflist.c - the interfaces an endpoint spans, from PME_IFACE's form: names and shell
 * patterns separated by commas ("eth1", "xp,xm,yp,ym", "x*,y*"), or by default every
 * data interface of the node. A pattern matches the network interfaces of this network
 * namespace in name order (asked of the kernel: /sys/class/net shows the namespace that
 * mounted it, which a process that entered another namespace with setns does not
 * share); loopback never matches one.
 */
#include <fnmatch.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iflist.h"

static bool listed(char names[][PME_IFNAME_LEN], unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

static int add(char names[][PME_IFNAME_LEN], unsigned *n, const char *name, char *err,
               size_t errlen)
{
    if (listed(names, *n, name))
        return 0;
    if (*n == PME_MAX_DEVS) {
        snprintf(err, errlen, "more than %d interfaces for one endpoint", PME_MAX_DEVS);
        return -1;
    }
    snprintf(names[(*n)++], PME_IFNAME_LEN, "%s", name);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct if_nameindex *)a)->if_name,
                  ((const struct if_nameindex *)b)->if_name);
}

static int add_matches(char names[][PME_IFNAME_LEN], unsigned *n, const char *pattern,
                       char *err, size_t errlen)
{
    struct if_nameindex *e = if_nameindex();
    if (!e) {
        snprintf(err, errlen, "cannot list the network interfaces");
        return -1;
    }
    size_t k = 0;
    while (e[k].if_index)
        k++;
    qsort(e, k, sizeof(*e), by_name);
    int rc = 0, found = 0;
    for (size_t i = 0; i < k && !rc; i++) {
        const char *name = e[i].if_name;
        if (strcmp(name, "lo") && strlen(name) < PME_IFNAME_LEN && !fnmatch(pattern, name, 0)) {
            found++;
            rc = add(names, n, name, err, errlen);
        }
    }
    if_freenameindex(e);
    if (!rc && !found) {
        snprintf(err, errlen, "no network interface matches \"%s\"", pattern);
        rc = -1;
    }
    return rc;
}

int pme_iflist_expand(const char *spec, char names[][PME_IFNAME_LEN], char *err,
                      size_t errlen)
{
    unsigned n = 0;
    const char *s = spec;
    while (*s) {
        size_t len = strcspn(s, ",");
        char item[64];
        if (len == 0 || len >= sizeof(item)) {
            snprintf(err, errlen, "interface list \"%s\" has an empty or overlong item", spec);
            return -1;
        }
        memcpy(item, s, len);
        item[len] = 0;
        int rc;
        if (strpbrk(item, "*?["))
            rc = add_matches(names, &n, item, err, errlen);
        else if (len >= PME_IFNAME_LEN) {
            snprintf(err, errlen, "\"%s\" is too long for an interface name", item);
            rc = -1;
        } else
            rc = add(names, &n, item, err, errlen);
        if (rc)
            return -1;
        s += len;
        if (*s == ',' && !*++s) {
            snprintf(err, errlen, "interface list \"%s\" ends with a comma", spec);
            return -1;
        }
    }
    if (!n) {
        snprintf(err, errlen, "the interface list is empty");
        return -1;
    }
    return (int)n;
}

void pme_iflist_join(char names[][PME_IFNAME_LEN], unsigned n, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = 0;
    for (unsigned i = 0; i < n && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? "," : "", names[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

/* ---- the default: every data interface ---- */

/* Interfaces that carry a default route (IPv4 or IPv6), from this namespace's tables
 * (/proc/net follows the reader's network namespace). */
bool pme_iface_has_default_route(const char *name)
{
    char line[512], ifn[IF_NAMESIZE + 1], dst[40];
    unsigned long dest;
    unsigned plen;
    bool found = false;
    FILE *f = fopen("/proc/net/route", "r");
    while (f && !found && fgets(line, sizeof(line), f))
        found = sscanf(line, "%16s %lx", ifn, &dest) == 2 && dest == 0 && !strcmp(ifn, name);
    if (f)
        fclose(f);
    f = fopen("/proc/net/ipv6_route", "r");
    while (f && !found && fgets(line, sizeof(line), f))
        found = sscanf(line, "%32s %x %*s %*s %*s %*s %*s %*s %*s %16s", dst, &plen, ifn) == 3 &&
                plen == 0 && strspn(dst, "0") == 32 && !strcmp(ifn, name);
    if (f)
        fclose(f);
    return found;
}

/* An Ethernet interface that is up and is no bridge (its driver says, asked of the
 * kernel of this namespace). */
static bool is_data_iface(int fd, const char *name)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) || !(ifr.ifr_flags & IFF_UP) ||
        (ifr.ifr_flags & IFF_LOOPBACK))
        return false;
    if (ioctl(fd, SIOCGIFHWADDR, &ifr) || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
        return false;
    struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
    ifr.ifr_data = (void *)&info;
    return ioctl(fd, SIOCETHTOOL, &ifr) || strcmp(info.driver, "bridge");
}

int pme_iflist_default(char names[][PME_IFNAME_LEN])
{
    struct if_nameindex *e = if_nameindex();
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    unsigned n = 0;
    char err[8];
    if (e && fd >= 0) {
        size_t k = 0;
        while (e[k].if_index)
            k++;
        qsort(e, k, sizeof(*e), by_name);
        for (size_t i = 0; i < k && n < PME_MAX_DEVS; i++) {
            const char *name = e[i].if_name;
            if (strlen(name) < PME_IFNAME_LEN && is_data_iface(fd, name) &&
                !pme_iface_has_default_route(name))
                add(names, &n, name, err, sizeof(err));
        }
    }
    if (fd >= 0)
        close(fd);
    if (e)
        if_freenameindex(e);
    return (int)n;
}

int pme_default_ifaces(char *buf, size_t len)
{
    char names[PME_MAX_DEVS][PME_IFNAME_LEN];
    int n = pme_iflist_default(names);
    pme_iflist_join(names, (unsigned)n, buf, len);
    return n;
}
