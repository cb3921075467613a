// SPDX-License-Identifier: BSD-3-Clause
/*
 * check_perm.c - pme_info --check: may this user open PME's device? The ring and pcap
 * devices need CAP_NET_RAW, which the ring device can also borrow from the broker
 * pme_rawsock (doc/rawsock.md: members of the group owning it, interfaces listed by
 * the administrator); the kernel device needs read and write access to /dev/pme.
 */
#include <errno.h>
#include <fnmatch.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check.h"
#include "config.h"

#ifndef PME_BINDIR
#define PME_BINDIR "/usr/local/bin"
#endif
#define CAP_NET_RAW_BIT 13

/* CAP_NET_RAW in this process's effective set (/proc/self/status, CapEff). */
static int have_net_raw(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long eff = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "CapEff: %llx", &eff) == 1)
            break;
    if (f)
        fclose(f);
    return (eff >> CAP_NET_RAW_BIT) & 1;
}

static int in_group(gid_t g)
{
    gid_t list[256];
    int n = getgroups(256, list);
    if (getegid() == g)
        return 1;
    for (int i = 0; i < n; i++)
        if (list[i] == g)
            return 1;
    return 0;
}

/* The interface is named (or matched by a glob) in the broker's list. -1: no list. */
static int listed_for_broker(const char *ifname)
{
    FILE *f = fopen(PME_RAWSOCK_CONFIG, "r");
    if (!f)
        return -1;
    char line[256];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
        char pat[256];
        if (sscanf(line, "%255s", pat) == 1 && pat[0] != '#')
            found = fnmatch(pat, ifname, 0) == 0;
    }
    fclose(f);
    return found;
}

/* Can this user get a socket from the broker for ifname? Says why (not) either way. */
static int broker_usable(const char *ifname, struct check_report *r)
{
    const char *path = getenv("PME_RAWSOCK");
    char buf[512];
    if (!path || !*path) {
        snprintf(buf, sizeof(buf), "%s/pme_rawsock", PME_BINDIR);
        path = buf;
    }
    struct stat st;
    if (!strcmp(path, "0") || stat(path, &st) < 0) {
        check_say(r, CHECK_INFO, "the broker lends the ring device a PME-only socket", NULL,
                  "the broker pme_rawsock: not %s",
                  !strcmp(path, "0") ? "used (PME_RAWSOCK=0)" : "installed");
        return 0;
    }
    struct group *gr = getgrgid(st.st_gid);
    char gname[64];
    snprintf(gname, sizeof(gname), "%s", gr ? gr->gr_name : "?");
    int privileged = (st.st_mode & S_ISUID && st.st_uid == 0) ||
                     getxattr(path, "security.capability", NULL, 0) > 0;
    char run[700];
    if (!privileged) {
        snprintf(run, sizeof(run), "setcap cap_net_raw+ep %s  (as root; see pme_rawsock(8))", path);
        check_say(r, CHECK_INFO, "without its capability it refuses everyone", run,
                  "the broker %s has no CAP_NET_RAW to lend", path);
        return 0;
    }
    if (getuid() != 0 && !in_group(st.st_gid)) {
        snprintf(run, sizeof(run), "usermod -aG %s <user>  (as root; then log in again)", gname);
        check_say(r, CHECK_INFO, "it serves root and the members of the group owning it",
                  run, "the broker %s: you are not in its group %s", path, gname);
        return 0;
    }
    int listed = listed_for_broker(ifname);
    if (listed != 1) {
        snprintf(run, sizeof(run), "echo %s >> %s  (as root)", ifname, PME_RAWSOCK_CONFIG);
        check_say(r, CHECK_INFO, "it hands out sockets only for the interfaces its list names",
                  run, "the broker %s: %s does not list %s", path, PME_RAWSOCK_CONFIG, ifname);
        return 0;
    }
    check_say(r, CHECK_OK, NULL, NULL, "the broker %s lends you a PME-only socket on %s "
              "(group %s)", path, ifname, gname);
    return 1;
}

static int kernel_device_usable(struct check_report *r, enum check_level missing)
{
    const char *dev = "/dev/pme";
    if (access(dev, F_OK) < 0) {
        check_say(r, missing, "PME's kernel driver gives every user PME without privilege",
                  "modprobe pme  (as root, once pme.ko is installed: pme(7))",
                  "kernel device %s: not present (the driver is not loaded)", dev);
        return 0;
    }
    if (access(dev, R_OK | W_OK) < 0) {
        struct stat st;
        struct group *gr = stat(dev, &st) == 0 ? getgrgid(st.st_gid) : NULL;
        char run[200];
        snprintf(run, sizeof(run), "usermod -aG %s <user>  (as root), or a udev rule giving %s "
                 "mode 0666", gr ? gr->gr_name : "<its group>", dev);
        check_say(r, missing, "the kernel device is opened for reading and writing", run,
                  "kernel device %s: present, but you may not open it (%s)", dev, strerror(errno));
        return 0;
    }
    check_say(r, CHECK_OK, NULL, NULL, "kernel device %s: present and yours to open "
              "(PME_DEVICE=kernel)", dev);
    return 1;
}

void check_perm(const char *device, const char *ifname, struct check_report *r)
{
    if (!strcmp(device, "kernel")) {
        kernel_device_usable(r, CHECK_BLOCK);
        return;
    }
    if (have_net_raw()) {
        check_say(r, CHECK_OK, NULL, NULL, "CAP_NET_RAW: the %s device may open its raw socket",
                  device);
        kernel_device_usable(r, CHECK_INFO);
        return;
    }
    int broker = !strcmp(device, "ring") && broker_usable(ifname, r);
    int kernel = kernel_device_usable(r, CHECK_INFO);
    if (broker)
        return;
    check_say(r, kernel ? CHECK_WARN : CHECK_BLOCK,
              "the device opens a raw AF_PACKET socket, which Linux allows only with "
              "CAP_NET_RAW",
              kernel ? "PME_DEVICE=kernel  (the kernel device needs no privilege)"
                     : "load PME's kernel driver, or install the broker pme_rawsock "
                       "(pme_rawsock(8)), or run as root",
              "no CAP_NET_RAW: the %s device (PME_DEVICE=%s) cannot open its socket%s", device,
              device, !strcmp(device, "ring") ? " and no broker lends one" : "");
}
