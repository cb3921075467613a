// SPDX-License-Identifier: BSD-3-Clause
/*
 * routeprobe - crafted PME frames of wire version 2 across a mesh whose nodes forward
 * in the kernel (pme_route install), for test/vcluster/t-route.sh and
 * maint/route-bench. It sends the way pme_core will: it reads this node's route file
 * (src/pme_core/pme_route.h: $PME_ROUTES or /run/pme/routes.<netns inode>), puts the
 * destination node in the header and sends to the route's next hop.
 *
 *   routeprobe listen ETHERTYPE READYFILE
 *       Print every frame of ETHERTYPE that reaches this node's sockets, until SIGTERM:
 *         <iface> <src-mac> <dst-mac> <version> <type> <src_node> <dst_node> <hops_left> <tag>
 *   routeprobe send ETHERTYPE HOPS DST:TAG...
 *       For each DST:TAG, one version 2 frame to node DST with hops_left HOPS.
 *   routeprobe sendvia ETHERTYPE IFACE MAC VERSION DST HOPS TAG
 *       One frame sent out IFACE to MAC whatever the routes say (src_node: this node's).
 *   routeprobe pong ETHERTYPE
 *       Answer every ping addressed to this node, until SIGTERM.
 *   routeprobe ping ETHERTYPE DST COUNT
 *       COUNT round trips to node DST (polling, no sleep); prints
 *         dst=D hops=H count=N min_us=A median_us=B
 *       with half round-trip times.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pme_route.h"
#include "pme_wire.h"
#include "routefile.h"

#define HDR ((int)sizeof(struct pme_wire_hdr))
#define T_DATA PME_T_DATA
#define T_PING PME_T_PING
#define T_PONG PME_T_PONG

static volatile sig_atomic_t stop;
static unsigned ethertype;
static struct routefile rf;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(const char *what)
{
    fprintf(stderr, "routeprobe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void fail(const char *msg)
{
    fprintf(stderr, "routeprobe: %s\n", msg);
    exit(1);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int raw_socket(void)
{
    int s = socket(AF_PACKET, SOCK_RAW, htons((uint16_t)ethertype));
    if (s < 0)
        die("socket(AF_PACKET)");
    return s;
}

static void load_routes(void)
{
    char path[4096], err[8192];
    if (pme_route_path(path, sizeof(path)))
        fail("route file path too long");
    if (routefile_read(path, &rf, err, sizeof(err)))
        fail(err);
}

/* send_frame: a version-V frame out ifname to mac. */
static void send_frame(int s, const char *ifname, const uint8_t *mac, unsigned version,
                       unsigned type, uint32_t dst, unsigned hops, const void *tag, size_t tlen)
{
    uint8_t f[14 + HDR + 64];
    struct ifreq ifr;
    memset(f, 0, sizeof(f));
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
        die(ifname);
    int idx = ifr.ifr_ifindex;
    if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
        die("SIOCGIFHWADDR");
    if (tlen > 64)
        tlen = 64;
    memcpy(f, mac, 6);
    memcpy(f + 6, ifr.ifr_hwaddr.sa_data, 6);
    f[12] = (uint8_t)(ethertype >> 8);
    f[13] = (uint8_t)ethertype;
    struct pme_wire_hdr h;
    memset(&h, 0, sizeof(h));
    h.version = (uint8_t)version;
    h.type = (uint8_t)type;
    h.len = htons((uint16_t)tlen);
    h.dst_node = htonl(dst);
    h.src_node = htonl(rf.node);
    h.hops_left = (uint8_t)hops;
    memcpy(f + 14, &h, sizeof(h));
    memcpy(f + 14 + HDR, tag, tlen);
    struct sockaddr_ll to;
    memset(&to, 0, sizeof(to));
    to.sll_family = AF_PACKET;
    to.sll_ifindex = idx;
    to.sll_halen = 6;
    memcpy(to.sll_addr, mac, 6);
    if (sendto(s, f, 14 + HDR + tlen, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
        die("sendto");
}

static const struct pme_route_line *route_to(uint32_t dst)
{
    for (int i = 0; i < rf.nroutes; i++)
        if (rf.routes[i].u.node == dst)
            return &rf.routes[i];
    return NULL;
}

static void send_routed(int s, unsigned type, uint32_t dst, unsigned hops, const void *tag,
                        size_t tlen)
{
    const struct pme_route_line *r = route_to(dst);
    if (!r) {
        fprintf(stderr, "routeprobe: node %u has no route to node %u\n", rf.node, dst);
        exit(1);
    }
    send_frame(s, r->iface, r->mac, 2, type, dst, hops, tag, tlen);
}

struct rx {
    char ifname[IF_NAMESIZE];
    const uint8_t *f;
    size_t len;
    unsigned version, type, hops;
    uint32_t src, dst;
};

/* receive: the next incoming frame (flags: 0 or MSG_DONTWAIT); 0, or -1 when none. */
static int receive(int s, uint8_t *buf, size_t cap, int flags, struct rx *m)
{
    struct sockaddr_ll from;
    socklen_t fl = sizeof(from);
    ssize_t n = recvfrom(s, buf, cap, flags, (struct sockaddr *)&from, &fl);
    if (n < 0 || from.sll_pkttype == PACKET_OUTGOING || n < 14 + 17)
        return -1;
    memset(m, 0, sizeof(*m));
    if (!if_indextoname((unsigned)from.sll_ifindex, m->ifname))
        strcpy(m->ifname, "?");
    m->f = buf;
    m->len = (size_t)n;
    m->version = buf[16];
    m->type = buf[17];
    memcpy(&m->dst, buf + 22, 4);
    memcpy(&m->src, buf + 26, 4);
    m->dst = ntohl(m->dst);
    m->src = ntohl(m->src);
    m->hops = buf[30];
    return 0;
}

static void on_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: interrupt recvfrom */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* A listener or answerer must not outlive the test or benchmark that started it
     * (an orphan would hold the namespaces, and the lock around them, for good). */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        stop = 1;
}

static int do_listen(const char *ready)
{
    int s = raw_socket();
    struct timeval tv = {0, 100000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    on_stop_signals();
    int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(ready);
    close(fd);
    static uint8_t buf[65600];
    for (;;) {
        struct rx m;
        if (receive(s, buf, sizeof(buf), stop ? MSG_DONTWAIT : 0, &m)) {
            if (stop && errno != EINTR)
                break;
            continue;
        }
        char tag[65] = "-";
        if (m.len > 14 + HDR) {
            size_t tl = m.len - 14 - HDR < 64 ? m.len - 14 - HDR : 64;
            memcpy(tag, m.f + 14 + HDR, tl);
            tag[tl] = 0;
            tag[strcspn(tag, " \t\r\n")] = 0;
            if (!tag[0])
                strcpy(tag, "-");
        }
        const uint8_t *a = m.f;
        printf("%s %02x:%02x:%02x:%02x:%02x:%02x %02x:%02x:%02x:%02x:%02x:%02x %u %u %u %u %u %s\n",
               m.ifname, a[6], a[7], a[8], a[9], a[10], a[11], a[0], a[1], a[2], a[3], a[4],
               a[5], m.version, m.type, m.src, m.dst, m.hops, tag);
        fflush(stdout);
    }
    return 0;
}

static int do_send(int argc, char **argv)
{
    if (argc < 2)
        fail("usage: routeprobe send ETHERTYPE HOPS DST:TAG...");
    load_routes();
    unsigned hops = (unsigned)atoi(argv[0]);
    int s = raw_socket();
    for (int i = 1; i < argc; i++) {
        char *colon = strchr(argv[i], ':');
        if (!colon)
            fail("expected DST:TAG");
        uint32_t dst = (uint32_t)strtoul(argv[i], NULL, 10);
        send_routed(s, T_DATA, dst, hops, colon + 1, strlen(colon + 1));
    }
    return 0;
}

static int do_sendvia(int argc, char **argv)
{
    if (argc != 6)
        fail("usage: routeprobe sendvia ETHERTYPE IFACE MAC VERSION DST HOPS TAG");
    load_routes();
    uint8_t mac[6];
    if (pme_route_parse_mac(argv[1], mac))
        fail("bad MAC");
    int s = raw_socket();
    send_frame(s, argv[0], mac, (unsigned)atoi(argv[2]), T_DATA,
               (uint32_t)strtoul(argv[3], NULL, 10), (unsigned)atoi(argv[4]), argv[5],
               strlen(argv[5]));
    return 0;
}

static int do_pong(void)
{
    load_routes();
    int s = raw_socket();
    struct timeval tv = {0, 100000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    on_stop_signals();
    static uint8_t buf[2048];
    while (!stop) {
        struct rx m;
        if (receive(s, buf, sizeof(buf), 0, &m) || m.type != T_PING || m.dst != rf.node ||
            m.len < 14 + HDR + 8)
            continue;
        send_routed(s, T_PONG, m.src, 16, buf + 14 + HDR, 8);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int do_ping(int argc, char **argv)
{
    if (argc != 2)
        fail("usage: routeprobe ping ETHERTYPE DST COUNT");
    load_routes();
    uint32_t dst = (uint32_t)strtoul(argv[0], NULL, 10);
    int count = atoi(argv[1]);
    const struct pme_route_line *r = route_to(dst);
    if (!r || count < 1)
        fail("no route to that node, or a bad COUNT");
    int s = raw_socket();
    double *t = calloc((size_t)count, sizeof(double));
    static uint8_t buf[2048];
    for (int i = -count / 10; i < count; i++) { /* the first tenth warms up */
        uint64_t token = (uint64_t)(i + count) * 2654435761u;
        double t0 = now_us();
        send_routed(s, T_PING, dst, 16, &token, sizeof(token));
        for (;;) {
            struct rx m;
            if (now_us() - t0 > 1e6)
                fail("no answer within a second (is routeprobe pong running there?)");
            if (receive(s, buf, sizeof(buf), MSG_DONTWAIT, &m) || m.type != T_PONG ||
                m.len < 14 + HDR + 8 || memcmp(buf + 14 + HDR, &token, 8))
                continue;
            break;
        }
        if (i >= 0)
            t[i] = (now_us() - t0) / 2;
    }
    qsort(t, (size_t)count, sizeof(double), cmp_double);
    printf("dst=%u hops=%u count=%d min_us=%.2f median_us=%.2f\n", dst, r->hops, count, t[0],
           t[count / 2]);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: routeprobe listen|send|sendvia|pong|ping ETHERTYPE ...\n");
        return 2;
    }
    ethertype = (unsigned)strtoul(argv[2], NULL, 0);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "listen") && argc == 4)
        return do_listen(argv[3]);
    if (!strcmp(cmd, "send"))
        return do_send(argc - 3, argv + 3);
    if (!strcmp(cmd, "sendvia"))
        return do_sendvia(argc - 3, argv + 3);
    if (!strcmp(cmd, "pong"))
        return do_pong();
    if (!strcmp(cmd, "ping"))
        return do_ping(argc - 3, argv + 3);
    fprintf(stderr, "routeprobe: unknown command or wrong arguments\n");
    return 2;
}
