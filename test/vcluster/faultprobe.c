// SPDX-License-Identifier: BSD-3-Clause
/*
 * faultprobe - numbered raw frames through a link with injected faults, and an exact
 * account of what arrived (for test/vcluster/t-faults.sh).
 *
 *   faultprobe send IFACE DST-MAC ETHERTYPE COUNT SIZE [GAP_US]
 *       Send COUNT frames of SIZE bytes after the Ethernet header, numbered 0..COUNT-1,
 *       GAP_US microseconds apart (default 20).
 *   faultprobe recv IFACE ETHERTYPE COUNT READYFILE [IDLE_MS]
 *       Receive frames of ETHERTYPE on IFACE until IDLE_MS (default 1000) pass without
 *       one, then print
 *         received=R unique=U duplicates=D corrupted=C onebit=B unreadable=X
 *         out_of_order=O missing=M max_gap_us=G
 *         lost: N N N ...            (the numbers that never arrived, in order)
 *       A frame's number is written twice (n and ~n) so that one flipped bit anywhere
 *       cannot hide which frame it was; the rest of the frame is a pattern of its byte
 *       offsets and its number. corrupted counts frames that differ from what was sent, onebit those
 *       that differ in exactly one bit. out_of_order counts frames that arrived after a
 *       higher number had; max_gap_us is the longest wait between two arrivals.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x464c5450u /* "PTLF" */
#define MAXSIZE 9000

struct probe_hdr {
    uint32_t magic, n, not_n;
};

static void die(const char *what)
{
    fprintf(stderr, "faultprobe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int open_on(const char *ifname, unsigned ethertype, uint8_t mac[6])
{
    int s = socket(AF_PACKET, SOCK_RAW, htons((uint16_t)ethertype));
    if (s < 0)
        die("socket(AF_PACKET)");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
        die(ifname);
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons((uint16_t)ethertype);
    sll.sll_ifindex = ifr.ifr_ifindex;
    if (bind(s, (struct sockaddr *)&sll, sizeof(sll)) < 0)
        die("bind");
    if (mac) {
        if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
            die("SIOCGIFHWADDR");
        memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    }
    return s;
}

/* Byte off of frame n: depends on n, so that a frame taken for another number differs
 * from it in many bits, not in the one that was flipped. */
static uint8_t pattern(size_t off, uint32_t n)
{
    return (uint8_t)(off * 7 + 3 + n * 131 + (n >> 8));
}

/* The payload (after the Ethernet header) of frame n. */
static void fill(uint8_t *p, size_t size, uint32_t n)
{
    struct probe_hdr h = {MAGIC, n, ~n};
    for (size_t i = 0; i < size; i++)
        p[i] = pattern(i, n);
    memcpy(p, &h, sizeof(h));
}

static int do_send(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "usage: faultprobe send IFACE DST-MAC ETHERTYPE COUNT SIZE [GAP_US]\n"), 2;
    unsigned ethertype = (unsigned)strtoul(argv[2], NULL, 0);
    long count = atol(argv[3]), size = atol(argv[4]);
    long gap = argc > 5 ? atol(argv[5]) : 20;
    if (size < (long)sizeof(struct probe_hdr) || size > MAXSIZE || count < 1)
        return fprintf(stderr, "faultprobe: bad COUNT or SIZE\n"), 2;
    static uint8_t frame[14 + MAXSIZE];
    unsigned m[6];
    if (sscanf(argv[1], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
        return fprintf(stderr, "faultprobe: bad MAC %s\n", argv[1]), 2;
    for (int i = 0; i < 6; i++)
        frame[i] = (uint8_t)m[i];
    int s = open_on(argv[0], ethertype, frame + 6);
    frame[12] = (uint8_t)(ethertype >> 8);
    frame[13] = (uint8_t)ethertype;
    double next = now_us();
    for (long n = 0; n < count; n++) {
        fill(frame + 14, (size_t)size, (uint32_t)n);
        while (send(s, frame, 14 + (size_t)size, 0) < 0)
            if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
                die("send");
        next += (double)gap;
        while (gap && now_us() < next)
            ;
    }
    return 0;
}

/* How many bits of p differ from frame n's payload (want: scratch space). */
static int differing_bits(const uint8_t *p, uint8_t *want, size_t size, uint32_t n)
{
    int bits = 0;
    fill(want, size, n);
    for (size_t i = 0; i < size; i++)
        bits += __builtin_popcount((unsigned)(p[i] ^ want[i]));
    return bits;
}

static int do_recv(int argc, char **argv)
{
    if (argc < 4)
        return fprintf(stderr, "usage: faultprobe recv IFACE ETHERTYPE COUNT READYFILE [IDLE_MS]\n"), 2;
    unsigned ethertype = (unsigned)strtoul(argv[1], NULL, 0);
    long count = atol(argv[2]);
    int idle_ms = argc > 4 ? atoi(argv[4]) : 1000;
    int s = open_on(argv[0], ethertype, NULL);
    int sz = 64 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
    struct timeval first = {10, 0}, idle = {idle_ms / 1000, (idle_ms % 1000) * 1000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &first, sizeof(first));
    int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(argv[3]);
    close(fd);
    unsigned *seen = calloc((size_t)count, sizeof(unsigned));
    static uint8_t buf[14 + MAXSIZE], want[MAXSIZE];
    long received = 0, corrupted = 0, onebit = 0, unreadable = 0, out_of_order = 0;
    long highest = -1;
    double last = 0, max_gap = 0;
    for (;;) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t len = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (len < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (from.sll_pkttype == PACKET_OUTGOING)
            continue;
        double t = now_us();
        if (received == 0)
            setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
        else if (t - last > max_gap)
            max_gap = t - last;
        last = t;
        received++;
        size_t size = (size_t)len - 14;
        struct probe_hdr h;
        if (size < sizeof(h)) {
            unreadable++;
            continue;
        }
        memcpy(&h, buf + 14, sizeof(h));
        /* One flipped bit leaves n or ~n intact: of the two candidates, the frame is the
         * one it differs least from. */
        uint32_t cand[2] = {h.n, ~h.not_n};
        long n = -1;
        int bits = 0;
        for (int c = 0; c < 2; c++) {
            if ((long)cand[c] >= count || (c == 1 && cand[1] == cand[0]))
                continue;
            int b = differing_bits(buf + 14, want, size, cand[c]);
            if (n < 0 || b < bits) {
                n = cand[c];
                bits = b;
            }
        }
        if (n < 0) {
            unreadable++;
            continue;
        }
        if (bits) {
            corrupted++;
            onebit += bits == 1;
        }
        if (n < highest)
            out_of_order++;
        else
            highest = n;
        seen[n]++;
    }
    long unique = 0, dups = 0, missing = 0;
    for (long i = 0; i < count; i++) {
        unique += seen[i] > 0;
        dups += seen[i] > 1 ? seen[i] - 1 : 0;
        missing += seen[i] == 0;
    }
    printf("received=%ld unique=%ld duplicates=%ld corrupted=%ld onebit=%ld unreadable=%ld "
           "out_of_order=%ld missing=%ld max_gap_us=%.0f\nlost:",
           received, unique, dups, corrupted, onebit, unreadable, out_of_order, missing, max_gap);
    for (long i = 0; i < count; i++)
        if (!seen[i])
            printf(" %ld", i);
    printf("\n");
    free(seen);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "send"))
        return do_send(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "recv"))
        return do_recv(argc - 2, argv + 2);
    fprintf(stderr, "usage: faultprobe send|recv ...\n");
    return 2;
}
