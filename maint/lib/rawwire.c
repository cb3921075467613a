// SPDX-License-Identifier: BSD-3-Clause
/*
 * rawwire.c - the wire's own limits, measured beside PME in the same run.
 *
 *   rawwire raw-pp   IFACE PEER_MAC server|client SIZE ITERS spin|block
 *   rawwire raw-bw   IFACE PEER_MAC server|client FRAME_BYTES TOTAL_BYTES
 *   rawwire tcp-pp   ADDR server|client SIZE ITERS spin|block
 *   rawwire tcp-bw   ADDR server|client SIZE COUNT
 *
 * raw-pp: Ethernet frames of EtherType 0x88B5 bounced between two AF_PACKET sockets,
 * one send() and one recv() per frame: the floor for any transport on this wire.
 * "spin" polls with MSG_DONTWAIT (each process has a core), "block" sleeps in recv().
 * raw-bw: one send() per frame as fast as the sender can; the receiver reports MB/s.
 * tcp-pp: the same ping-pong over TCP with TCP_NODELAY, the baseline PME must beat.
 * tcp-bw: COUNT messages of SIZE bytes over one TCP connection, then a one-byte answer;
 * the client reports MB/s (kmod-bench times both processes' CPU around it).
 * Prints one line: "<test> <mode> size <n>: <value> <unit>".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ETHERTYPE 0x88B5
#define WARMUP 100

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(const char *what)
{
    perror(what);
    exit(1);
}

static int raw_socket(const char *ifname, unsigned char mac[6])
{
    int s = socket(AF_PACKET, SOCK_RAW, htons(ETHERTYPE));
    if (s < 0)
        fail("socket(AF_PACKET)");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
        fail(ifname);
    int index = ifr.ifr_ifindex;
    if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
        fail("SIOCGIFHWADDR");
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETHERTYPE);
    sll.sll_ifindex = index;
    if (bind(s, (struct sockaddr *)&sll, sizeof(sll)) < 0)
        fail("bind");
    int big = 64 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
    setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
    return s;
}

static void parse_mac(const char *s, unsigned char mac[6])
{
    unsigned m[6];
    if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6) {
        fprintf(stderr, "rawwire: bad MAC %s\n", s);
        exit(2);
    }
    for (int i = 0; i < 6; i++)
        mac[i] = (unsigned char)m[i];
}

static ssize_t receive(int s, void *buf, size_t len, int spin)
{
    if (!spin)
        return recv(s, buf, len, 0);
    ssize_t r;
    while ((r = recv(s, buf, len, MSG_DONTWAIT)) < 0 && (errno == EAGAIN || errno == EINTR))
        ;
    return r;
}

static unsigned char frame[70000], reply[70000];

static int raw_pp(int argc, char **argv)
{
    if (argc != 8)
        return 2;
    unsigned char me[6], peer[6];
    int s = raw_socket(argv[2], me);
    parse_mac(argv[3], peer);
    int server = !strcmp(argv[4], "server");
    int size = atoi(argv[5]), iters = atoi(argv[6]), spin = !strcmp(argv[7], "spin");
    memcpy(frame, peer, 6);
    memcpy(frame + 6, me, 6);
    frame[12] = ETHERTYPE >> 8;
    frame[13] = ETHERTYPE & 0xff;
    size_t len = 14 + (size_t)size < 60 ? 60 : 14 + (size_t)size;
    double t0 = 0;
    for (int i = 0; i < iters + WARMUP; i++) {
        if (i == WARMUP)
            t0 = now_s();
        if (!server && send(s, frame, len, 0) < 0)
            fail("send");
        if (receive(s, reply, sizeof(reply), spin) < 0)
            fail("recv");
        if (server && send(s, frame, len, 0) < 0)
            fail("send");
    }
    if (!server)
        printf("raw-pp %s size %d: %.3f us\n", argv[7], size, (now_s() - t0) / iters / 2 * 1e6);
    return 0;
}

static int raw_bw(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    unsigned char me[6], peer[6];
    int s = raw_socket(argv[2], me);
    parse_mac(argv[3], peer);
    int server = !strcmp(argv[4], "server");
    long size = atol(argv[5]), total = atol(argv[6]);
    long n = total / size;
    memcpy(frame, peer, 6);
    memcpy(frame + 6, me, 6);
    frame[12] = ETHERTYPE >> 8;
    frame[13] = ETHERTYPE & 0xff;
    if (!server) {
        for (long i = 0; i < n; i++)
            while (send(s, frame, 14 + (size_t)size, 0) < 0)
                ;
        return 0;
    }
    /* Time from the first frame to the last; a 2 s silence ends the stream. */
    struct timeval tv = {2, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ssize_t r = recv(s, reply, sizeof(reply), 0);
    if (r < 0)
        fail("recv");
    double t0 = now_s(), last = t0;
    long frames = 1, bytes = r - 14;
    while ((r = recv(s, reply, sizeof(reply), 0)) > 0) {
        bytes += r - 14;
        frames++;
        last = now_s();
    }
    printf("raw-bw frame %ld: %.1f MB/s (%ld of %ld frames)\n", size,
           (double)bytes / (last - t0) / 1e6, frames, n);
    return 0;
}

/* A TCP connection to (or, for the server, from) addr, with TCP_NODELAY; -1 for a
 * bad address. */
static int tcp_connect(const char *addr, int server)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(47111);
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        return -1;
    int one = 1, s;
    if (server) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0)
            fail("listen");
        s = accept(l, NULL, NULL);
        close(l);
    } else {
        s = socket(AF_INET, SOCK_STREAM, 0);
        for (int tries = 0; connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0; tries++) {
            if (tries > 100)
                fail("connect");
            usleep(20000);
        }
    }
    if (s < 0)
        fail("accept");
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return s;
}

static int tcp_pp(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    int server = !strcmp(argv[3], "server");
    int size = atoi(argv[4]), iters = atoi(argv[5]), spin = !strcmp(argv[6], "spin");
    int s = tcp_connect(argv[2], server);
    if (s < 0)
        return 2;
    double t0 = 0;
    for (int i = 0; i < iters + WARMUP; i++) {
        if (i == WARMUP)
            t0 = now_s();
        if (!server && send(s, frame, (size_t)size, 0) < 0)
            fail("send");
        for (int got = 0; got < size;) {
            ssize_t r = receive(s, reply + got, (size_t)size - got, spin);
            if (r <= 0)
                fail("recv");
            got += (int)r;
        }
        if (server && send(s, frame, (size_t)size, 0) < 0)
            fail("send");
    }
    if (!server)
        printf("tcp-pp %s size %d: %.3f us\n", argv[6], size, (now_s() - t0) / iters / 2 * 1e6);
    return 0;
}

static int tcp_bw(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    int server = !strcmp(argv[3], "server");
    size_t size = strtoul(argv[4], NULL, 0);
    long count = atol(argv[5]);
    uint8_t *buf = calloc(1, size ? size : 1), ack = 1;
    int s = buf && size && count > 0 ? tcp_connect(argv[2], server) : -1;
    if (s < 0)
        return 2;
    double t0 = now_s();
    for (long i = 0; i < count; i++) {
        for (size_t done = 0; done < size;) {
            ssize_t r = server ? recv(s, buf + done, size - done, 0)
                               : send(s, buf + done, size - done, 0);
            if (r <= 0)
                fail(server ? "recv" : "send");
            done += (size_t)r;
        }
    }
    if ((server ? send(s, &ack, 1, 0) : recv(s, &ack, 1, MSG_WAITALL)) != 1)
        fail("answer");
    if (!server)
        printf("tcp-bw size %zu: %.1f MB/s\n", size, (double)size * count / (now_s() - t0) / 1e6);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 2;
    if (argc > 1 && !strcmp(argv[1], "raw-pp"))
        rc = raw_pp(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "raw-bw"))
        rc = raw_bw(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "tcp-pp"))
        rc = tcp_pp(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "tcp-bw"))
        rc = tcp_bw(argc, argv);
    if (rc == 2)
        fprintf(stderr, "usage: rawwire raw-pp IFACE PEER_MAC server|client SIZE ITERS spin|block\n"
                        "       rawwire raw-bw IFACE PEER_MAC server|client FRAME TOTAL\n"
                        "       rawwire tcp-pp ADDR server|client SIZE ITERS spin|block\n"
                        "       rawwire tcp-bw ADDR server|client SIZE COUNT\n");
    return rc;
}
