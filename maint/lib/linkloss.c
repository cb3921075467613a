// SPDX-License-Identifier: BSD-3-Clause
/* linkloss - drop a given share of the frames arriving on an interface, before anything
 * on the host sees them: test infrastructure for maint/vcluster --loss, maint/wire-bench
 * and the loss tests.
 *
 *   linkloss set IFACE THRESHOLD   drop a frame when a random number below 100000 is
 *                                  below THRESHOLD (5000 drops 5%, 100 drops 0.1%)
 *   linkloss show IFACE            "threshold T seen N dropped M" (nothing attached:
 *                                  an error)
 *   linkloss clear IFACE           detach (nothing attached: not an error)
 *
 * Why not nftables or tc: the netdev ingress hook and tc ingress run after the kernel
 * has handed a copy of the frame to every packet socket bound to all protocols (libpcap's,
 * PME's ring and pcap devices), so such a rule drops the frame for TCP but not for those
 * sockets. A generic-mode XDP program runs before them, as a loss on the wire would.
 *
 * The program is a handful of eBPF instructions loaded with bpf(2) and attached over
 * rtnetlink, so that neither clang nor libbpf is needed. It counts what it sees and what
 * it drops in an array map, found again through the interface's attached program. Needs CAP_NET_ADMIN and CAP_BPF (root). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROG_NAME "pme_linkloss"
/* The map: two counters, and the threshold for show to report. */
enum { CTR_SEEN, CTR_DROPPED, SLOT_THRESHOLD, NSLOTS };

static const char *prog = "linkloss";

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
    return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static void map_write(int map_fd, uint32_t key, uint64_t v)
{
    union bpf_attr a = {0};
    a.map_fd = (uint32_t)map_fd;
    a.key = (uint64_t)(uintptr_t)&key;
    a.value = (uint64_t)(uintptr_t)&v;
    if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0)
        die("cannot write the map: %s", strerror(errno));
}

static int make_map(unsigned threshold)
{
    union bpf_attr a = {0};
    a.map_type = BPF_MAP_TYPE_ARRAY;
    a.key_size = sizeof(uint32_t);
    a.value_size = sizeof(uint64_t);
    a.max_entries = NSLOTS;
    snprintf(a.map_name, sizeof(a.map_name), "linkloss_ctr");
    int fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
    if (fd < 0)
        die("cannot create the counter map: %s", strerror(errno));
    map_write(fd, SLOT_THRESHOLD, threshold);
    return fd;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

/* Emits: counters[idx] += 1, through bpf_map_lookup_elem (clobbers r0-r5). Six slots. */
static int emit_count(struct bpf_insn *p, int map_fd, int idx)
{
    int n = 0;
    p[n++] = INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, idx);
    p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd);
    p[n++] = INSN(0, 0, 0, 0, 0);
    p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
    p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
    p[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
    p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
    p[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD);
    return n;
}

static int load_program(int map_fd, unsigned threshold)
{
    struct bpf_insn insns[64];
    int n = emit_count(insns, map_fd, CTR_SEEN);
    insns[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_prandom_u32);
    insns[n++] = INSN(BPF_ALU | BPF_MOD | BPF_K, BPF_REG_0, 0, 0, 100000);
    /* Kept: over the counting of the drop and its return (this jump's target). */
    int keep_jump = n++;
    int drop = n;
    n += emit_count(insns + n, map_fd, CTR_DROPPED);
    insns[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_DROP);
    insns[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    int pass = n;
    insns[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS);
    insns[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    insns[keep_jump] = INSN(BPF_JMP | BPF_JGE | BPF_K, BPF_REG_0, 0, (short)(pass - drop), (int)threshold);

    char log[8192] = "";
    union bpf_attr a = {0};
    a.prog_type = BPF_PROG_TYPE_XDP;
    a.insns = (uint64_t)(uintptr_t)insns;
    a.insn_cnt = (uint32_t)n;
    a.license = (uint64_t)(uintptr_t) "GPL";
    a.log_buf = (uint64_t)(uintptr_t)log;
    a.log_size = sizeof(log);
    a.log_level = 1;
    snprintf(a.prog_name, sizeof(a.prog_name), PROG_NAME);
    int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
    if (fd < 0) {
        fprintf(stderr, "%s: the kernel refused the program: %s\n%s", prog, strerror(errno), log);
        exit(1);
    }
    return fd;
}

/* One rtnetlink request and its answer (an ack or the link's attributes) in buf. */
static int rtnl(void *req, size_t len, char *buf, size_t buflen)
{
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0)
        die("cannot open rtnetlink: %s", strerror(errno));
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(s, req, len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
        die("rtnetlink: %s", strerror(errno));
    ssize_t n = recv(s, buf, buflen, 0);
    close(s);
    if (n < (ssize_t)sizeof(struct nlmsghdr))
        die("rtnetlink: %s", n < 0 ? strerror(errno) : "short answer");
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    if (h->nlmsg_type == NLMSG_ERROR)
        return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
    return 0;
}

static struct rtattr *put_attr(struct nlmsghdr *h, unsigned short type, const void *data,
                               size_t len)
{
    struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
    a->rta_type = type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    if (len)
        memcpy(RTA_DATA(a), data, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
    return a;
}

struct link_req {
    struct nlmsghdr h;
    struct ifinfomsg i;
    char attrs[256];
};

/* Attaches prog_fd (-1: detaches) to ifindex in generic (skb) mode. */
static int attach(int ifindex, int prog_fd)
{
    struct link_req r = {0};
    r.h.nlmsg_len = NLMSG_LENGTH(sizeof(r.i));
    r.h.nlmsg_type = RTM_SETLINK;
    r.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    r.i.ifi_family = AF_UNSPEC;
    r.i.ifi_index = ifindex;
    struct rtattr *xdp = put_attr(&r.h, IFLA_XDP | NLA_F_NESTED, NULL, 0);
    uint32_t flags = XDP_FLAGS_SKB_MODE;
    put_attr(&r.h, IFLA_XDP_FD, &prog_fd, sizeof(prog_fd));
    put_attr(&r.h, IFLA_XDP_FLAGS, &flags, sizeof(flags));
    xdp->rta_len = (unsigned short)((char *)&r + r.h.nlmsg_len - (char *)xdp);
    char buf[4096];
    return rtnl(&r, r.h.nlmsg_len, buf, sizeof(buf));
}

/* The id of the generic-mode XDP program on ifindex, 0 if none. */
static uint32_t attached_id(int ifindex)
{
    struct link_req r = {0};
    r.h.nlmsg_len = NLMSG_LENGTH(sizeof(r.i));
    r.h.nlmsg_type = RTM_GETLINK;
    r.h.nlmsg_flags = NLM_F_REQUEST;
    r.i.ifi_family = AF_UNSPEC;
    r.i.ifi_index = ifindex;
    static char buf[65536];
    int err = rtnl(&r, r.h.nlmsg_len, buf, sizeof(buf));
    if (err)
        die("cannot read the interface: %s", strerror(-err));
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(struct ifinfomsg)));
    for (struct rtattr *a = IFLA_RTA(NLMSG_DATA(h)); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        if ((a->rta_type & NLA_TYPE_MASK) != IFLA_XDP)
            continue;
        int xlen = (int)RTA_PAYLOAD(a);
        for (struct rtattr *x = RTA_DATA(a); RTA_OK(x, xlen); x = RTA_NEXT(x, xlen))
            if (x->rta_type == IFLA_XDP_SKB_PROG_ID)
                return *(uint32_t *)RTA_DATA(x);
    }
    return 0;
}

/* The map of our program with that id; exits if the program is not ours. */
static int map_of(uint32_t id, const char *ifname)
{
    union bpf_attr a = {0};
    a.prog_id = id;
    int pfd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
    if (pfd < 0)
        die("cannot open the program on the interface: %s", strerror(errno));
    uint32_t map_ids[4] = {0};
    struct bpf_prog_info info = {0};
    info.nr_map_ids = 4;
    info.map_ids = (uint64_t)(uintptr_t)map_ids;
    memset(&a, 0, sizeof(a));
    a.info.bpf_fd = (uint32_t)pfd;
    a.info.info_len = sizeof(info);
    a.info.info = (uint64_t)(uintptr_t)&info;
    if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
        die("cannot inspect the program: %s", strerror(errno));
    close(pfd);
    if (strcmp(info.name, PROG_NAME) || info.nr_map_ids != 1)
        die("%s has another XDP program than linkloss's", ifname);
    memset(&a, 0, sizeof(a));
    a.map_id = map_ids[0];
    int mfd = (int)sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
    if (mfd < 0)
        die("cannot open the map: %s", strerror(errno));
    return mfd;
}

static uint64_t map_read(int map_fd, uint32_t key)
{
    uint64_t v = 0;
    union bpf_attr a = {0};
    a.map_fd = (uint32_t)map_fd;
    a.key = (uint64_t)(uintptr_t)&key;
    a.value = (uint64_t)(uintptr_t)&v;
    if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0)
        die("cannot read the map: %s", strerror(errno));
    return v;
}

static unsigned parse_threshold(const char *s)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 100000)
        die("bad threshold '%s': expected 0 to 100000 (thousandths of a percent)", s);
    return (unsigned)v;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "set") == 0) != (argc == 4) ||
        (strcmp(argv[1], "set") && argc != 3)) {
        fprintf(stderr, "usage: %s set IFACE THRESHOLD | show IFACE | clear IFACE\n", prog);
        return 2;
    }
    const char *cmd = argv[1], *ifname = argv[2];
    int ifindex = (int)if_nametoindex(ifname);
    if (!ifindex)
        die("no interface %s in this network namespace", ifname);
    if (!strcmp(cmd, "set")) {
        unsigned threshold = parse_threshold(argv[3]);
        int map_fd = make_map(threshold);
        int prog_fd = load_program(map_fd, threshold);
        int err = attach(ifindex, prog_fd);
        if (err)
            die("cannot attach to the interface: %s", strerror(-err));
        return 0;
    }
    if (!strcmp(cmd, "clear")) {
        if (attached_id(ifindex)) {
            int err = attach(ifindex, -1);
            if (err)
                die("cannot detach: %s", strerror(-err));
        }
        return 0;
    }
    if (!strcmp(cmd, "show")) {
        uint32_t id = attached_id(ifindex);
        if (!id)
            die("nothing attached to %s", ifname);
        int map_fd = map_of(id, ifname);
        printf("threshold %llu seen %llu dropped %llu\n",
               (unsigned long long)map_read(map_fd, SLOT_THRESHOLD),
               (unsigned long long)map_read(map_fd, CTR_SEEN),
               (unsigned long long)map_read(map_fd, CTR_DROPPED));
        return 0;
    }
    die("unknown command %s (set, show, clear)", cmd);
}
