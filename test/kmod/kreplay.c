// SPDX-License-Identifier: BSD-3-Clause
/*
 * kreplay - an eavesdropper's flood: capture one authentic PING as it leaves on an
 * interface, then send copies of it back onto the wire as fast as the link takes them,
 * with a forged Ethernet source, and count the PONGs that come back to that source.
 *
 *   kreplay IFACE SECONDS [WAIT_SECONDS]
 *
 * IFACE is the pinger's side of the link (the copies go to the pinged endpoint). It
 * waits up to WAIT_SECONDS (default 10) for a PING, floods for SECONDS, and prints
 *   kreplay: <n> copies of the PING of <node>/<ep> nonce <x> in <ms> ms (<rate>/s),
 *   <k> PONGs to the forged source
 * Exit status: 0 when it flooded, 1 when no PING came, 2 usage or a socket error.
 * Needs CAP_NET_RAW (tests run it as root in a guest). PME_ETHERTYPE as for PME.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pme_wire.h"

#define BATCH 64

/* A locally administered unicast address no interface of the test has. */
static const unsigned char forged_src[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Of every protocol: only such a socket sees the frames the interface sends. */
static int open_socket(const char *iface)
{
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        fprintf(stderr, "kreplay: packet socket: %s (run as root)\n", strerror(errno));
        exit(2);
    }
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
                              .sll_ifindex = (int)if_nametoindex(iface)};
    if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        fprintf(stderr, "kreplay: bind to %s: %s\n", iface, strerror(errno));
        exit(2);
    }
    return fd;
}

/* Wait for a PING leaving on the interface; its length, or 0 when none came in time. */
static size_t capture_ping(int fd, unsigned ethertype, unsigned char *f, size_t room,
                           double wait_s)
{
    double end = now_s() + wait_s;
    while (now_s() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(fd, f, room, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        const struct pme_wire_hdr *wh = (const void *)(f + PME_ETH_HLEN);
        if (n >= (ssize_t)(PME_ETH_HLEN + sizeof(*wh) + sizeof(struct pme_wire_ping)) &&
            from.sll_pkttype == PACKET_OUTGOING && ntohs(from.sll_protocol) == ethertype &&
            wh->type == PME_T_PING)
            return (size_t)n;
    }
    return 0;
}

/* Read what waits; count the PONGs addressed to the forged source. */
static unsigned long drain(int fd, unsigned ethertype)
{
    unsigned char f[2048];
    unsigned long pongs = 0;
    ssize_t n;
    while ((n = recv(fd, f, sizeof(f), MSG_DONTWAIT)) > 0) {
        const struct pme_wire_hdr *wh = (const void *)(f + PME_ETH_HLEN);
        if (n >= (ssize_t)(PME_ETH_HLEN + sizeof(*wh)) && f[12] == ethertype >> 8 &&
            f[13] == (ethertype & 0xff) && wh->type == PME_T_PONG &&
            !memcmp(f, forged_src, 6))
            pongs++;
    }
    return pongs;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: kreplay IFACE SECONDS [WAIT_SECONDS]\n");
        return 2;
    }
    const char *et = getenv("PME_ETHERTYPE");
    unsigned ethertype = et && *et ? (unsigned)strtoul(et, NULL, 0) : PME_ETHERTYPE_DEFAULT;
    double secs = atof(argv[2]), wait_s = argc == 4 ? atof(argv[3]) : 10;
    int fd = open_socket(argv[1]);
    /* The test starts the client only once this is printed: a socket opened after the
     * client's PINGs (a process that starts late in a loaded guest) would see none. */
    printf("kreplay: listening on %s\n", argv[1]);
    fflush(stdout);

    unsigned char frame[2048];
    size_t len = capture_ping(fd, ethertype, frame, sizeof(frame), wait_s);
    if (!len) {
        printf("kreplay: no PING left %s within %g s\n", argv[1], wait_s);
        return 1;
    }
    const struct pme_wire_hdr *wh = (const void *)(frame + PME_ETH_HLEN);
    /* The copies go out with another Ethernet source: nothing under the MAC changes. */
    memcpy(frame + 6, forged_src, 6);
    /* Our own copies would come back to us as outgoing frames: not worth reading. */
    int one = 1;
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
    drain(fd, ethertype);

    struct mmsghdr msgs[BATCH];
    struct iovec iov = {frame, len};
    memset(msgs, 0, sizeof(msgs));
    for (int i = 0; i < BATCH; i++) {
        msgs[i].msg_hdr.msg_iov = &iov;
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    unsigned long sent = 0, pongs = 0;
    double t0 = now_s(), t;
    while ((t = now_s()) - t0 < secs) {
        int n = sendmmsg(fd, msgs, BATCH, 0);
        if (n < 0 && errno != ENOBUFS && errno != EAGAIN) {
            fprintf(stderr, "kreplay: send: %s\n", strerror(errno));
            return 2;
        }
        if (n > 0)
            sent += (unsigned long)n;
        pongs += drain(fd, ethertype);
    }
    usleep(100000); /* the last answers */
    pongs += drain(fd, ethertype);
    double ms = (now_s() - t0) * 1000;
    printf("kreplay: %lu copies of the PING of %08x/%u nonce %#llx in %.0f ms (%.0f/s), "
           "%lu PONGs to the forged source\n",
           sent, ntohl(wh->src_node), ntohs(wh->src_ep), (unsigned long long)be64toh(wh->nonce),
           ms, sent / (ms / 1000), pongs);
    close(fd);
    return 0;
}
