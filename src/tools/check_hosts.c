// SPDX-License-Identifier: BSD-3-Clause
/*
 * check_hosts.c - pme_info --check --hostfile: the same check on every host of an MPI
 * hostfile, run there through ssh (or the launcher hydra uses, HYDRA_LAUNCHER_EXEC, as
 * maint/vcluster sets it), each answering in one line (--summary); then what must
 * agree between hosts: the MTU of the interface PME uses.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAX_HOSTS 1024

struct host_answer {
    char host[128], reported[128], iface[IF_NAMESIZE];
    int mtu, blocking, reached;
};

/* Host names and interface names go into a shell command: allow only what they are
 * made of. */
int check_plain_word(const char *s)
{
    return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:@") ==
                     strlen(s);
}

int check_read_hostfile(const char *file, char (*host)[128], int max, struct check_report *r)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        check_say(r, CHECK_BLOCK, NULL, NULL, "cannot read the hostfile %s", file);
        return 0;
    }
    char line[512];
    int n = 0;
    while (n < max && fgets(line, sizeof(line), f)) {
        char name[128];
        line[strcspn(line, "#")] = 0;
        if (sscanf(line, "%127[^: \t\n]", name) != 1)
            continue;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = !strcmp(host[i], name);
        if (dup)
            continue;
        if (!check_plain_word(name)) {
            check_say(r, CHECK_BLOCK, NULL, NULL, "%s: \"%s\" is not a host name", file, name);
            continue;
        }
        snprintf(host[n++], 128, "%s", name);
    }
    fclose(f);
    return n;
}

static void ask_host(struct host_answer *h, const char *rsh, const char *exe, const char *iface)
{
    char cmd[PATH_MAX + 512], line[512];
    snprintf(cmd, sizeof(cmd), "%s %s %s --check --summary%s%s </dev/null 2>&1", rsh, h->host,
             exe, iface ? " -i " : "", iface ? iface : "");
    FILE *p = popen(cmd, "r");
    while (p && fgets(line, sizeof(line), p)) {
        char hostname[128], ifname[IF_NAMESIZE];
        if (sscanf(line, "pme-check\t%127s\t%15s\t%d\t%d", hostname, ifname, &h->mtu,
                   &h->blocking) == 4) {
            snprintf(h->reported, sizeof(h->reported), "%s", hostname);
            snprintf(h->iface, sizeof(h->iface), "%s", ifname);
            h->reached = 1;
        }
    }
    if (p)
        pclose(p);
}

const char *check_remote(const char *iface, const char **rsh, char *exe, size_t len,
                         struct check_report *r)
{
    ssize_t got = readlink("/proc/self/exe", exe, len - 1);
    if (got <= 0) {
        check_say(r, CHECK_BLOCK, NULL, NULL, "cannot tell where pme_info itself is");
        return NULL;
    }
    exe[got] = 0;
    if (!*rsh || !**rsh)
        *rsh = getenv("HYDRA_LAUNCHER_EXEC");
    if (!*rsh || !**rsh)
        *rsh = "ssh";
    if (iface && !check_plain_word(iface)) {
        check_say(r, CHECK_BLOCK, NULL, NULL, "\"%s\" is not an interface name", iface);
        return NULL;
    }
    return exe;
}

void check_hosts(const char *hostfile, const char *iface, const char *rsh, struct check_report *r)
{
    static struct host_answer h[MAX_HOSTS];
    static char names[MAX_HOSTS][128];
    char exe[PATH_MAX];
    if (!check_remote(iface, &rsh, exe, sizeof(exe), r))
        return;
    int n = check_read_hostfile(hostfile, names, MAX_HOSTS, r), low = -1, high = -1;
    for (int i = 0; i < n; i++) {
        memset(&h[i], 0, sizeof(h[i]));
        snprintf(h[i].host, sizeof(h[i].host), "%.127s", names[i]);
    }
    char fix[PATH_MAX + 300];
    for (int i = 0; i < n; i++) {
        ask_host(&h[i], rsh, exe, iface);
        if (!h[i].reached) {
            snprintf(fix, sizeof(fix), "%s %s %s --check   (see what it says; pme_info must be "
                     "installed at this path there)", rsh, h[i].host, exe);
            check_say(r, CHECK_BLOCK, "the check could not run there", fix, "%s: no answer",
                      h[i].host);
            continue;
        }
        snprintf(fix, sizeof(fix), "%s %s %s --check", rsh, h[i].host, exe);
        check_say(r, h[i].blocking ? CHECK_BLOCK : CHECK_OK, "its own check found a blocker",
                  h[i].blocking ? fix : NULL, "%s: interface %s, MTU %d%s", h[i].host,
                  h[i].iface, h[i].mtu, h[i].blocking ? ", PME cannot run there" : "");
        if (h[i].mtu > 0 && (low < 0 || h[i].mtu < h[low].mtu))
            low = i;
        if (h[i].mtu > 0 && (high < 0 || h[i].mtu > h[high].mtu))
            high = i;
    }
    if (low < 0 || h[low].mtu == h[high].mtu) {
        if (low >= 0)
            check_say(r, CHECK_OK, NULL, NULL, "every host answering uses MTU %d", h[low].mtu);
        return;
    }
    snprintf(fix, sizeof(fix), "ip link set <interface> mtu %d  (on the hosts with less; or "
             "the same lower MTU everywhere)", h[high].mtu);
    check_say(r, CHECK_WARN,
              "two PME peers agree on the smaller of their MTUs when they meet, so pairs "
              "with that host send smaller frames (more of them per message); one MTU on "
              "every node and switch port is what the network is built for",
              fix, "MTU mismatch: %s has %d, %s has %d", h[low].host, h[low].mtu, h[high].host,
              h[high].mtu);
}
