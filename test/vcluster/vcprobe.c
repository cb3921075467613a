// SPDX-License-Identifier: BSD-3-Clause
/* vcprobe - raw Ethernet frames of PME's EtherType (0x88B5) for the vcluster tests.
 *
 *   vcprobe sniff READYFILE
 *       Capture frames of the EtherType on every interface of the current network
 *       namespace until SIGTERM/SIGINT. One line per received frame:
 *         <iface> <pkttype> <src-mac> <dst-mac> <tag>
 *       pkttype is host, broadcast, multicast or otherhost (a frame for another MAC,
 *       which a real NIC would have filtered). Outgoing frames are not reported.
 *       READYFILE is created once the socket is bound.
 *   vcprobe send IFACE DST TAG [IFACE DST TAG]...
 *       Send one tagged frame per triple; DST is a MAC address or "bcast".
 *   vcprobe stream IFACE DST SIZE (count N | seconds S) [ID]
 *       Send numbered frames carrying SIZE payload bytes (blocking sends, so a shaping
 *       qdisc holds the sender back instead of dropping). Prints "sent=N seconds=T".
 *   vcprobe sink IFACE [ID [IDLE_MS [READYFILE]]]
 *       Count the frames of stream ID (0: any stream) arriving on IFACE until IDLE_MS (default 1000)
 *       pass without one (or 10 s without the first). Prints
 *         frames=N bytes=B wire_bytes=W seconds=T wire_MBps=R max_seq=M
 *       where wire bytes include the 14-byte Ethernet header (what tbf meters) and
 *       the rate is measured from the first frame to the last.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ETYPE 0x88B5
#define TAG_MAGIC "VCTG"
#define STREAM_MAGIC "VCST"
#define MAXFRAME 65600

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(const char *what)
{
    fprintf(stderr, "vcprobe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int parse_mac(const char *s, unsigned char *mac)
{
    unsigned m[6];
    if (!strcmp(s, "bcast")) {
        memset(mac, 0xff, 6);
        return 0;
    }
    if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (unsigned char)m[i];
    return 0;
}

static void fmt_mac(const unsigned char *m, char *out)
{
    sprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static int raw_socket(void)
{
    int s = socket(AF_PACKET, SOCK_RAW, htons(ETYPE));
    if (s < 0)
        die("socket(AF_PACKET)");
    return s;
}

/* if_info: index and MAC address of an interface. */
static int if_info(int s, const char *ifname, unsigned char *mac)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0) {
        fprintf(stderr, "vcprobe: no interface %s\n", ifname);
        exit(1);
    }
    int idx = ifr.ifr_ifindex;
    if (mac) {
        if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
            die("SIOCGIFHWADDR");
        memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    }
    return idx;
}

static void bind_to(int s, int ifindex)
{
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof sll);
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETYPE);
    sll.sll_ifindex = ifindex; /* 0: every interface */
    if (bind(s, (struct sockaddr *)&sll, sizeof sll) < 0)
        die("bind");
}

static void big_rcvbuf(int s)
{
    int sz = 64 << 20;
    if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) < 0)
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path);
    close(fd);
}

static const char *pkttype_name(int t)
{
    switch (t) {
    case PACKET_HOST: return "host";
    case PACKET_BROADCAST: return "broadcast";
    case PACKET_MULTICAST: return "multicast";
    case PACKET_OTHERHOST: return "otherhost";
    default: return "other";
    }
}

static int do_sniff(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "usage: vcprobe sniff READYFILE\n");
        return 2;
    }
    int s = raw_socket();
    big_rcvbuf(s);
    bind_to(s, 0);
    struct timeval tv = {0, 100000}; /* wake up to notice a signal */
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: interrupt recvfrom */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    touch(argv[0]);
    static unsigned char buf[MAXFRAME];
    for (;;) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        /* after a stop request, drain what is queued without waiting */
        ssize_t n = recvfrom(s, buf, sizeof buf, stop ? MSG_DONTWAIT : 0, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (stop)
                break;
            continue;
        }
        if (from.sll_pkttype == PACKET_OUTGOING || n < 14)
            continue;
        char ifname[IF_NAMESIZE + 1] = "?", src[18], dst[18], tag[128] = "-";
        if_indextoname(from.sll_ifindex, ifname);
        fmt_mac(buf + 6, src);
        fmt_mac(buf, dst);
        if (n >= 18 && !memcmp(buf + 14, TAG_MAGIC, 4)) {
            size_t len = (size_t)n - 18;
            if (len >= sizeof tag)
                len = sizeof tag - 1;
            memcpy(tag, buf + 18, len);
            tag[len] = 0;
            tag[strcspn(tag, " \t\r\n")] = 0;
            if (!tag[0])
                strcpy(tag, "-");
        }
        printf("%s %s %s %s %s\n", ifname, pkttype_name(from.sll_pkttype), src, dst, tag);
        fflush(stdout);
    }
    return 0;
}

static int do_send(int argc, char **argv)
{
    if (argc < 3 || argc % 3) {
        fprintf(stderr, "usage: vcprobe send IFACE DST TAG [IFACE DST TAG]...\n");
        return 2;
    }
    int s = raw_socket();
    for (int i = 0; i < argc; i += 3) {
        unsigned char frame[128], mac[6];
        memset(frame, 0, sizeof frame);
        int idx = if_info(s, argv[i], mac);
        if (parse_mac(argv[i + 1], frame) < 0) {
            fprintf(stderr, "vcprobe: bad MAC %s\n", argv[i + 1]);
            return 2;
        }
        memcpy(frame + 6, mac, 6);
        frame[12] = ETYPE >> 8;
        frame[13] = ETYPE & 0xff;
        memcpy(frame + 14, TAG_MAGIC, 4);
        size_t tl = strlen(argv[i + 2]);
        if (tl > 100)
            tl = 100;
        memcpy(frame + 18, argv[i + 2], tl);
        size_t len = 18 + tl;
        if (len < 60)
            len = 60; /* minimum Ethernet frame, as a NIC would pad it */
        struct sockaddr_ll to;
        memset(&to, 0, sizeof to);
        to.sll_family = AF_PACKET;
        to.sll_ifindex = idx;
        to.sll_halen = 6;
        memcpy(to.sll_addr, frame, 6);
        if (sendto(s, frame, len, 0, (struct sockaddr *)&to, sizeof to) < 0)
            die("sendto");
    }
    return 0;
}

struct stream_hdr {
    char magic[4];
    uint32_t id;
    uint64_t seq;
};

static int do_stream(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: vcprobe stream IFACE DST SIZE (count N | seconds S) [ID]\n");
        return 2;
    }
    int s = raw_socket();
    unsigned char mac[6];
    static unsigned char frame[MAXFRAME];
    int idx = if_info(s, argv[0], mac);
    /* Room for a few ms of frames in flight, so that a shaping qdisc always has a
     * backlog and the rate measured is the qdisc's, not the sender's wake-up latency;
     * still far below tbf's queue limit, so sends block rather than drop. */
    int sb = 1 << 20;
    setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof sb);
    if (parse_mac(argv[1], frame) < 0) {
        fprintf(stderr, "vcprobe: bad MAC %s\n", argv[1]);
        return 2;
    }
    long size = atol(argv[2]);
    if (size < (long)sizeof(struct stream_hdr) || size > MAXFRAME - 14) {
        fprintf(stderr, "vcprobe: bad size %ld\n", size);
        return 2;
    }
    long count = -1;
    double seconds = -1;
    if (!strcmp(argv[3], "count"))
        count = atol(argv[4]);
    else
        seconds = atof(argv[4]);
    uint32_t id = argc > 5 ? (uint32_t)atol(argv[5]) : 1;
    memcpy(frame + 6, mac, 6);
    frame[12] = ETYPE >> 8;
    frame[13] = ETYPE & 0xff;
    struct sockaddr_ll to;
    memset(&to, 0, sizeof to);
    to.sll_family = AF_PACKET;
    to.sll_ifindex = idx;
    to.sll_halen = 6;
    memcpy(to.sll_addr, frame, 6);
    struct stream_hdr h;
    memcpy(h.magic, STREAM_MAGIC, 4);
    h.id = id;
    double t0 = now(), t = t0;
    uint64_t seq = 0;
    for (;;) {
        if (count >= 0 && (long)seq >= count)
            break;
        if (seconds >= 0 && (seq & 63) == 0 && (t = now()) - t0 >= seconds)
            break;
        h.seq = seq;
        memcpy(frame + 14, &h, sizeof h);
        if (sendto(s, frame, 14 + size, 0, (struct sockaddr *)&to, sizeof to) < 0) {
            if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)
                continue; /* retry the same frame */
            die("sendto");
        }
        seq++;
    }
    printf("sent=%llu seconds=%.3f\n", (unsigned long long)seq, now() - t0);
    return 0;
}

static int do_sink(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: vcprobe sink IFACE [ID [IDLE_MS [READYFILE]]]\n");
        return 2;
    }
    int s = raw_socket();
    big_rcvbuf(s);
    bind_to(s, if_info(s, argv[0], NULL));
    uint32_t id = argc > 1 ? (uint32_t)atol(argv[1]) : 1;
    int idle_ms = argc > 2 ? atoi(argv[2]) : 1000;
    if (argc > 3)
        touch(argv[3]);
    struct timeval tv = {idle_ms / 1000, (idle_ms % 1000) * 1000};
    struct timeval first_wait = {10, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &first_wait, sizeof first_wait);
    static unsigned char buf[MAXFRAME];
    unsigned long long frames = 0, bytes = 0, wire = 0, wire_after_first = 0, max_seq = 0;
    double t_first = 0, t_last = 0;
    for (;;) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break; /* idle timeout */
        }
        if (from.sll_pkttype == PACKET_OUTGOING || n < 14 + (ssize_t)sizeof(struct stream_hdr))
            continue;
        struct stream_hdr h;
        memcpy(&h, buf + 14, sizeof h);
        if (memcmp(h.magic, STREAM_MAGIC, 4) || (id && h.id != id))
            continue;
        double t = now();
        if (frames == 0) {
            t_first = t;
            setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        } else {
            wire_after_first += (unsigned long long)n;
        }
        t_last = t;
        frames++;
        bytes += (unsigned long long)n - 14;
        wire += (unsigned long long)n;
        if (h.seq > max_seq)
            max_seq = h.seq;
    }
    double secs = t_last - t_first;
    printf("frames=%llu bytes=%llu wire_bytes=%llu seconds=%.3f wire_MBps=%.2f max_seq=%llu\n", frames, bytes,
           wire, secs, secs > 0 ? wire_after_first / secs / 1e6 : 0.0, max_seq);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: vcprobe sniff|send|stream|sink ...\n");
        return 2;
    }
    if (!strcmp(argv[1], "sniff"))
        return do_sniff(argc - 2, argv + 2);
    if (!strcmp(argv[1], "send"))
        return do_send(argc - 2, argv + 2);
    if (!strcmp(argv[1], "stream"))
        return do_stream(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sink"))
        return do_sink(argc - 2, argv + 2);
    fprintf(stderr, "vcprobe: unknown mode %s\n", argv[1]);
    return 2;
}
