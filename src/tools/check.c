// SPDX-License-Identifier: BSD-3-Clause
/*
 * check.c - pme_info --check: the order of the checks and the verdict. Reads only:
 * every finding names the command that would change it, and nothing is run.
 *
 *   pme_info --check [-i IFACE] [--hostfile FILE [--rsh CMD] [--probe [--probe-time MS]]]
 *                    [--summary]
 *
 * The device checked is the one a job would open: PME_DEVICE, or for "auto" (the
 * default) the kernel device when /dev/pme may be opened, else the ring (dev.c).
 * --probe sends frames between the hosts (check_probe.c): the only way to see a switch
 * that drops jumbo frames or EtherType 0x88B5.
 *
 * Exit status 0: nothing blocks PME here (and on the hosts); 1: something does; 2: bad
 * usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dev.h"

#define MAX_IFACES 64

static void describe(const struct check_iface *ci, const struct check_report *r)
{
    if (r->quiet)
        return;
    printf("\n%s: MTU %d, %s%s%s%s%s\n", ci->name, ci->mtu, ci->is_virtual ? "virtual" : "NIC",
           ci->driver[0] ? ", driver " : "", ci->driver, ci->bus[0] ? ", PCI " : "", ci->bus);
}

static void check_mtu(const struct check_iface *ci, struct check_report *r)
{
    if (ci->mtu >= 9000 || ci->mtu < 0)
        return;
    char run[200];
    snprintf(run, sizeof(run), "ip link set %s mtu 9000  (on every node, and 9000 or more on "
             "every switch port between them)", ci->name);
    check_say(r, CHECK_INFO,
              "PME fills frames up to the MTU: jumbo frames carry a message in six times fewer "
              "frames, which is most of PME's bandwidth on real NICs",
              run, "MTU %d: no jumbo frames", ci->mtu);
}

/* Checks one interface into its own report; returns 0 when PME may use it. */
static int check_one(const struct check_iface *ci, int chosen, struct check_report *total)
{
    struct check_report r = {0, 0, total->quiet};
    describe(ci, &r);
    check_iface_usable(ci, chosen, &r);
    check_mtu(ci, &r);
    check_nic(ci, &r);
    total->warnings += r.warnings;
    return r.blocking;
}

static int usage(void)
{
    fprintf(stderr, "usage: pme_info --check [-i IFACE] [--hostfile FILE [--rsh CMD] "
                    "[--probe [--probe-time MS]]] [--summary]\n");
    return 2;
}

int pme_check_main(int argc, char **argv)
{
    const char *iface = getenv("PME_IFACE"), *hostfile = NULL, *rsh = NULL;
    const char *device = getenv("PME_DEVICE");
    int summary = 0, chosen, probe = 0, probe_ms = 3000;
    static const struct option lo[] = {{"check", 0, 0, 'k'},   {"iface", 1, 0, 'i'},
                                        {"hostfile", 1, 0, 'f'}, {"rsh", 1, 0, 'r'},
                                        {"summary", 0, 0, 's'}, {"probe", 0, 0, 'p'},
                                        {"probe-time", 1, 0, 't'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "i:f:", lo, NULL)) != -1) {
        switch (c) {
        case 'k': break;
        case 'i': iface = optarg; break;
        case 'f': hostfile = optarg; break;
        case 'r': rsh = optarg; break;
        case 's': summary = 1; break;
        case 'p': probe = 1; break;
        case 't': probe_ms = atoi(optarg); break;
        default: return usage();
        }
    }
    if (optind < argc || (probe && !hostfile) || probe_ms < 100 || probe_ms > 600000)
        return usage();
    const char *asked = device && *device ? device : PME_DEV_DEFAULT;
    if (strcmp(asked, PME_DEV_AUTO) && strcmp(asked, "ring") && strcmp(asked, "pcap") &&
        strcmp(asked, "kernel")) {
        fprintf(stderr, "pme_info --check: PME_DEVICE=%s is not a device for a network: "
                        "auto, ring, pcap or kernel (or unset for auto)\n", asked);
        return 2;
    }
    /* The device a job would open here (dev.c chooses the same way). */
    device = pme_dev_choose(asked)->name;
    chosen = iface && *iface;
    char host[256] = "?";
    gethostname(host, sizeof(host) - 1);

    struct check_report total = {0, 0, summary};
    if (!summary)
        printf("PME check of %s, device %s%s (reads only%s)\n", host, device,
               strcmp(asked, PME_DEV_AUTO) ? "" : " (PME_DEVICE=auto chooses it here)",
               probe ? "; --probe sends test frames" : ": nothing is changed");
    struct check_iface ifs[MAX_IFACES];
    int n = 0, usable = 0, first = -1;
    if (chosen) {
        if (check_iface_read(iface, &ifs[0]) == 0) {
            n = 1;
        } else {
            check_say(&total, CHECK_BLOCK, NULL, "ip link  (lists the interfaces here)",
                      "interface %s does not exist here", iface);
        }
    } else {
        n = check_iface_list(ifs, MAX_IFACES);
    }
    for (int i = 0; i < n; i++)
        if (check_one(&ifs[i], chosen, &total) == 0) {
            usable++;
            /* The one PME would take (the netmod's choice: not the default route's). */
            if (first < 0 || (ifs[first].default_route && !ifs[i].default_route))
                first = i;
        }
    if (!usable && !(chosen && !n)) {
        if (!summary)
            printf("\n");
        if (chosen)
            check_say(&total, CHECK_BLOCK, NULL, NULL, "PME cannot use %s (above)", iface);
        else
            check_say(&total, CHECK_BLOCK, NULL, "pme_info --check -i IFACE  (one interface)",
                      "no interface PME can use here");
    }
    const char *perm_if = first >= 0 ? ifs[first].name : chosen ? iface : NULL;
    if (perm_if) {
        if (!summary)
            printf("\nPermissions of %s (uid %d) for PME_DEVICE=%s on %s:\n",
                   getenv("USER") ? getenv("USER") : "this user", (int)getuid(), device, perm_if);
        check_perm(device, perm_if, &total);
    }
    if (summary) {
        /* The interface PME would use; the one named even when it cannot. */
        int shown = first >= 0 ? first : n == 1 && chosen ? 0 : -1;
        printf("pme-check\t%s\t%s\t%d\t%d\n", host, shown >= 0 ? ifs[shown].name : "-",
               shown >= 0 ? ifs[shown].mtu : -1, total.blocking);
        return total.blocking ? 1 : 0;
    }
    if (hostfile) {
        printf("\nThe hosts of %s:\n", hostfile);
        check_hosts(hostfile, chosen ? iface : NULL, rsh, &total);
        if (probe)
            check_probe(hostfile, chosen ? iface : NULL, rsh, probe_ms, &total);
    }
    if (total.blocking)
        printf("\n%s: PME cannot run as things are (BLOCKS above); %d warning(s)\n", host,
               total.warnings);
    else
        printf("\n%s: nothing blocks PME; %d warning(s)\n", host, total.warnings);
    return total.blocking ? 1 : 0;
}
