// SPDX-License-Identifier: BSD-3-Clause
/*
 * rawsock_probe - the socket PME's broker hands out, seen by the process that gets it
 * (run by t-rawsock.sh inside network namespaces).
 *
 *   rawsock_probe listen IFACE EP COUNT
 *       As a user without CAP_NET_RAW: opens the ring device for endpoint EP (its socket
 *       comes from pme_rawsock), checks that the socket's filter can be neither
 *       replaced, removed nor unlocked, prints "ready", and takes frames until COUNT
 *       PME frames for EP have come: no other frame may arrive in between, neither PME
 *       frames for another endpoint nor frames of another EtherType. Then it sends one
 *       IPv4-typed frame, which the broker cannot prevent (doc/rawsock.md).
 *   rawsock_probe send IFACE DSTMAC ETHERTYPE EP COUNT
 *       As root: sends COUNT minimal frames of ETHERTYPE to DSTMAC whose first two
 *       payload bytes (PME's destination endpoint) are EP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev.h"
#include "pme_test.h"
#include "pme_wire.h"

#define WAIT_S 10.0
#define FRAME_LEN 60 /* the Ethernet minimum */

struct tally {
    uint16_t ethertype, ep;
    unsigned mine, other_ep, other_type;
};

static void count(void *arg, const uint8_t *f, size_t len)
{
    struct tally *t = arg;
    uint16_t type = len >= 14 ? (uint16_t)(f[12] << 8 | f[13]) : 0;
    uint16_t ep = len >= 16 ? (uint16_t)(f[14] << 8 | f[15]) : 0xFFFF;
    if (type != t->ethertype)
        t->other_type++;
    else if (ep != t->ep)
        t->other_ep++;
    else
        t->mine++;
}

static void check_locked(int fd)
{
    struct sock_filter all[] = {BPF_STMT(BPF_RET | BPF_K, 0xFFFFFFFFu)};
    struct sock_fprog prog = {1, all};
    int zero = 0, rc;
    errno = 0;
    rc = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
    printf("replace the filter (SO_ATTACH_FILTER): %s\n", rc ? strerror(errno) : "done");
    CHECK(rc < 0 && errno == EPERM, "the socket's filter could be replaced");
    rc = setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof(zero));
    printf("remove the filter (SO_DETACH_FILTER): %s\n", rc ? strerror(errno) : "done");
    CHECK(rc < 0 && errno == EPERM, "the socket's filter could be removed");
    rc = setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &zero, sizeof(zero));
    printf("unlock the filter (SO_LOCK_FILTER 0): %s\n", rc ? strerror(errno) : "done");
    CHECK(rc < 0 && errno == EPERM, "the socket's filter could be unlocked");
}

static int listen_frames(const char *iface, unsigned ep, unsigned want)
{
    struct pme_config cfg;
    pme_config_init(&cfg);
    cfg.iface = iface;
    cfg.ring_bytes = 1u << 20;
    CHECK(getuid() != 0, "run this as a user without CAP_NET_RAW, not as root");
    struct pme_dev *dev = NULL;
    char err[512];
    struct pme_dev_who who = {.ep_id = (uint16_t)ep};
    int rc = pme_dev_ring_ops.open(&dev, &cfg, &who, err, sizeof(err));
    CHECK(rc == PME_OK, "opening the ring device: %s", err);
    check_locked(pme_dev_ring_ops.fd(dev));
    printf("ready\n");
    fflush(stdout);

    struct tally t = {.ethertype = cfg.ethertype, .ep = (uint16_t)ep};
    double end = now_s() + WAIT_S;
    while (t.mine < want && now_s() < end) {
        struct pollfd pfd = {.fd = pme_dev_ring_ops.fd(dev), .events = POLLIN};
        poll(&pfd, 1, 100);
        CHECK_OK(pme_dev_ring_ops.poll(dev, 64, count, &t));
    }
    printf("received: %u PME frames for endpoint %u, %u for other endpoints, %u of other "
           "EtherTypes\n", t.mine, ep, t.other_ep, t.other_type);
    CHECK(t.mine == want, "%u of the %u frames for this endpoint arrived in %.0f s", t.mine,
          want, WAIT_S);
    CHECK(t.other_ep == 0, "PME frames of other endpoints reached this one");
    CHECK(t.other_type == 0, "frames of other EtherTypes reached the PME socket");

    uint8_t frame[FRAME_LEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    memcpy(frame + 6, dev->mac, 6);
    frame[12] = 0x08; /* IPv4 */
    struct pme_dev_frame out = {.iov = {{frame, sizeof(frame)}}, .iovcnt = 1};
    rc = pme_dev_ring_ops.send(dev, &out, 1);
    printf("send a frame of EtherType 0x0800: %s\n", rc == 1 ? "sent" : "not sent");
    CHECK(rc == 1, "the socket can no longer send any frame: doc/rawsock.md says it can");
    pme_dev_ring_ops.close(dev);
    return 0;
}

static int send_frames(char **argv)
{
    uint8_t frame[FRAME_LEN] = {0};
    unsigned m[6], type, ep, n;
    CHECK(sscanf(argv[1], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6,
          "not a MAC: %s", argv[1]);
    CHECK(sscanf(argv[2], "%x", &type) == 1 && sscanf(argv[3], "%u", &ep) == 1 &&
              sscanf(argv[4], "%u", &n) == 1,
          "usage: send IFACE DSTMAC ETHERTYPE EP COUNT");
    for (int i = 0; i < 6; i++)
        frame[i] = (uint8_t)m[i];
    frame[6] = 0x02; /* a locally administered source */
    frame[11] = 0x99;
    frame[12] = (uint8_t)(type >> 8);
    frame[13] = (uint8_t)type;
    frame[PME_WIRE_OFF_DST_EP] = (uint8_t)(ep >> 8);
    frame[PME_WIRE_OFF_DST_EP + 1] = (uint8_t)ep;
    int s = socket(AF_PACKET, SOCK_RAW, 0);
    CHECK(s >= 0, "packet socket: %s", strerror(errno));
    struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(argv[0]),
                             .sll_halen = 6};
    memcpy(to.sll_addr, frame, 6);
    for (unsigned i = 0; i < n; i++)
        CHECK(sendto(s, frame, sizeof(frame), 0, (struct sockaddr *)&to, sizeof(to)) ==
                  (ssize_t)sizeof(frame),
              "sendto %s: %s", argv[0], strerror(errno));
    close(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "listen"))
        return listen_frames(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
    if (argc == 7 && !strcmp(argv[1], "send"))
        return send_frames(argv + 2);
    fprintf(stderr, "usage: rawsock_probe listen IFACE EP COUNT\n"
                    "       rawsock_probe send IFACE DSTMAC ETHERTYPE EP COUNT\n");
    return 2;
}
