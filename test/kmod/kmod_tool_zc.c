// SPDX-License-Identifier: BSD-3-Clause
/*
 * kmod_tool_zc.c - kmod_tool's zero-copy commands: bad registrations and arms
 * (zc-abuse), a rendezvous between two endpoints of one process with a loss and a
 * retransmission and buffers unmapped in the middle (zc-xfer), and registrations held
 * until the process is killed (zc-hold).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmod_tool.h"

static int zreg(int fd, const void *addr, uint64_t len, uint32_t flags, uint32_t *id)
{
    struct pme_kzc_reg r = {.addr = (uintptr_t)addr, .len = len, .flags = flags};
    if (ioctl(fd, PME_IOC_ZC_REG, &r) < 0)
        return errno;
    if (id)
        *id = r.id;
    return 0;
}

static int zunreg(int fd, uint32_t id)
{
    return ioctl(fd, PME_IOC_ZC_UNREG, &id) < 0 ? errno : 0;
}

static int zarm(int fd, const void *addr, uint64_t len, uint32_t rndv, uint32_t node, uint16_t ep)
{
    struct pme_kzc_arm a = {
        .addr = (uintptr_t)addr, .len = len, .rndv_id = rndv, .src_node = node, .src_ep = ep,
    };
    return ioctl(fd, PME_IOC_ZC_ARM, &a) < 0 ? errno : 0;
}

static int zdisarm(int fd, uint32_t rndv)
{
    return ioctl(fd, PME_IOC_ZC_DISARM, &rndv) < 0 ? errno : 0;
}

static uint64_t epcnt(int fd, enum pme_kcounter c)
{
    struct pme_kcounters k;
    return ioctl(fd, PME_IOC_COUNTERS, &k) < 0 ? ~0ull : k.v[c];
}

/* The endpoint's pinned pages once the reaper caught up (it runs after an unmap). */
static uint64_t settled_pinned(int fd, uint64_t want)
{
    uint64_t v = 0;
    for (int i = 0; i < 200; i++) {
        v = epcnt(fd, PME_KCNT_ZC_PINNED_PAGES);
        if (v == want)
            break;
        usleep(10000);
    }
    return v;
}

static void *map_pages(size_t n, int prot)
{
    void *p = mmap(NULL, n * 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("kmod_tool: mmap");
        exit(2);
    }
    return p;
}

/* Module parameter, or dflt. */
static unsigned long module_param(const char *name, unsigned long dflt)
{
    char path[128];
    snprintf(path, sizeof(path), "/sys/module/pme/parameters/%s", name);
    FILE *f = fopen(path, "r");
    if (!f)
        return dflt;
    if (fscanf(f, "%lu", &dflt) != 1)
        dflt = 0;
    fclose(f);
    return dflt;
}

static void abuse_unbound(const char *ifname)
{
    char buf[64];
    int fd = open_dev();
    CHECK(zreg(fd, buf, sizeof(buf), PME_KZC_SEND, NULL) == ENOTCONN,
          "a registration before bind: ENOTCONN");
    struct pme_kbind b;
    bind_req(&b, ifname, PME_KEP_ANY);
    b.abi_version = 2;
    CHECK(ioctl(fd, PME_IOC_BIND, &b) == 0, "a process of ABI 2 still binds");
    CHECK(zreg(fd, buf, sizeof(buf), PME_KZC_SEND, NULL) == EPROTO,
          "but registers nothing: EPROTO");
    CHECK(zarm(fd, buf, sizeof(buf), 1, 1, 1) == EPROTO, "nor arms: EPROTO");
    close(fd);
}

static void abuse_regs(struct kep *k)
{
    int fd = k->fd;
    uint8_t *rw = map_pages(16, PROT_READ | PROT_WRITE);
    uint32_t id = 0, id2 = 0, id3 = 0;
    memset(rw, 1, 16 * 4096);

    CHECK(zreg(fd, rw, 0, PME_KZC_SEND, NULL) == EINVAL, "length 0: EINVAL");
    CHECK(zreg(fd, rw, 4096, 0, NULL) == EINVAL, "no access: EINVAL");
    CHECK(zreg(fd, rw, 4096, 0x8, NULL) == EINVAL, "unknown flags: EINVAL");
    struct pme_kzc_reg r = {.addr = (uintptr_t)rw, .len = 4096, .flags = PME_KZC_SEND};
    r.reserved[1] = 1;
    CHECK(ioctl(fd, PME_IOC_ZC_REG, &r) < 0 && errno == EINVAL, "reserved fields set: EINVAL");
    CHECK(zreg(fd, (void *)(uintptr_t)~0xfffull, 8192, PME_KZC_SEND, NULL) == EFAULT,
          "a range that wraps around: EFAULT");
    CHECK(zreg(fd, (void *)(uintptr_t)0xffff888000000000ull, 4096, PME_KZC_SEND, NULL) == EFAULT,
          "kernel memory: EFAULT");
    unsigned long max_mb = module_param("zc_max_region_mb", 1024);
    CHECK(zreg(fd, rw, ((uint64_t)max_mb + 1) << 20, PME_KZC_SEND, NULL) == E2BIG,
          "longer than zc_max_region_mb (%lu MiB): E2BIG", max_mb);
    uint8_t *gone = map_pages(4, PROT_READ | PROT_WRITE);
    munmap(gone, 4 * 4096);
    CHECK(zreg(fd, gone, 4 * 4096, PME_KZC_SEND, NULL) == EFAULT, "unmapped memory: EFAULT");
    uint8_t *none = map_pages(2, PROT_NONE);
    CHECK(zreg(fd, none, 8192, PME_KZC_SEND, NULL) == EFAULT, "PROT_NONE memory: EFAULT");
    uint8_t *ro = map_pages(2, PROT_READ);
    CHECK(zreg(fd, ro, 8192, PME_KZC_RECV, NULL) == EFAULT,
          "read-only memory to receive into: EFAULT");
    CHECK(zarm(fd, ro, 8192, 7, 1, 1) == EFAULT, "nor armed: EFAULT");
    CHECK(zreg(fd, ro, 8192, PME_KZC_SEND, &id) == 0, "but it may be sent from");
    CHECK(zunreg(fd, id) == 0, "and let go");
    uint64_t refused = epcnt(fd, PME_KCNT_ZC_REFUSED);
    CHECK(refused == 4, "the 4 of memory that cannot be pinned are counted (%llu)",
          (unsigned long long)refused);

    /* Unaligned: the pages it touches are pinned, nothing more. */
    uint64_t pinned0 = epcnt(fd, PME_KCNT_ZC_PINNED_PAGES);
    CHECK(zreg(fd, rw + 123, 10000, PME_KZC_SEND | PME_KZC_RECV, &id) == 0,
          "an unaligned buffer registers (id %u)", id);
    CHECK(epcnt(fd, PME_KCNT_ZC_PINNED_PAGES) == pinned0 + 3, "its 3 pages pinned");
    uint64_t hits = epcnt(fd, PME_KCNT_ZC_CACHE_HITS);
    CHECK(zreg(fd, rw + 4096, 100, PME_KZC_SEND, &id2) == 0 && id2 == id,
          "a range inside it is the same region (a cache hit)");
    CHECK(epcnt(fd, PME_KCNT_ZC_CACHE_HITS) == hits + 1, "counted as a hit");
    CHECK(zreg(fd, rw + 8192, 3 * 4096, PME_KZC_SEND, &id3) == 0 && id3 != id,
          "an overlapping one is another region (%u)", id3);
    CHECK(epcnt(fd, PME_KCNT_ZC_PINNED_PAGES) == pinned0 + 6, "pinning its pages too");
    CHECK(zunreg(fd, id) == 0 && zunreg(fd, id) == 0, "the region held twice is let go twice");
    CHECK(zunreg(fd, id) == EINVAL, "a third time: EINVAL");
    CHECK(zunreg(fd, 999999) == EINVAL, "an id never given: EINVAL");
    CHECK(epcnt(fd, PME_KCNT_ZC_PINNED_PAGES) == pinned0 + 6,
          "regions let go stay pinned in the cache");
    uint64_t inval = epcnt(fd, PME_KCNT_ZC_INVALIDATIONS);
    munmap(rw, 16 * 4096);
    CHECK(epcnt(fd, PME_KCNT_ZC_INVALIDATIONS) == inval + 2,
          "unmapping them invalidates both at once");
    CHECK(settled_pinned(fd, pinned0) == pinned0, "and unpins their pages");
    CHECK(zunreg(fd, id3) == 0, "one still held is let go after its unmap");
    munmap(none, 8192);
    munmap(ro, 8192);
}

static void abuse_limits(struct kep *k)
{
    int fd = k->fd;
    uint8_t *buf = map_pages(256, PROT_READ | PROT_WRITE);
    memset(buf, 2, 256 * 4096);
    struct rlimit old, small;
    getrlimit(RLIMIT_MEMLOCK, &old);
    small = old;
    small.rlim_cur = 256 << 10;
    setrlimit(RLIMIT_MEMLOCK, &small);
    uint32_t id = 0;
    CHECK(zreg(fd, buf, 1 << 20, PME_KZC_SEND, &id) == ENOMEM,
          "1 MiB over an RLIMIT_MEMLOCK of 256 KiB: ENOMEM");
    CHECK(zreg(fd, buf, 128 << 10, PME_KZC_SEND, &id) == 0, "128 KiB under it registers");
    setrlimit(RLIMIT_MEMLOCK, &old);
    CHECK(zunreg(fd, id) == 0, "and is let go");

    /* Arms */
    CHECK(zarm(fd, buf, 4096, 1, 2, 3) == 0, "an arm");
    CHECK(zarm(fd, buf + 4096, 4096, 1, 2, 3) == EEXIST, "the same rendezvous again: EEXIST");
    struct pme_kzc_arm a = {.addr = (uintptr_t)buf, .len = 4096, .rndv_id = 2, .pad = 1};
    CHECK(ioctl(fd, PME_IOC_ZC_ARM, &a) < 0 && errno == EINVAL, "padding set: EINVAL");
    CHECK(zarm(fd, buf, 0, 3, 2, 3) == EINVAL, "length 0: EINVAL");
    CHECK(zdisarm(fd, 1) == 0 && zdisarm(fd, 1) == ENOENT, "disarmed once, then ENOENT");
    int armed = 0, rc = 0;
    while (armed < 70 && !(rc = zarm(fd, buf + armed * 64, 64, 100 + armed, 2, 3)))
        armed++;
    CHECK(armed == 64 && rc == ENOSPC, "64 arms, then ENOSPC (%d, %s)", armed, strerror(rc));
    for (int i = 0; i < armed; i++)
        zdisarm(fd, 100 + i);

    /* Send slots that name no region of ours, or not RDATA. */
    uint8_t f[128] = {0};
    memcpy(f, k->b.mac, 6);
    memcpy(f + 6, k->b.mac, 6);
    put16(f + 12, PME_ETHERTYPE_DEFAULT);
    f[PME_WIRE_OFF_VERSION] = PME_KWIRE_V2;
    f[PME_WIRE_OFF_TYPE] = PME_T_RDATA;
    CHECK(zreg(fd, buf, 64 << 10, PME_KZC_SEND, &id) == 0, "a region to send from");
    uint64_t bad = epcnt(fd, PME_KCNT_TX_BAD_LENGTH);
    struct {
        uint32_t region;
        uint64_t addr;
        uint32_t len;
        uint8_t type;
    } slots[] = {
        {id + 1000, (uintptr_t)buf, 1000, PME_T_RDATA},     /* no such region */
        {id, (uintptr_t)buf + (2 << 20), 100, PME_T_RDATA}, /* past any region */
        {id, (uintptr_t)buf, 0, PME_T_RDATA},               /* no payload */
        {id, (uintptr_t)buf, 100, PME_T_DATA},              /* not rendezvous data */
    };
    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
        struct pme_kslot *s = kep_slot(k, k->b.tx_offset, k->tx_cur);
        f[PME_WIRE_OFF_TYPE] = slots[i].type;
        memcpy((uint8_t *)s + PME_KSLOT_HDR_LEN, f, sizeof(f));
        s->len = PME_ETH_HLEN + PME_KWIRE_V2_HDR_LEN + 16;
        s->zc_region = slots[i].region;
        s->zc_addr = slots[i].addr;
        s->zc_len = slots[i].len;
        __atomic_store_n(&s->status, PME_KTX_SEND_ZC, __ATOMIC_RELEASE);
        k->tx_cur = (k->tx_cur + 1) % k->b.tx_slots;
    }
    rc = ioctl(fd, PME_IOC_SEND);
    CHECK(rc == 4, "the doorbell takes the 4 bad zero-copy slots (%d)", rc);
    CHECK(epcnt(fd, PME_KCNT_TX_BAD_LENGTH) == bad + 4 && epcnt(fd, PME_KCNT_ZC_TX_FRAMES) == 0,
          "refuses all 4 and sends none (refused %llu, sent %llu)",
          (unsigned long long)(epcnt(fd, PME_KCNT_TX_BAD_LENGTH) - bad),
          (unsigned long long)epcnt(fd, PME_KCNT_ZC_TX_FRAMES));

    /* Another process cannot use this endpoint's regions with its own memory. */
    pid_t pid = fork();
    if (pid == 0)
        _exit(zreg(fd, buf, 4096, PME_KZC_SEND, NULL) == EPERM ? 0 : 1);
    int st = 1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a forked child registering: EPERM");
    munmap(buf, 256 * 4096);
}

int cmd_zc_abuse(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kmod_tool zc-abuse IFACE\n");
        return 2;
    }
    struct kep k;
    abuse_unbound(argv[1]);
    kep_open(&k, argv[1], PME_KEP_ANY, 0, PME_NODE_ANY);
    abuse_regs(&k);
    abuse_limits(&k);
    close(k.fd);
    return fails ? 1 : 0;
}

/* ---- a rendezvous between two endpoints of this process ---- */

#define XJOB 0x5a5a
#define XFRAG 1000u

struct xfer {
    struct kep a, b;            /* a sends, b receives */
    const uint8_t *src;
    uint8_t *dst;
    size_t len;
    uint32_t region;
    uint32_t rndv;
    unsigned placed, whole, finished;
    uint8_t hdr[PME_ETH_HLEN + PME_KWIRE_V2_HDR_LEN + 16];
};

static unsigned nframes(const struct xfer *x)
{
    return (unsigned)((x->len + XFRAG - 1) / XFRAG);
}

/* Queue RDATA frame i of the transfer, from the region (zc) or copied. */
static void queue_frame(struct xfer *x, unsigned i, int zc)
{
    uint64_t off = (uint64_t)i * XFRAG;
    uint32_t plen = x->len - off < XFRAG ? (uint32_t)(x->len - off) : XFRAG;
    uint8_t *h = x->hdr;
    memset(h, 0, sizeof(x->hdr));
    memcpy(h, x->b.b.mac, 6);
    memcpy(h + 6, x->a.b.mac, 6);
    put16(h + 12, PME_ETHERTYPE_DEFAULT);
    put16(h + PME_WIRE_OFF_DST_EP, x->b.b.ep_id);
    h[PME_WIRE_OFF_VERSION] = PME_KWIRE_V2;
    h[PME_WIRE_OFF_TYPE] = PME_T_RDATA;
    put16(h + PME_ETH_HLEN + 6, 16 + plen);
    put32(h + PME_WIRE_OFF_DST_NODE, 0xb);
    put32(h + PME_WIRE_OFF_JOB_ID, XJOB);
    uint8_t *sub = h + PME_ETH_HLEN + PME_KWIRE_V2_HDR_LEN;
    put32(sub, x->rndv);
    put32(sub + 8, (uint32_t)(off >> 32));
    put32(sub + 12, (uint32_t)off);
    struct pme_kslot *s = kep_slot(&x->a, x->a.b.tx_offset, x->a.tx_cur);
    uint8_t *d = (uint8_t *)s + PME_KSLOT_HDR_LEN;
    memcpy(d, h, sizeof(x->hdr));
    if (zc) {
        s->len = sizeof(x->hdr);
        s->zc_region = x->region;
        s->zc_addr = (uintptr_t)(x->src + off);
        s->zc_len = plen;
    } else {
        memcpy(d + sizeof(x->hdr), x->src + off, plen);
        s->len = sizeof(x->hdr) + plen;
    }
    __atomic_store_n(&s->status, zc ? PME_KTX_SEND_ZC : PME_KTX_SEND, __ATOMIC_RELEASE);
    x->a.tx_cur = (x->a.tx_cur + 1) % x->a.b.tx_slots;
}

/* Read b's ring as pme_core would: a placed frame must be where it belongs; a whole one
 * is copied into place. Returns frames read. */
static unsigned drain(struct xfer *x)
{
    unsigned n = 0;
    struct pme_kslot *s;
    while (s = kep_slot(&x->b, x->b.b.rx_offset, x->b.rx_cur),
           __atomic_load_n(&s->status, __ATOMIC_ACQUIRE) == PME_KRX_USER) {
        const uint8_t *f = (const uint8_t *)s + PME_KSLOT_HDR_LEN;
        const uint8_t *sub = f + PME_ETH_HLEN + PME_KWIRE_V2_HDR_LEN;
        uint64_t off = (uint64_t)get32(sub + 8) << 32 | get32(sub + 12);
        uint32_t plen = get16(f + PME_ETH_HLEN + 6) - 16;
        if (s->zc_flags & PME_KZC_PLACED) {
            if (s->zc_addr != (uintptr_t)(x->dst + off) || s->zc_len != plen) {
                printf("FAIL: frame at %llu placed at %#llx (want %p), %u bytes (want %u)\n",
                       (unsigned long long)off, (unsigned long long)s->zc_addr,
                       (void *)(x->dst + off), s->zc_len, plen);
                fails++;
            }
            x->placed++;
            if (s->zc_flags & PME_KZC_FINISHED)
                x->finished++;
        } else if (s->len == sizeof(x->hdr) + plen && off + plen <= x->len) {
            memcpy(x->dst + off, f + sizeof(x->hdr), plen);
            x->whole++;
        }
        __atomic_store_n(&s->status, PME_KRX_KERNEL, __ATOMIC_RELEASE);
        x->b.rx_cur = (x->b.rx_cur + 1) % x->b.b.rx_slots;
        n++;
    }
    return n;
}

static void kick(struct xfer *x)
{
    if (ioctl(x->a.fd, PME_IOC_SEND) < 0) {
        printf("FAIL: doorbell: %s\n", strerror(errno));
        fails++;
    }
}

/* Send frames [from, to) in order, in batches both rings hold (frames to this host's
 * own address are delivered at once, by the doorbell). */
static void send_range(struct xfer *x, unsigned from, unsigned to, int zc)
{
    unsigned batch = x->a.b.tx_slots < x->b.b.rx_slots ? x->a.b.tx_slots : x->b.b.rx_slots;
    for (unsigned i = from; i < to; i++) {
        queue_frame(x, i, zc);
        if ((i - from) % batch == batch - 1 || i + 1 == to) {
            kick(x);
            drain(x);
        }
    }
}

static void xfer_start(struct xfer *x, const uint8_t *src, uint8_t *dst, size_t len, uint32_t rndv)
{
    x->src = src;
    x->dst = dst;
    x->len = len;
    x->rndv = rndv;
    x->placed = x->whole = x->finished = 0;
    int rc = zreg(x->a.fd, src, len, PME_KZC_SEND, &x->region);
    CHECK(!rc, "the sender registers %zu bytes at %p (%s)", len, (const void *)src, strerror(rc));
    rc = zarm(x->b.fd, dst, len, rndv, 0xa, x->a.b.ep_id);
    CHECK(!rc, "the receiver arms %zu bytes at %p (%s)", len, (void *)dst, strerror(rc));
}

int cmd_zc_xfer(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kmod_tool zc-xfer IFACE\n");
        return 2;
    }
    struct xfer x;
    memset(&x, 0, sizeof(x));
    kep_open(&x.a, argv[1], PME_KEP_ANY, XJOB, 0xa);
    kep_open(&x.b, argv[1], PME_KEP_ANY, XJOB, 0xb);
    size_t len = (1 << 20) + 777;
    uint8_t *sbase = malloc(len + 128), *dbase = malloc(len + 128);
    uint8_t *src = sbase + 5, *dst = dbase + 77; /* neither page-aligned */
    srand(7);
    for (size_t i = 0; i < len; i++)
        src[i] = (uint8_t)rand();

    /* 1: frames 0-9 in order; 11 before 10 (a loss); then the rest. */
    memset(dst, 0, len);
    xfer_start(&x, src, dst, len, 42);
    unsigned n = nframes(&x);
    send_range(&x, 0, 10, 1);
    send_range(&x, 11, 12, 1);
    send_range(&x, 10, 11, 1);
    send_range(&x, 12, n, 1);
    while (drain(&x))
        ;
    CHECK(x.placed + x.whole == n, "all %u frames reached the ring (%u placed, %u whole)", n,
          x.placed, x.whole);
    CHECK(x.whole == 2, "the frame after the gap and the one resent went whole");
    CHECK(x.finished == 1, "the last frame ended the arm");
    CHECK(!memcmp(src, dst, len), "the data arrived intact");
    CHECK(zdisarm(x.b.fd, 42) == ENOENT, "the arm is gone already: ENOENT");
    CHECK(epcnt(x.a.fd, PME_KCNT_ZC_TX_FRAMES) == n, "the sender sent %u frames from its pages", n);
    CHECK(epcnt(x.b.fd, PME_KCNT_ZC_RX_FRAMES) == n - 2 &&
              epcnt(x.b.fd, PME_KCNT_ZC_RX_COPIED) == 2,
          "the receiver counted %u placed and 2 copied", n - 2);
    CHECK(zunreg(x.a.fd, x.region) == 0, "the sender lets go of its region");

    /* 2: the same buffers again: both found pinned; copied and zero-copy slots mixed. */
    uint64_t hits = epcnt(x.a.fd, PME_KCNT_ZC_CACHE_HITS) + epcnt(x.b.fd, PME_KCNT_ZC_CACHE_HITS);
    memset(dst, 0, len);
    xfer_start(&x, src, dst, len, 43);
    CHECK(epcnt(x.a.fd, PME_KCNT_ZC_CACHE_HITS) + epcnt(x.b.fd, PME_KCNT_ZC_CACHE_HITS) ==
              hits + 2,
          "both registrations hit the cache");
    send_range(&x, 0, n / 2, 0);
    send_range(&x, n / 2, n, 1);
    while (drain(&x))
        ;
    CHECK(x.placed == n && x.finished == 1 && !memcmp(src, dst, len),
          "again intact, all %u frames placed (%u)", n, x.placed);
    zunreg(x.a.fd, x.region);

    /* 3: both buffers unmapped in the middle of a transfer. */
    size_t mlen = 256 << 10;
    uint8_t *msrc = map_pages(mlen / 4096, PROT_READ | PROT_WRITE);
    uint8_t *mdst = map_pages(mlen / 4096, PROT_READ | PROT_WRITE);
    memcpy(msrc, src, mlen);
    xfer_start(&x, msrc, mdst, mlen, 44);
    n = nframes(&x);
    send_range(&x, 0, n / 2, 1);
    uint64_t copied = epcnt(x.b.fd, PME_KCNT_ZC_RX_COPIED);
    munmap(mdst, mlen);
    /* The payload of what follows must not land in pages the receiver gave back. */
    uint8_t *trap = map_pages(mlen / 4096, PROT_READ | PROT_WRITE);
    x.dst = trap;
    send_range(&x, n / 2, n - 4, 1);
    while (drain(&x))
        ;
    CHECK(epcnt(x.b.fd, PME_KCNT_ZC_RX_COPIED) == copied + (n - 4 - n / 2),
          "after the receiver's unmap its frames come whole (%llu)",
          (unsigned long long)(epcnt(x.b.fd, PME_KCNT_ZC_RX_COPIED) - copied));
    uint64_t tx_copied = epcnt(x.a.fd, PME_KCNT_ZC_TX_COPIED);
    for (unsigned i = n - 4; i < n; i++)
        queue_frame(&x, i, 1);
    munmap(msrc, mlen);
    kick(&x);
    while (drain(&x))
        ;
    CHECK(epcnt(x.a.fd, PME_KCNT_ZC_TX_COPIED) == tx_copied + 4,
          "slots of a send buffer unmapped before the doorbell are not sent from it");
    CHECK(zdisarm(x.b.fd, 44) == 0, "the arm of the unmapped buffer is still there to end");
    CHECK(zunreg(x.a.fd, x.region) == 0, "and the send region to let go");
    /* The first buffer may stay cached, unless the kernel moved or merged its pages in
     * the meantime (compaction also tells the notifier): what goes is never pinned. */
    uint64_t want = ((uintptr_t)src + len + 4095) / 4096 - (uintptr_t)src / 4096;
    uint64_t got = settled_pinned(x.a.fd, want);
    CHECK(got == want || got == 0,
          "the sender keeps no page of the unmapped buffer pinned (%llu, the first buffer %llu)",
          (unsigned long long)got, (unsigned long long)want);
    munmap(trap, mlen);
    close(x.a.fd);
    close(x.b.fd);
    free(sbase);
    free(dbase);
    return fails ? 1 : 0;
}

/* Hold MB MiB registered to send from and MB MiB armed, until killed or stdin EOF. */
int cmd_zc_hold(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kmod_tool zc-hold IFACE MB\n");
        return 2;
    }
    struct kep k;
    size_t len = (size_t)atoi(argv[2]) << 20;
    kep_open(&k, argv[1], PME_KEP_ANY, 0, PME_NODE_ANY);
    uint8_t *s = map_pages(len / 4096, PROT_READ | PROT_WRITE);
    uint8_t *d = map_pages(len / 4096, PROT_READ | PROT_WRITE);
    memset(s, 3, len);
    uint32_t id = 0;
    int rc = zreg(k.fd, s, len, PME_KZC_SEND, &id);
    int rc2 = zarm(k.fd, d, len, 1, 2, 3);
    printf("held %s %s pinned %llu\n", rc ? strerror(rc) : "send", rc2 ? strerror(rc2) : "recv",
           (unsigned long long)epcnt(k.fd, PME_KCNT_ZC_PINNED_PAGES));
    fflush(stdout);
    char buf[64];
    while (read(0, buf, sizeof(buf)) > 0)
        ;
    return 0;
}
