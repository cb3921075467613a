// SPDX-License-Identifier: BSD-3-Clause
/*
 * probe_agent.c - one node's part of pme_info --check --probe: for a few seconds, on
 * every interface an endpoint would span, say who we are in broadcasts of PME's
 * EtherType and of a control EtherType (0x88B6, the other IEEE local experimental one),
 * send every node heard a small and a full-size frame of PME's EtherType and echo the
 * ones sent to us; then print, one line per neighbour, what passed.
 *
 * The control EtherType tells a filter from a cut: when its frames pass and PME's do
 * not, something on the way drops 0x88B5. The full-size frame is as large as the
 * smaller of the two MTUs, the frames PME would send that peer; its echo proves it
 * passes both ways. The sockets are bound to the two EtherTypes, not to every protocol,
 * so the frames are seen after the receiver's ingress filters, as the stack sees them.
 *
 *   pme_info --probe-agent --name HOST --run ID [--time MS] [-i IFACES]
 *
 * Output (tab-separated): "pme-probe-if IFACE MAC MTU", "pme-probe-routed 0|1",
 * "pme-probe NB-IFACE(ours) HOST IFACE MTU CTL PME SMALL-ECHO BIG-ECHO BIG-SIZE",
 * "pme-probe-error TEXT".
 */
#include <arpa/inet.h>
#include <endian.h>
#include <getopt.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "iflist.h"
#include "pme.h"
#include "pme_wire.h"

#define CTL_ETHERTYPE 0x88B6
#define MAX_NB 2048
#define TICK_MS 100
#define GRACE_MS 1500 /* echo after our own sending stops: the others started later */

enum { F_DISC = 1, F_PROBE, F_ECHO };

/* The first four bytes stay zero: where a PME header has its wire version (byte 2), so
 * that a mesh's forwarder (pme_fwd.bpf.c) and PME's own receivers take the frame for
 * one of an old version, to be judged by the endpoint, and never forward it. */
struct probe_hdr {
    uint8_t zero[4];
    char magic[8];
    uint8_t type, big;
    uint16_t pad;
    uint32_t run, mtu;
    char host[64], iface[16];
};

struct lif {
    char name[PME_IFNAME_LEN];
    int ifindex, mtu, s[2]; /* sockets of PME's EtherType and of the control one */
    uint8_t mac[6];
};

struct nb {
    int li;
    uint8_t mac[6];
    char host[64], iface[16];
    unsigned mtu, big;
    int heard_ctl, heard_pme, small_ok, big_ok;
};

static struct lif ifs[PME_MAX_IFACES];
static int nifs;
static struct nb nbs[MAX_NB];
static int nnb;
static uint32_t run_id;
static uint16_t pme_type = PME_ETHERTYPE_DEFAULT;
static char self[64];
static unsigned char frame[65536 + 64];

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int open_sock(struct lif *l, uint16_t type)
{
    int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(type));
    struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(type),
                            .sll_ifindex = l->ifindex};
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(s);
        s = -1;
    }
    return s;
}

static int open_iface(struct lif *l, const char *name)
{
    struct ifreq ifr;
    memset(l, 0, sizeof(*l));
    snprintf(l->name, sizeof(l->name), "%.15s", name);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.15s", name);
    int ok = s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0;
    l->mtu = ifr.ifr_mtu;
    ok = ok && ioctl(s, SIOCGIFHWADDR, &ifr) == 0;
    memcpy(l->mac, ifr.ifr_hwaddr.sa_data, 6);
    if (s >= 0)
        close(s);
    l->ifindex = (int)if_nametoindex(name);
    if (!ok || !l->ifindex) {
        printf("pme-probe-error\tinterface %s cannot be read\n", name);
        return -1;
    }
    l->s[0] = open_sock(l, pme_type);
    l->s[1] = open_sock(l, CTL_ETHERTYPE);
    if (l->s[0] < 0 || l->s[1] < 0) {
        printf("pme-probe-error\tno raw socket on %s: the probe needs root or CAP_NET_RAW\n",
               name);
        return -1;
    }
    return 0;
}

static void send_frame(const struct lif *l, int ctl, const uint8_t *to, int type, int big,
                       unsigned payload)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    struct probe_hdr h = {.type = (uint8_t)type, .big = (uint8_t)big, .run = htonl(run_id),
                          .mtu = htonl((uint32_t)l->mtu)};
    memcpy(h.magic, "PMEPROBE", 8);
    snprintf(h.host, sizeof(h.host), "%s", self);
    snprintf(h.iface, sizeof(h.iface), "%s", l->name);
    if (payload < sizeof(h))
        payload = sizeof(h);
    memcpy(frame, to ? to : bcast, 6);
    memcpy(frame + 6, l->mac, 6);
    uint16_t et = htons(ctl ? CTL_ETHERTYPE : pme_type);
    memcpy(frame + 12, &et, 2);
    memset(frame + 14, 0, payload);
    memcpy(frame + 14, &h, sizeof(h));
    if (send(l->s[ctl], frame, 14 + payload, 0) < 0) {
        /* a full send queue or a frame over our own MTU: the next tick tries again */
    }
}

static struct nb *find_nb(int li, const uint8_t *mac, const struct probe_hdr *h)
{
    for (int i = 0; i < nnb; i++)
        if (nbs[i].li == li && !memcmp(nbs[i].mac, mac, 6))
            return &nbs[i];
    if (nnb == MAX_NB || h->type != F_DISC)
        return NULL;
    struct nb *n = &nbs[nnb++];
    memset(n, 0, sizeof(*n));
    n->li = li;
    memcpy(n->mac, mac, 6);
    memcpy(n->host, h->host, sizeof(n->host) - 1);
    memcpy(n->iface, h->iface, sizeof(n->iface) - 1);
    n->mtu = ntohl(h->mtu);
    n->big = n->mtu < (unsigned)ifs[li].mtu ? n->mtu : (unsigned)ifs[li].mtu;
    return n;
}

static void receive(int li, int ctl, int echo_only)
{
    ssize_t len;
    while ((len = recv(ifs[li].s[ctl], frame, sizeof(frame), 0)) > 0) {
        struct probe_hdr h;
        if ((size_t)len < 14 + sizeof(h) || !memcmp(frame + 6, ifs[li].mac, 6))
            continue;
        memcpy(&h, frame + 14, sizeof(h));
        if (memcmp(h.magic, "PMEPROBE", 8) || ntohl(h.run) != run_id)
            continue;
        h.host[sizeof(h.host) - 1] = h.iface[sizeof(h.iface) - 1] = 0;
        uint8_t from[6];
        memcpy(from, frame + 6, 6);
        if (h.type == F_PROBE && !ctl) {
            send_frame(&ifs[li], 0, from, F_ECHO, h.big, (unsigned)len - 14);
            continue;
        }
        struct nb *n = echo_only ? NULL : find_nb(li, from, &h);
        if (!n)
            continue;
        if (h.type == F_DISC)
            *(ctl ? &n->heard_ctl : &n->heard_pme) = 1;
        else if (h.type == F_ECHO && !ctl && h.big && (unsigned)len - 14 >= n->big)
            n->big_ok = 1;
        else if (h.type == F_ECHO && !ctl && !h.big)
            n->small_ok = 1;
    }
}

static void tick(void)
{
    for (int i = 0; i < nifs; i++) {
        send_frame(&ifs[i], 1, NULL, F_DISC, 0, 0);
        send_frame(&ifs[i], 0, NULL, F_DISC, 0, 0);
    }
    for (int i = 0; i < nnb; i++) {
        if (!nbs[i].small_ok)
            send_frame(&ifs[nbs[i].li], 0, nbs[i].mac, F_PROBE, 0, 0);
        if (!nbs[i].big_ok)
            send_frame(&ifs[nbs[i].li], 0, nbs[i].mac, F_PROBE, 1, nbs[i].big);
    }
}

/* The interfaces an endpoint would span: -i, else PME_IFACE, else the route file's,
 * else every data interface. */
static int choose_ifaces(const char *spec, char names[][PME_IFNAME_LEN], int *routed)
{
    char buf[PME_MAX_IFACES * 16], err[256];
    *routed = 0;
    if (!spec || !*spec) {
        if (pme_route_ifaces(buf, sizeof(buf), err, sizeof(err)) > 0) {
            *routed = 1;
            spec = buf;
        } else if (pme_default_ifaces(buf, sizeof(buf)) > 0) {
            spec = buf;
        } else {
            printf("pme-probe-error\tno data interface here (set PME_IFACE or -i)\n");
            return -1;
        }
    }
    int n = pme_iflist_expand(spec, names, err, sizeof(err));
    if (n < 0)
        printf("pme-probe-error\t%s\n", err);
    return n;
}

int probe_agent_main(int argc, char **argv)
{
    const char *spec = getenv("PME_IFACE"), *v = getenv("PME_ETHERTYPE");
    long time_ms = 3000;
    static const struct option lo[] = {{"probe-agent", 0, 0, 'a'}, {"name", 1, 0, 'n'},
                                       {"run", 1, 0, 'r'},         {"time", 1, 0, 't'},
                                       {"iface", 1, 0, 'i'},       {0, 0, 0, 0}};
    int c;
    gethostname(self, sizeof(self) - 1);
    if (v && *v)
        pme_type = (uint16_t)strtoul(v, NULL, 0);
    optind = 1;
    while ((c = getopt_long(argc, argv, "i:", lo, NULL)) != -1) {
        switch (c) {
        case 'a': break;
        case 'n': snprintf(self, sizeof(self), "%s", optarg); break;
        case 'r': run_id = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 't': time_ms = strtol(optarg, NULL, 10); break;
        case 'i': spec = optarg; break;
        default: return 2;
        }
    }
    char names[PME_MAX_IFACES][PME_IFNAME_LEN];
    int routed, n = choose_ifaces(spec, names, &routed);
    for (int i = 0; i < n; i++)
        if (open_iface(&ifs[nifs], names[i]) == 0)
            nifs++;
    if (nifs < n || n <= 0)
        return 1;
    printf("pme-probe-routed\t%d\n", routed);
    for (int i = 0; i < nifs; i++) {
        const uint8_t *m = ifs[i].mac;
        printf("pme-probe-if\t%s\t%02x:%02x:%02x:%02x:%02x:%02x\t%d\n", ifs[i].name, m[0], m[1],
               m[2], m[3], m[4], m[5], ifs[i].mtu);
    }
    fflush(stdout);
    struct pollfd pf[2 * PME_MAX_IFACES];
    for (int i = 0; i < nifs; i++)
        for (int k = 0; k < 2; k++)
            pf[2 * i + k] = (struct pollfd){.fd = ifs[i].s[k], .events = POLLIN};
    long long start = now_ms(), next = start;
    for (long long t = start; t < start + time_ms + GRACE_MS; t = now_ms()) {
        int active = t < start + time_ms;
        if (active && t >= next) {
            tick();
            next = t + TICK_MS;
        }
        poll(pf, (nfds_t)(2 * nifs), 10);
        for (int i = 0; i < nifs; i++)
            for (int k = 0; k < 2; k++)
                receive(i, k, !active);
    }
    for (int i = 0; i < nnb; i++) {
        const struct nb *b = &nbs[i];
        printf("pme-probe\t%s\t%s\t%s\t%u\t%d\t%d\t%d\t%d\t%u\n", ifs[b->li].name, b->host,
               b->iface, b->mtu, b->heard_ctl, b->heard_pme, b->small_ok, b->big_ok, b->big);
    }
    return 0;
}
