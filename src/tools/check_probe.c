// SPDX-License-Identifier: BSD-3-Clause
/*
 * check_probe.c - pme_info --check --probe --hostfile FILE: start the probe agent
 * (probe_agent.c) on every host at once, through ssh or hydra's launcher as
 * check_hosts.c does, and judge what each pair of hosts exchanged: a matrix of ok
 * (small and full-size PME frames both ways), small (small frames only), none (no PME
 * frame), with the likely cause of each pair that is not ok.
 *
 * Comparing MTUs (check_hosts.c) cannot see a switch port with a lower MTU than both
 * nodes, a VLAN split or a filter of EtherType 0x88B5: these show only when frames are
 * sent, and today they would show as a peer timeout in the middle of a job.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "check.h"
#include "pme.h"

#define MAX_PROBE_HOSTS 256
#define MAX_LINKS 64

enum { P_UNKNOWN = -2, P_APART = -1, P_NONE = 0, P_SMALL = 1, P_OK = 2 };

struct heard {
    char lif[IF_NAMESIZE], peer[128], pif[IF_NAMESIZE];
    unsigned big;
    int ctl, pme, small, bigok;
};

struct phost {
    char name[128], err[256];
    int reached, routed, nheard;
    struct heard heard[MAX_LINKS];
    FILE *p;
};

/* One link between two hosts: what passed in either direction. */
struct plink {
    char aif[IF_NAMESIZE], bif[IF_NAMESIZE];
    unsigned big;
    int ctl, state;
};

static void read_agent(struct phost *h)
{
    char line[1024];
    while (fgets(line, sizeof(line), h->p)) {
        struct heard *e = &h->heard[h->nheard];
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "pme-probe-routed\t", 17)) {
            h->routed = atoi(line + 17);
            h->reached = 1;
        } else if (!strncmp(line, "pme-probe-error\t", 16)) {
            snprintf(h->err, sizeof(h->err), "%.255s", line + 16);
        } else if (h->nheard < MAX_LINKS &&
                   sscanf(line, "pme-probe\t%15s\t%127s\t%15s\t%*u\t%d\t%d\t%d\t%d\t%u", e->lif,
                          e->peer, e->pif, &e->ctl, &e->pme, &e->small, &e->bigok, &e->big) == 8) {
            h->nheard++;
        } else if (!h->reached && !h->err[0] && strncmp(line, "pme-probe-if\t", 13)) {
            snprintf(h->err, sizeof(h->err), "%.255s", line); /* the shell's or ssh's word */
        }
    }
    if (pclose(h->p) != 0 && h->reached && !h->err[0])
        snprintf(h->err, sizeof(h->err), "the probe agent failed");
}

/* Add what a heard of b to the links between them (a's interface first). */
static int merge(struct plink *l, int n, const struct phost *a, const struct phost *b, int flip)
{
    for (int i = 0; i < a->nheard; i++) {
        const struct heard *e = &a->heard[i];
        if (strcmp(e->peer, b->name))
            continue;
        const char *aif = flip ? e->pif : e->lif, *bif = flip ? e->lif : e->pif;
        int k = 0;
        while (k < n && (strcmp(l[k].aif, aif) || strcmp(l[k].bif, bif)))
            k++;
        if (k == n) {
            if (n == MAX_LINKS)
                continue;
            memset(&l[n], 0, sizeof(l[n]));
            snprintf(l[k].aif, sizeof(l[k].aif), "%s", aif);
            snprintf(l[k].bif, sizeof(l[k].bif), "%s", bif);
            n++;
        }
        /* An echo is a round trip: it proves both ways at that size. */
        int st = e->bigok ? P_OK : e->small ? P_SMALL : P_NONE;
        if (st > l[k].state)
            l[k].state = st;
        l[k].ctl |= e->ctl;
        if (e->big > l[k].big)
            l[k].big = e->big;
    }
    return n;
}

static const char *cell(int st)
{
    return st == P_OK ? "ok" : st == P_SMALL ? "small" : st == P_NONE ? "none"
           : st == P_APART ? "-" : "?";
}

/* The findings of one pair that is not ok, one per link that is not. */
static void judge_pair(const struct phost *a, const struct phost *b, const struct plink *l,
                       int n, struct check_report *r)
{
    char fix[512];
    if (!n) {
        snprintf(fix, sizeof(fix), "ip link  (on both: is the cable in, the switch port up, are "
                 "both on the same VLAN?)");
        check_say(r, CHECK_BLOCK, "they are not on one Ethernet network: different switches or "
                  "VLANs, a cable or port down, or other interfaces than PME's (-i)", fix,
                  "%s - %s: nothing passes, not even frames of another EtherType", a->name,
                  b->name);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (l[i].state == P_OK)
            continue;
        if (l[i].state == P_SMALL) {
            snprintf(fix, sizeof(fix), "ip link set <interface> mtu %u on every switch port "
                     "between them, or PME_MTU below the smallest MTU on the way", l[i].big);
            check_say(r, CHECK_BLOCK, "something on the way has a smaller MTU than both nodes "
                      "(a switch port without jumbo frames), so PME's full frames are lost",
                      fix, "%s %s - %s %s: small frames only (%u-byte frames are lost)",
                      a->name, l[i].aif, b->name, l[i].bif, l[i].big);
        } else if (l[i].ctl) {
            check_say(r, CHECK_BLOCK, "frames of EtherType 0x88B6 pass and PME's do not: a "
                      "filter drops EtherType 0x88B5 (switch ACL, nftables, ebtables)",
                      "nft list ruleset; ebtables -L  (on the nodes and the switch: allow "
                      "EtherType 0x88b5)",
                      "%s %s - %s %s: no PME frame passes (EtherType 0x88B5 filtered)",
                      a->name, l[i].aif, b->name, l[i].bif);
        } else {
            check_say(r, CHECK_BLOCK, "no frame passes both ways on this link", "ip link",
                      "%s %s - %s %s: one way only, or nothing", a->name, l[i].aif, b->name,
                      l[i].bif);
        }
    }
}

static int pair(struct phost *h, int i, int j, struct check_report *r)
{
    struct plink l[MAX_LINKS];
    if (!h[i].reached || !h[j].reached)
        return P_UNKNOWN;
    int n = merge(l, 0, &h[i], &h[j], 0);
    n = merge(l, n, &h[j], &h[i], 1);
    int st = P_OK;
    for (int k = 0; k < n; k++)
        if (l[k].state < st)
            st = l[k].state;
    /* On a ring or torus only neighbours meet: the others' frames are forwarded. */
    if (!n && (h[i].routed || h[j].routed))
        return P_APART;
    if (!n)
        st = P_NONE;
    if (r)
        judge_pair(&h[i], &h[j], l, n, r);
    return st;
}

void check_probe(const char *hostfile, const char *iface, const char *rsh, int time_ms,
                 struct check_report *r)
{
    static struct phost h[MAX_PROBE_HOSTS];
    static char names[MAX_PROBE_HOSTS][128];
    char exe[PATH_MAX], cmd[2 * PATH_MAX + 1400];
    if (!check_remote(iface, &rsh, exe, sizeof(exe), r))
        return;
    int n = check_read_hostfile(hostfile, names, MAX_PROBE_HOSTS, r);
    uint32_t run = 0;
    if (getrandom(&run, sizeof(run), 0) != sizeof(run))
        run = (uint32_t)getpid();
    /* All at once: an agent hears only the agents running while it does. */
    for (int i = 0; i < n; i++) {
        memset(&h[i], 0, sizeof(h[i]));
        snprintf(h[i].name, sizeof(h[i].name), "%.127s", names[i]);
        snprintf(cmd, sizeof(cmd), "%.1024s %.127s %s --probe-agent --name %.127s --run %u --time %d%s%s "
                 "</dev/null 2>&1", rsh, names[i], exe, names[i], run, time_ms,
                 iface ? " -i " : "", iface ? iface : "");
        fflush(stdout);
        h[i].p = popen(cmd, "r");
    }
    for (int i = 0; i < n; i++) {
        if (h[i].p)
            read_agent(&h[i]);
        if (!h[i].reached || h[i].err[0]) {
            snprintf(cmd, sizeof(cmd), "%.1024s %s %s --check", rsh, h[i].name, exe);
            check_say(r, CHECK_BLOCK, "the probe could not run there", cmd, "%s: %s", h[i].name,
                      h[i].err[0] ? h[i].err : "no answer");
            h[i].reached = 0;
        }
    }
    if (!r->quiet) {
        printf("\nPME frames between the hosts (ok: small and full-MTU frames both ways; small: "
               "small frames only; none: no PME frame; -: not neighbours, their frames are "
               "forwarded; ?: not probed):\n%6s", "");
        for (int j = 0; j < n; j++)
            printf(" %5d", j);
        printf("\n");
        for (int i = 0; i < n; i++) {
            printf("  %3d ", i);
            for (int j = 0; j < n; j++)
                printf(" %5s", i == j ? "." : cell(pair(h, i < j ? i : j, i < j ? j : i, NULL)));
            printf("   %s\n", h[i].name);
        }
        printf("\n");
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int st = pair(h, i, j, NULL);
            if (st == P_SMALL || st == P_NONE) {
                pair(h, i, j, r);
                bad++;
            }
        }
    if (!bad && n)
        check_say(r, CHECK_OK, NULL, NULL, "every pair that meets passes small and full-MTU "
                  "PME frames both ways");
}
