// SPDX-License-Identifier: BSD-3-Clause
/*
 * kmod_tool.c - drives /dev/pme directly, below pme_core, for the tests of pme.ko that
 * need frames pme_core would never make: forged sources, foreign EtherTypes, bad
 * versions and lengths, version 2 headers, bad ioctls and mappings.
 *
 *   kmod_tool abuse IFACE                      bad ioctls, binds and mappings
 *   kmod_tool send IFACE DSTMAC DSTEP KIND [JOB NODE] [N]
 *             send N frames (default 1) of one kind: good, forged, v2 (JOB and NODE
 *             name the destination's), ethertype, version, short, long
 *   kmod_tool recv IFACE EP SECS [JOB NODE]    print each frame that arrives in SECS
 *   kmod_tool counter IFACE NAME               a global counter's value (by ioctl)
 *   kmod_tool hold IFACE EP                    bind, print "bound ep ID rx SLOTS tx SLOTS",
 *                                              wait for stdin EOF, print poll and doorbell
 *   kmod_tool flood-close IFACE DSTMAC DSTEP   fill the send ring, ring once, close
 *                                              with the rings still mapped, use them
 *   kmod_tool zc-abuse IFACE                   bad zero-copy registrations and arms
 *   kmod_tool zc-xfer IFACE                    a zero-copy rendezvous between two
 *                                              endpoints of this process, checked
 *   kmod_tool zc-hold IFACE MB                 hold MB MiB registered and armed until
 *                                              killed (or stdin EOF)
 *   kmod_tool rx-hostile INJ_IFACE VICTIM_NS VICTIM_IFACE USER
 *             (root) malformed and hostile frames from an AF_PACKET socket on
 *             INJ_IFACE to an endpoint that USER binds in VICTIM_NS, checked
 *
 * Exits 0 when every check passed; prints "FAIL: ..." lines otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kmod_tool.h"

int fails;

int open_dev(void)
{
    int fd = open(DEV, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "kmod_tool: cannot open %s: %s\n", DEV, strerror(errno));
        exit(2);
    }
    return fd;
}

void bind_req(struct pme_kbind *b, const char *ifname, unsigned ep_id)
{
    memset(b, 0, sizeof(*b));
    b->abi_version = PME_ABI_VERSION;
    snprintf(b->ifname, sizeof(b->ifname), "%s", ifname);
    b->ep_id = (uint16_t)ep_id;
    b->node_id = PME_NODE_ANY;
    b->rx_bytes = 1u << 20;
    b->tx_bytes = 256u << 10;
}

void kep_open(struct kep *k, const char *ifname, unsigned ep_id, uint32_t job, uint32_t node)
{
    k->fd = open_dev();
    bind_req(&k->b, ifname, ep_id);
    k->b.job_id = job;
    k->b.node_id = node;
    if (ioctl(k->fd, PME_IOC_BIND, &k->b) < 0) {
        fprintf(stderr, "kmod_tool: bind %s/%u: %s\n", ifname, ep_id, strerror(errno));
        exit(2);
    }
    void *m = mmap(NULL, k->b.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "kmod_tool: mmap: %s\n", strerror(errno));
        exit(2);
    }
    k->mem = m;
    k->tx_cur = k->rx_cur = 0;
}

struct pme_kslot *kep_slot(struct kep *k, uint64_t off, uint32_t i)
{
    return (struct pme_kslot *)(k->mem + off + (size_t)i * k->b.slot_size);
}

int kep_queue(struct kep *k, const uint8_t *frame, uint32_t len)
{
    struct pme_kslot *s = kep_slot(k, k->b.tx_offset, k->tx_cur);
    if (__atomic_load_n(&s->status, __ATOMIC_ACQUIRE) != PME_KTX_FREE)
        return 0;
    memcpy((uint8_t *)s + PME_KSLOT_HDR_LEN, frame, len);
    s->len = len;
    __atomic_store_n(&s->status, PME_KTX_SEND, __ATOMIC_RELEASE);
    k->tx_cur = (k->tx_cur + 1) % k->b.tx_slots;
    return 1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
    unsigned v[6];
    if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)v[i];
    return 0;
}

void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v & 0xffff);
}

unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/*
 * A frame of the given kind for dst/dst_ep, with a source that lies (MAC 02:66:..,
 * src_ep 4242, src_node 0x66666666, incarnation 0x66666666) so that stamping shows.
 */
static uint32_t make_frame(uint8_t *f, const struct kep *k, const uint8_t dst[6],
                           unsigned dst_ep, const char *kind, uint32_t job, uint32_t node)
{
    static const uint8_t liar[6] = {0x02, 0x66, 0x66, 0x66, 0x66, 0x66};
    uint32_t hlen = strcmp(kind, "v2") ? PME_KWIRE_V1_HDR_LEN : PME_KWIRE_V2_HDR_LEN;
    uint32_t len = PME_ETH_HLEN + hlen + 16;
    memset(f, 0, 2048);
    memcpy(f, dst, 6);
    memcpy(f + 6, strcmp(kind, "good") ? liar : k->b.mac, 6);
    put16(f + 12, strcmp(kind, "ethertype") ? PME_ETHERTYPE_DEFAULT : 0x0800);
    put16(f + PME_WIRE_OFF_DST_EP, dst_ep);
    f[PME_WIRE_OFF_VERSION] = !strcmp(kind, "version") ? 77
                              : !strcmp(kind, "v2")    ? PME_KWIRE_V2
                                                       : PME_KWIRE_V1;
    f[PME_WIRE_OFF_TYPE] = PME_T_NOP;
    put16(f + PME_WIRE_OFF_SRC_EP, strcmp(kind, "good") ? 4242 : k->b.ep_id);
    if (!strcmp(kind, "v2")) {
        put32(f + PME_WIRE_OFF_DST_NODE, node);
        put32(f + PME_WIRE_OFF_JOB_ID, job);
        put32(f + PME_WIRE_OFF_SRC_NODE, 0x66666666u);
        put32(f + PME_WIRE_OFF_INCARNATION, 0x66666666u);
    }
    memcpy(f + len - 16, "kmod_tool frame", 16);
    if (!strcmp(kind, "short"))
        len = PME_ETH_HLEN + 8;
    if (!strcmp(kind, "long"))
        len = k->b.slot_size - PME_KSLOT_HDR_LEN; /* past the MTU */
    return len;
}

static int cmd_send(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: kmod_tool send IFACE DSTMAC DSTEP KIND [JOB NODE] [N]\n");
        return 2;
    }
    struct kep k;
    uint8_t dst[6], f[2048 + 65536];
    if (parse_mac(argv[2], dst)) {
        fprintf(stderr, "kmod_tool: bad MAC %s\n", argv[2]);
        return 2;
    }
    const char *kind = argv[4];
    int a = 5;
    uint32_t job = 0, node = 0;
    if (!strcmp(kind, "v2") && argc >= 7) {
        job = (uint32_t)strtoul(argv[5], NULL, 0);
        node = (uint32_t)strtoul(argv[6], NULL, 0);
        a = 7;
    }
    int n = argc > a ? atoi(argv[a]) : 1;
    kep_open(&k, argv[1], PME_KEP_ANY, 0, 0x0a0b0c0du);
    printf("sender ep %u incarnation 0x%08x node 0x0a0b0c0d\n", k.b.ep_id, k.b.incarnation);
    uint32_t len = make_frame(f, &k, dst, (unsigned)strtoul(argv[3], NULL, 0), kind, job, node);
    int queued = 0, taken = 0;
    while (queued < n) {
        /* As many as the ring holds, then one doorbell for them all. */
        int batch = 0;
        while (queued + batch < n && kep_queue(&k, f, len))
            batch++;
        int rc = ioctl(k.fd, PME_IOC_SEND);
        if (rc < 0) {
            printf("doorbell failed: %s\n", strerror(errno));
            return 1;
        }
        queued += batch;
        taken += rc;
    }
    printf("queued %d, the doorbell took %d\n", queued, taken);
    return taken == queued ? 0 : 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmd_recv(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kmod_tool recv IFACE EP SECS [JOB NODE]\n");
        return 2;
    }
    struct kep k;
    uint32_t job = argc > 5 ? (uint32_t)strtoul(argv[4], NULL, 0) : 0;
    uint32_t node = argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 0) : PME_NODE_ANY;
    kep_open(&k, argv[1], (unsigned)strtoul(argv[2], NULL, 0), job, node);
    printf("bound %s ep %u mac %02x:%02x:%02x:%02x:%02x:%02x\n", argv[1], k.b.ep_id,
           k.b.mac[0], k.b.mac[1], k.b.mac[2], k.b.mac[3], k.b.mac[4], k.b.mac[5]);
    fflush(stdout);
    double end = now_s() + atof(argv[3]);
    while (now_s() < end) {
        struct pollfd p = {.fd = k.fd, .events = POLLIN};
        int left = (int)((end - now_s()) * 1000) + 1;
        if (poll(&p, 1, left) <= 0)
            continue;
        struct pme_kslot *s;
        while (s = kep_slot(&k, k.b.rx_offset, k.rx_cur),
               __atomic_load_n(&s->status, __ATOMIC_ACQUIRE) == PME_KRX_USER) {
            const uint8_t *f = (const uint8_t *)s + PME_KSLOT_HDR_LEN;
            printf("frame len %u src %02x:%02x:%02x:%02x:%02x:%02x src_ep %u version %u", s->len,
                   f[6], f[7], f[8], f[9], f[10], f[11], get16(f + PME_WIRE_OFF_SRC_EP),
                   f[PME_WIRE_OFF_VERSION]);
            if (f[PME_WIRE_OFF_VERSION] == PME_KWIRE_V2)
                printf(" src_node 0x%08x incarnation 0x%08x job 0x%08x",
                       get32(f + PME_WIRE_OFF_SRC_NODE), get32(f + PME_WIRE_OFF_INCARNATION),
                       get32(f + PME_WIRE_OFF_JOB_ID));
            printf("\n");
            __atomic_store_n(&s->status, PME_KRX_KERNEL, __ATOMIC_RELEASE);
            k.rx_cur = (k.rx_cur + 1) % k.b.rx_slots;
        }
        fflush(stdout);
    }
    return 0;
}

static const char *const counter_names[] = PME_KCNT_NAMES;
_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == PME_KCNT_NR,
               "a name for every counter");

static int cmd_counter(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kmod_tool counter IFACE NAME\n");
        return 2;
    }
    int fd = open_dev();
    struct pme_kcounters c;
    if (ioctl(fd, PME_IOC_GLOBAL_COUNTERS, &c) < 0) {
        perror("kmod_tool: PME_IOC_GLOBAL_COUNTERS");
        return 2;
    }
    for (unsigned i = 0; i < PME_KCNT_NR; i++) {
        if (!strcmp(counter_names[i], argv[2])) {
            printf("%llu\n", (unsigned long long)c.v[i]);
            return 0;
        }
    }
    fprintf(stderr, "kmod_tool: no counter %s\n", argv[2]);
    return 2;
}

static int cmd_hold(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kmod_tool hold IFACE EP\n");
        return 2;
    }
    struct kep k;
    kep_open(&k, argv[1], (unsigned)strtoul(argv[2], NULL, 0), 0, PME_NODE_ANY);
    printf("bound ep %u rx %u tx %u\n", k.b.ep_id, k.b.rx_slots, k.b.tx_slots);
    fflush(stdout);
    char buf[64];
    while (read(0, buf, sizeof(buf)) > 0)
        ;
    struct pollfd p = {.fd = k.fd, .events = POLLIN | POLLOUT};
    int r = poll(&p, 1, 0);
    printf("poll %d revents%s%s%s%s\n", r, p.revents & POLLERR ? " ERR" : "",
           p.revents & POLLHUP ? " HUP" : "", p.revents & POLLIN ? " IN" : "",
           p.revents & POLLOUT ? " OUT" : "");
    int rc = ioctl(k.fd, PME_IOC_SEND);
    printf("doorbell %d %s\n", rc, rc < 0 ? strerror(errno) : "");
    return 0;
}

static int cmd_flood_close(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kmod_tool flood-close IFACE DSTMAC DSTEP\n");
        return 2;
    }
    struct kep k;
    uint8_t dst[6], f[2048];
    if (parse_mac(argv[2], dst))
        return 2;
    kep_open(&k, argv[1], PME_KEP_ANY, 0, PME_NODE_ANY);
    int queued = 0;
    uint32_t len = make_frame(f, &k, dst, (unsigned)strtoul(argv[3], NULL, 0), "good", 0, 0);
    while (kep_queue(&k, f, len))
        queued++;
    int rc = ioctl(k.fd, PME_IOC_SEND);
    CHECK(rc == queued, "a full send ring went out at one doorbell (%d of %d)", rc, queued);
    /* Queue more, then close with the frames never sent and the rings mapped. */
    int more = 0;
    while (more < 16 && kep_queue(&k, f, len))
        more++;
    close(k.fd);
    /* The mapping holds the file: the rings are still there, and still ours. */
    struct pme_kslot *s = kep_slot(&k, k.b.tx_offset, 0);
    CHECK(s->len == len, "the rings stay mapped after close (slot 0 holds %u bytes)", s->len);
    munmap(k.mem, k.b.mmap_len);
    return fails ? 1 : 0;
}

/* ---- abuse: every check in one process ---- */

static void abuse_ioctls(const char *ifname)
{
    int fd = open_dev();
    struct pme_kbind b;
    CHECK(ioctl(fd, _IO(PME_IOC_MAGIC, 99)) < 0 && errno == ENOTTY,
          "an unknown ioctl number fails with ENOTTY");
    CHECK(ioctl(fd, _IOWR(PME_IOC_MAGIC, 1, char[40]), NULL) < 0 && errno == ENOTTY,
          "bind with the wrong size fails with ENOTTY");
    CHECK(ioctl(fd, _IO(PME_IOC_MAGIC, 5)) < 0 && errno == ENOTTY,
          "a number kept for later fails with ENOTTY");
    CHECK(ioctl(fd, PME_IOC_SEND) < 0 && errno == ENOTCONN, "the doorbell before bind: ENOTCONN");
    CHECK(ioctl(fd, PME_IOC_BIND, (void *)8) < 0 && errno == EFAULT, "bind from a bad pointer: EFAULT");
    CHECK(ioctl(fd, PME_IOC_COUNTERS, (void *)8) < 0 && errno == EFAULT,
          "counters to a bad pointer: EFAULT");
    uint32_t abi = 0;
    CHECK(ioctl(fd, PME_IOC_VERSION, &abi) == 0 && abi == PME_ABI_VERSION,
          "PME_IOC_VERSION says %u", abi);
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == ENOTCONN,
          "mmap before bind: ENOTCONN");

    bind_req(&b, ifname, 1);
    b.abi_version = PME_ABI_VERSION + 1;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EPROTO, "another ABI version: EPROTO");
    bind_req(&b, ifname, 1);
    b.reserved[3] = 1;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EINVAL, "reserved fields set: EINVAL");
    bind_req(&b, ifname, 1);
    b.flags = 0x80;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EINVAL, "unknown flags: EINVAL");
    bind_req(&b, ifname, 1);
    b.abi_version = PME_ABI_VERSION_OLDEST - 1;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EPROTO, "an ABI older than any: EPROTO");
    bind_req(&b, ifname, 1);
    b.abi_version = 1;
    b.flags = PME_KBIND_LIVENESS;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EINVAL, "ABI 1 knows no flags: EINVAL");
    bind_req(&b, ifname, 1);
    b.flags = PME_KBIND_LIVENESS | PME_KBIND_CHECK_CRC | PME_KBIND_CHECK_MAC;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EINVAL, "both checks at once: EINVAL");
    bind_req(&b, ifname, 1);
    b.flags = PME_KBIND_LIVENESS | PME_KBIND_CHECK_CRC;
    b.liveness_key[0] = 1;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EINVAL, "a key without MAC checks: EINVAL");
    bind_req(&b, ifname, 1);
    memset(b.ifname, 'x', sizeof(b.ifname));
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EINVAL, "an unterminated name: EINVAL");
    bind_req(&b, "nosuch0", 1);
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == ENODEV, "no such interface: ENODEV");
    bind_req(&b, "lo", 1);
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EOPNOTSUPP, "loopback is not Ethernet: EOPNOTSUPP");
    bind_req(&b, ifname, 1);
    b.ethertype = 0x0800;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EPROTONOSUPPORT,
          "another EtherType: EPROTONOSUPPORT");
    bind_req(&b, ifname, 1);
    b.rx_bytes = 0xFFFFFFFFu;
    b.tx_bytes = 0xFFFFFFFFu;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) == 0, "huge rings are cut down, not refused");
    CHECK((uint64_t)(b.rx_slots + b.tx_slots) * b.slot_size <= (64u << 20),
          "to the module's limit (%u + %u slots of %u bytes)", b.rx_slots, b.tx_slots,
          b.slot_size);
    CHECK(ioctl(fd, PME_IOC_BIND, &b) < 0 && errno == EISCONN, "a second bind: EISCONN");

    int fd2 = open_dev();
    bind_req(&b, ifname, 1);
    CHECK(ioctl(fd2, PME_IOC_BIND, &b) < 0 && errno == EBUSY, "an id taken on the interface: EBUSY");
    bind_req(&b, ifname, PME_KEP_ANY);
    CHECK(ioctl(fd2, PME_IOC_BIND, &b) == 0 && b.ep_id != 1 && b.ep_id <= PME_EP_ID_MAX,
          "any free id: got %u", b.ep_id);
    size_t len = b.mmap_len;
    CHECK(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd2, 0) == MAP_FAILED &&
              errno == EINVAL,
          "a private mapping: EINVAL");
    CHECK(mmap(NULL, len + 4096, PROT_READ, MAP_SHARED, fd2, 0) == MAP_FAILED && errno == EINVAL,
          "a mapping longer than the rings: EINVAL");
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, (off_t)len) == MAP_FAILED &&
              errno == EINVAL,
          "a mapping past the end: EINVAL");
    CHECK(mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd2, (off_t)len - 4096) == MAP_FAILED &&
              errno == EINVAL,
          "a mapping that runs past the end: EINVAL");
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, (off_t)1 << 44) == MAP_FAILED &&
              errno == EINVAL,
          "a huge offset: EINVAL");
    void *tail = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, (off_t)len - 4096);
    CHECK(tail != MAP_FAILED, "the last page alone maps");
    if (tail != MAP_FAILED)
        munmap(tail, 4096);
    uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
    CHECK(m != MAP_FAILED, "the whole area maps");
    if (m != MAP_FAILED) {
        const struct pme_kring_ctl *ctl = (const void *)m;
        CHECK(ctl->abi_version == PME_ABI_VERSION && ctl->rx_offset == b.rx_offset &&
                  ctl->slot_size == b.slot_size && ctl->state == 0,
              "the control page matches bind's answer");
        /* Garbage in every send slot: lengths past the slot, statuses the driver never
         * uses. The doorbell takes only what says "send" and refuses bad lengths. */
        for (uint32_t i = 0; i < b.tx_slots; i++) {
            struct pme_kslot *s = (void *)(m + b.tx_offset + (size_t)i * b.slot_size);
            s->len = i % 2 ? 0xFFFFFFFFu : 3;
            s->status = i < 4 ? PME_KTX_SEND : 0x5a5a;
        }
        int rc = ioctl(fd2, PME_IOC_SEND);
        CHECK(rc == 4, "the doorbell took the 4 slots marked send, not the garbage (%d)", rc);
        struct pme_kcounters c;
        CHECK(ioctl(fd2, PME_IOC_COUNTERS, &c) == 0 && c.v[PME_KCNT_TX_BAD_LENGTH] == 4 &&
                  c.v[PME_KCNT_TX_FRAMES] == 0,
              "and refused all 4 for their length (tx_bad_length %llu)",
              (unsigned long long)c.v[PME_KCNT_TX_BAD_LENGTH]);
        /* Receive slots the process claims as its own: the driver counts a full ring. */
        for (uint32_t i = 0; i < b.rx_slots; i++)
            ((struct pme_kslot *)(void *)(m + b.rx_offset + (size_t)i * b.slot_size))->status = 7;
        munmap(m, len);
    }
    close(fd2);
    close(fd);
}

static int cmd_abuse(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kmod_tool abuse IFACE\n");
        return 2;
    }
    abuse_ioctls(argv[1]);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kmod_tool abuse|send|recv|counter|hold|flood-close|zc-abuse|"
                        "zc-xfer|zc-hold|rx-hostile ...\n");
        return 2;
    }
    const char *cmd = argv[1];
    argc--;
    argv++;
    if (!strcmp(cmd, "abuse"))
        return cmd_abuse(argc, argv);
    if (!strcmp(cmd, "send"))
        return cmd_send(argc, argv);
    if (!strcmp(cmd, "recv"))
        return cmd_recv(argc, argv);
    if (!strcmp(cmd, "counter"))
        return cmd_counter(argc, argv);
    if (!strcmp(cmd, "hold"))
        return cmd_hold(argc, argv);
    if (!strcmp(cmd, "flood-close"))
        return cmd_flood_close(argc, argv);
    if (!strcmp(cmd, "zc-abuse"))
        return cmd_zc_abuse(argc, argv);
    if (!strcmp(cmd, "zc-xfer"))
        return cmd_zc_xfer(argc, argv);
    if (!strcmp(cmd, "zc-hold"))
        return cmd_zc_hold(argc, argv);
    if (!strcmp(cmd, "rx-hostile"))
        return cmd_rx_hostile(argc, argv);
    fprintf(stderr, "kmod_tool: unknown command %s\n", cmd);
    return 2;
}
