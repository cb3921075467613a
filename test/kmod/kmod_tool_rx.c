// SPDX-License-Identifier: BSD-3-Clause
/*
 * kmod_tool_rx.c - kmod_tool rx-hostile: malformed and hostile frames injected from an
 * AF_PACKET socket into pme.ko's packet handler, aimed at an unprivileged endpoint with
 * an armed zero-copy receive.
 *
 * The process opens the raw socket on INJ_IFACE in the namespace it starts in (root
 * needs no more), enters the namespace VICTIM_NS, becomes USER (a member of group pme,
 * no capabilities) and binds the endpoint there. It then sends one frame at a time and
 * checks, for each: every counter of the module and of the endpoint moved by exactly
 * what the kernel's verdict says (dropped under its reason, or passed whole to the
 * ring for pme_core to judge), the ring holds that frame and nothing else, and no byte
 * of the armed buffer, nor of the pages around it, changed. At the end a well-formed
 * frame is placed in the buffer and a frame sent by the endpoint reaches the socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kmod_tool.h"

#define VJOB 0x77u
#define VNODE 0x0b0b0b0bu
#define VEP 12u
#define PEER_NODE 0x0a0a0a0au /* the sender the arm expects */
#define PEER_EP 77u
#define RNDV 0x1234u
#define ARM_OFF 100u /* the armed bytes start this far into the mapping, */
#define ARM_LEN 1000u /* and are this many; the rest of the 2 pages is watched too */
#define MAP_LEN 8192u
#define PATTERN 0xa5
#define HDRS (PME_ETH_HLEN + PME_KWIRE_V2_HDR_LEN)
#define SUB 16u /* RDATA sub-header: rndv_id, pad, offset */

struct victim {
    int raw;                 /* the injector's socket */
    int ifindex;             /* of INJ_IFACE */
    uint8_t inj_mac[6];
    int gfd;                 /* unbound: the module's counters */
    struct kep k;            /* the endpoint under attack */
    uint8_t *map;            /* MAP_LEN bytes; ARM_OFF.. armed */
    struct pme_kcounters g0, e0;
};

static void die(const char *what)
{
    fprintf(stderr, "kmod_tool rx-hostile: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void counters(struct victim *v, struct pme_kcounters *g, struct pme_kcounters *e)
{
    if (ioctl(v->gfd, PME_IOC_GLOBAL_COUNTERS, g) < 0 || ioctl(v->k.fd, PME_IOC_COUNTERS, e) < 0)
        die("counters");
}

/* The raw socket, opened before the privileges go. */
static void open_raw(struct victim *v, const char *ifname)
{
    struct ifreq ifr;
    v->raw = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(PME_ETHERTYPE_DEFAULT));
    if (v->raw < 0)
        die("AF_PACKET socket");
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(v->raw, SIOCGIFHWADDR, &ifr) < 0)
        die("SIOCGIFHWADDR");
    memcpy(v->inj_mac, ifr.ifr_hwaddr.sa_data, 6);
    v->ifindex = (int)if_nametoindex(ifname);
    struct sockaddr_ll sll = {.sll_family = AF_PACKET,
                              .sll_protocol = htons(PME_ETHERTYPE_DEFAULT),
                              .sll_ifindex = v->ifindex};
    if (bind(v->raw, (struct sockaddr *)&sll, sizeof(sll)) < 0)
        die("bind AF_PACKET");
}

/* Into the victim's namespace, then an unprivileged user for good. */
static void become(const char *ns, const char *user)
{
    char path[256];
    snprintf(path, sizeof(path), "/run/netns/%s", ns);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
        die(path);
    close(fd);
    struct passwd *pw = getpwnam(user);
    if (!pw)
        die(user);
    if (initgroups(user, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
        die("dropping privileges");
    if (setuid(0) == 0) {
        fprintf(stderr, "kmod_tool rx-hostile: still root\n");
        exit(2);
    }
}

/* A version 2 header to the endpoint from the arm's peer; len bytes follow it. */
static void v2_hdr(const struct victim *v, uint8_t *f, uint8_t type, unsigned len)
{
    memset(f, 0, HDRS);
    memcpy(f, v->k.b.mac, 6);
    memcpy(f + 6, v->inj_mac, 6);
    put16(f + 12, PME_ETHERTYPE_DEFAULT);
    put16(f + PME_WIRE_OFF_DST_EP, v->k.b.ep_id);
    f[PME_WIRE_OFF_VERSION] = PME_KWIRE_V2;
    f[PME_WIRE_OFF_TYPE] = type;
    put16(f + PME_WIRE_OFF_SRC_EP, PEER_EP);
    put16(f + PME_ETH_HLEN + 6, len);
    put32(f + PME_WIRE_OFF_DST_NODE, VNODE);
    put32(f + PME_WIRE_OFF_SRC_NODE, PEER_NODE);
    put32(f + PME_WIRE_OFF_JOB_ID, VJOB);
    put32(f + PME_WIRE_OFF_INCARNATION, 0x1c1c1c1c);
}

/* An RDATA of paylen bytes (the len field says wlen) for rendezvous rndv at pos. */
static unsigned rdata(const struct victim *v, uint8_t *f, uint32_t rndv, uint64_t pos,
                      unsigned paylen, unsigned wlen)
{
    v2_hdr(v, f, PME_T_RDATA, wlen);
    uint8_t *sub = f + HDRS;
    memset(sub, 0, SUB);
    put32(sub, rndv);
    put32(sub + 8, (uint32_t)(pos >> 32));
    put32(sub + 12, (uint32_t)pos);
    for (unsigned i = 0; i < paylen; i++)
        sub[SUB + i] = (uint8_t)(i * 7 + 1);
    return HDRS + SUB + paylen;
}

static void inject(struct victim *v, const uint8_t *f, unsigned len)
{
    struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_ifindex = v->ifindex, .sll_halen = 6};
    memcpy(to.sll_addr, f, 6);
    if (sendto(v->raw, f, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len)
        die("sendto");
}

/* Every counter the module and the endpoint have: what moved, by how much. */
static int deltas_match(struct victim *v, const uint64_t want[PME_KCNT_NR], int global_only,
                        const char *what)
{
    struct pme_kcounters g, e;
    int ok = 1;
    counters(v, &g, &e);
    for (unsigned i = 0; i < PME_KCNT_NR; i++) {
        uint64_t dg = g.v[i] - v->g0.v[i], de = e.v[i] - v->e0.v[i];
        uint64_t we = global_only ? 0 : want[i];
        if (i == PME_KCNT_ZC_PINNED_PAGES)
            continue; /* a level, not a count */
        if (dg != want[i] || de != we) {
            printf("  %s: counter %u moved by %llu (endpoint %llu), want %llu (%llu)\n", what, i,
                   (unsigned long long)dg, (unsigned long long)de, (unsigned long long)want[i],
                   (unsigned long long)we);
            ok = 0;
        }
    }
    return ok;
}

/* Wait (up to 5 s) until a counter of the module moves, and a little more. */
static void settle(struct victim *v)
{
    struct pme_kcounters g, e;
    for (int i = 0; i < 500; i++) {
        counters(v, &g, &e);
        if (memcmp(g.v, v->g0.v, sizeof(g.v)))
            break;
        usleep(10000);
    }
    usleep(20000);
}

static int buffer_intact(const struct victim *v)
{
    for (unsigned i = 0; i < MAP_LEN; i++)
        if (v->map[i] != PATTERN) {
            printf("  byte %u of the watched pages changed (0x%02x)\n", i, v->map[i]);
            return 0;
        }
    return 1;
}

/* The next receive slot: NULL when the driver has not filled it. */
static struct pme_kslot *ring_next(struct victim *v)
{
    struct pme_kslot *s = kep_slot(&v->k, v->k.b.rx_offset, v->k.rx_cur);
    return __atomic_load_n(&s->status, __ATOMIC_ACQUIRE) == PME_KRX_USER ? s : NULL;
}

static void ring_release(struct victim *v, struct pme_kslot *s)
{
    __atomic_store_n(&s->status, PME_KRX_KERNEL, __ATOMIC_RELEASE);
    v->k.rx_cur = (v->k.rx_cur + 1) % v->k.b.rx_slots;
}

enum verdict { DROP, DROP_GLOBAL, WHOLE, WHOLE_COPIED, WHOLE_PASSED };

/*
 * Inject one frame and check the kernel's verdict: DROP counted on the endpoint under
 * why, DROP_GLOBAL counted only by the module (no endpoint is known yet), WHOLE put
 * into the ring unchanged and unplaced, WHOLE_COPIED that and counted as an armed
 * receive's frame passed whole, WHOLE_PASSED that and counted as a PING the driver
 * left to the process.
 */
static void hostile(struct victim *v, const char *what, const uint8_t *f, unsigned len,
                    enum verdict vd, enum pme_kcounter why)
{
    uint64_t want[PME_KCNT_NR] = {0};
    counters(v, &v->g0, &v->e0);
    inject(v, f, len);
    settle(v);
    if (vd == DROP || vd == DROP_GLOBAL) {
        want[why] = 1;
    } else {
        want[PME_KCNT_RX_FRAMES] = 1;
        want[PME_KCNT_RX_BYTES] = len;
        if (vd == WHOLE_COPIED)
            want[PME_KCNT_ZC_RX_COPIED] = 1;
        if (vd == WHOLE_PASSED)
            want[PME_KCNT_PING_PASSED] = 1;
    }
    int counted = deltas_match(v, want, vd == DROP_GLOBAL, what);
    struct pme_kslot *s = ring_next(v);
    int ring_ok;
    if (vd == DROP || vd == DROP_GLOBAL) {
        ring_ok = !s;
    } else {
        ring_ok = s && s->len == len && !s->zc_flags &&
                  !memcmp((uint8_t *)s + PME_KSLOT_HDR_LEN, f, len);
        if (s)
            ring_release(v, s);
        ring_ok = ring_ok && !ring_next(v);
    }
    if (!ring_ok)
        printf("  %s: the ring holds %s\n", what, s ? "a frame it should not" : "nothing");
    /* What a failed case left in the ring would fail the cases after it too. */
    while ((s = ring_next(v)))
        ring_release(v, s);
    int intact = buffer_intact(v);
    const char *also = vd == WHOLE_COPIED   ? ", counted as copied"
                       : vd == WHOLE_PASSED ? ", counted as passed"
                                            : "";
    CHECK(counted && ring_ok && intact, "%s: %s%s%s", what,
          vd == DROP || vd == DROP_GLOBAL ? "dropped and counted" : "passed whole to the ring",
          also, intact ? ", the buffer intact" : "");
}

/* A frame from the endpoint to the injector, through the doorbell: whether it went. */
static int send_to_injector(struct victim *v, const char text[16])
{
    uint8_t out[HDRS + 16];
    v2_hdr(v, out, PME_T_NOP, 16);
    memcpy(out, v->inj_mac, 6);
    put16(out + PME_WIRE_OFF_DST_EP, PEER_EP);
    put32(out + PME_WIRE_OFF_DST_NODE, PEER_NODE);
    memcpy(out + HDRS, text, 16);
    return kep_queue(&v->k, out, sizeof(out)) ? ioctl(v->k.fd, PME_IOC_SEND) : -1;
}

static void malformed(struct victim *v)
{
    uint8_t f[2048];
    unsigned len;

    v2_hdr(v, f, PME_T_DATA, 16);
    hostile(v, "2 bytes after the Ethernet header", f, PME_ETH_HLEN + 2, DROP_GLOBAL,
            PME_KCNT_RX_BAD_FRAME);
    hostile(v, "a version 2 header cut at 40 bytes", f, PME_ETH_HLEN + 40, DROP_GLOBAL,
            PME_KCNT_RX_BAD_FRAME);
    f[PME_WIRE_OFF_VERSION] = PME_KWIRE_V1;
    hostile(v, "a version 1 header cut at 20 bytes", f, PME_ETH_HLEN + 20, DROP_GLOBAL,
            PME_KCNT_RX_BAD_FRAME);
    f[PME_WIRE_OFF_VERSION] = PME_KWIRE_V2;
    hostile(v, "a header alone whose len claims 16 bytes more", f, HDRS, DROP_GLOBAL,
            PME_KCNT_RX_BAD_FRAME);
    put16(f + PME_ETH_HLEN + 6, 1400);
    hostile(v, "len 1400 in a frame with 16 bytes after the header", f, HDRS + 16, DROP_GLOBAL,
            PME_KCNT_RX_BAD_FRAME);
    put16(f + PME_ETH_HLEN + 6, 16);
    f[PME_WIRE_OFF_VERSION] = 77;
    hostile(v, "wire version 77", f, HDRS + 16, DROP_GLOBAL, PME_KCNT_RX_BAD_FRAME);
    f[PME_WIRE_OFF_VERSION] = 0;
    hostile(v, "wire version 0", f, HDRS + 16, DROP_GLOBAL, PME_KCNT_RX_BAD_FRAME);
    f[PME_WIRE_OFF_VERSION] = PME_KWIRE_V2;
    put16(f + PME_WIRE_OFF_DST_EP, v->k.b.ep_id + 1);
    hostile(v, "another endpoint", f, HDRS + 16, DROP_GLOBAL, PME_KCNT_RX_NO_ENDPOINT);
    put16(f + PME_WIRE_OFF_DST_EP, v->k.b.ep_id);
    put32(f + PME_WIRE_OFF_JOB_ID, VJOB + 1);
    hostile(v, "another job", f, HDRS + 16, DROP, PME_KCNT_RX_WRONG_JOB);
    put32(f + PME_WIRE_OFF_JOB_ID, VJOB);
    put32(f + PME_WIRE_OFF_DST_NODE, VNODE + 1);
    hostile(v, "another node", f, HDRS + 16, DROP, PME_KCNT_RX_WRONG_NODE);
    put32(f + PME_WIRE_OFF_DST_NODE, VNODE);

    /*
     * The driver checks the MAC of the PINGs it answers, those of peers the endpoint
     * sent to (it answers them where it sends them); other frames, and PINGs of any
     * other source, are pme_core's.
     */
    v2_hdr(v, f, PME_T_PING, 16);
    put16(f + PME_ETH_HLEN + 18, PME_F_CHECK_MAC); /* with a tag that is not */
    memset(f + PME_ETH_HLEN + 56, 0x5c, 16);
    hostile(v, "a PING of a peer the endpoint never sent to (pme_core's to judge)", f,
            HDRS + 16, WHOLE_PASSED, 0);
    CHECK(send_to_injector(v, "rx-hostile hello") == 1, "the endpoint sends to that peer");
    settle(v);
    hostile(v, "then its PING with a bad MAC", f, HDRS + 16, DROP, PME_KCNT_PING_REFUSED);
    f[PME_WIRE_OFF_TYPE] = PME_T_DATA;
    hostile(v, "a DATA frame with a bad MAC (pme_core checks it)", f, HDRS + 16, WHOLE, 0);
    f[PME_WIRE_OFF_TYPE] = 0xee;
    hostile(v, "an unknown type (pme_core's to judge)", f, HDRS + 16, WHOLE, 0);

    /* Zero copy: RDATA that the arm must not place. */
    len = rdata(v, f, RNDV, ARM_LEN + 1, 100, SUB + 100);
    hostile(v, "RDATA past the end of the armed buffer", f, len, WHOLE_COPIED, 0);
    len = rdata(v, f, RNDV, ARM_LEN - 100, 200, SUB + 200);
    hostile(v, "RDATA straddling the end of the armed buffer", f, len, WHOLE_COPIED, 0);
    len = rdata(v, f, RNDV, ~0ull - 50, 100, SUB + 100);
    hostile(v, "RDATA whose offset + length wraps around", f, len, WHOLE_COPIED, 0);
    len = rdata(v, f, RNDV + 1, 0, 100, SUB + 100);
    hostile(v, "RDATA of an unknown rendezvous id", f, len, WHOLE, 0);
    len = rdata(v, f, RNDV, 0, 100, SUB + 100);
    put16(f + PME_WIRE_OFF_SRC_EP, PEER_EP + 1);
    hostile(v, "RDATA of the armed id from another sender", f, len, WHOLE, 0);
    len = rdata(v, f, RNDV, 0, 0, SUB);
    hostile(v, "RDATA without payload", f, len, WHOLE, 0);
    len = rdata(v, f, RNDV, 0, 100, SUB + 900);
    hostile(v, "RDATA whose len claims 800 bytes more than it has", f, len, DROP_GLOBAL,
            PME_KCNT_RX_BAD_FRAME);
}

/* The endpoint still works: a good RDATA is placed, a frame it sends goes out. */
static void still_works(struct victim *v)
{
    uint8_t f[2048];
    unsigned len = rdata(v, f, RNDV, 0, ARM_LEN, SUB + ARM_LEN);
    counters(v, &v->g0, &v->e0);
    inject(v, f, len);
    settle(v);
    struct pme_kslot *s = ring_next(v);
    int placed = s && (s->zc_flags & PME_KZC_PLACED) && (s->zc_flags & PME_KZC_FINISHED) &&
                 s->zc_addr == (uintptr_t)(v->map + ARM_OFF) && s->zc_len == ARM_LEN &&
                 s->len == HDRS + SUB;
    if (s)
        ring_release(v, s);
    int bytes = !memcmp(v->map + ARM_OFF, f + HDRS + SUB, ARM_LEN);
    for (unsigned i = 0; i < MAP_LEN; i++)
        if ((i < ARM_OFF || i >= ARM_OFF + ARM_LEN) && v->map[i] != PATTERN)
            bytes = 0;
    CHECK(placed && bytes, "then a good RDATA is placed whole into the armed bytes, and only there");

    /* A frame from the endpoint to the injector, through the doorbell. */
    int rc = send_to_injector(v, "rx-hostile reply");
    int got = 0;
    for (int tries = 0; tries < 50 && !got; tries++) {
        struct pollfd p = {.fd = v->raw, .events = POLLIN};
        uint8_t in[2048];
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = recv(v->raw, in, sizeof(in), 0);
        got = n >= (ssize_t)(HDRS + 16) && !memcmp(in + 6, v->k.b.mac, 6) &&
              !memcmp(in + HDRS, "rx-hostile reply", 16);
    }
    CHECK(rc == 1 && got, "and a frame it sends reaches the injector's socket (doorbell %d)", rc);
}

int cmd_rx_hostile(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: kmod_tool rx-hostile INJ_IFACE VICTIM_NS VICTIM_IFACE USER\n");
        return 2;
    }
    struct victim v;
    memset(&v, 0, sizeof(v));
    open_raw(&v, argv[1]);
    become(argv[2], argv[4]);
    v.gfd = open_dev();
    v.k.fd = open_dev();
    bind_req(&v.k.b, argv[3], VEP);
    v.k.b.job_id = VJOB;
    v.k.b.node_id = VNODE;
    v.k.b.flags = PME_KBIND_LIVENESS | PME_KBIND_CHECK_MAC;
    memcpy(v.k.b.liveness_key, "rx-hostile key!", 16);
    if (ioctl(v.k.fd, PME_IOC_BIND, &v.k.b) < 0)
        die("bind");
    v.k.mem = mmap(NULL, v.k.b.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, v.k.fd, 0);
    if (v.k.mem == MAP_FAILED)
        die("mmap");
    v.map = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v.map == MAP_FAILED)
        die("mmap");
    memset(v.map, PATTERN, MAP_LEN);
    struct pme_kzc_arm a = {.addr = (uintptr_t)(v.map + ARM_OFF), .len = ARM_LEN,
                            .rndv_id = RNDV, .src_node = PEER_NODE, .src_ep = PEER_EP};
    if (ioctl(v.k.fd, PME_IOC_ZC_ARM, &a) < 0)
        die("arm");
    printf("bound ep %u as uid %u, armed %u bytes\n", v.k.b.ep_id, (unsigned)getuid(), ARM_LEN);
    malformed(&v);
    still_works(&v);
    return fails ? 1 : 0;
}
