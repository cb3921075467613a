// SPDX-License-Identifier: BSD-3-Clause
/* dev_eth.c - the parts the libpcap and packet-ring devices share (see dev_eth.h). */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dev_eth.h"
#include "pme_wire.h"

/* One interface ioctl (SIOCGIF*) on ifname, answered in this process's network namespace
 * (not /sys/class/net's, which is the namespace that mounted it); 0 or an errno. */
static int if_query(const char *ifname, unsigned long request, struct ifreq *ifr)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return errno;
    memset(ifr, 0, sizeof(*ifr));
    snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
    int rc = ioctl(s, request, ifr) < 0 ? errno : 0;
    close(s);
    return rc;
}

/* IFF_RUNNING is the operational state: carrier. */
bool pme_eth_link_up(const char *ifname, char *state, size_t len)
{
    struct ifreq ifr;
    int e = if_query(ifname, SIOCGIFFLAGS, &ifr);
    const char *why = e == ENODEV                    ? "gone"
                      : e                            ? NULL
                      : !(ifr.ifr_flags & IFF_UP)      ? "down"
                      : !(ifr.ifr_flags & IFF_RUNNING) ? "up without carrier"
                                                     : NULL;
    snprintf(state, len, "%s", why ? why : "up");
    return !why;
}

int pme_eth_probe(const char *ifname, uint8_t mac[6], unsigned *mtu, char *err,
                  size_t errlen)
{
    if (!ifname || !*ifname) {
        snprintf(err, errlen,
                 "no interface given: set PME_IFACE to the Ethernet interface PME should use "
                 "(pme_info lists them)");
        return PME_ERR_NODEV;
    }
    if (strlen(ifname) >= IF_NAMESIZE || !if_nametoindex(ifname)) {
        snprintf(err, errlen,
                 "interface \"%s\" does not exist here: check PME_IFACE (pme_info lists "
                 "the interfaces PME can use)",
                 ifname);
        return PME_ERR_NODEV;
    }
    struct ifreq ifr;
    int e = if_query(ifname, SIOCGIFFLAGS, &ifr);
    if (e) {
        snprintf(err, errlen, "cannot query interface %s: %s", ifname, strerror(e));
        return PME_ERR_DEVICE;
    }
    if (!(ifr.ifr_flags & IFF_UP))
        return pme_eth_down_error(ifname, err, errlen);
    if (if_query(ifname, SIOCGIFHWADDR, &ifr) || ifr.ifr_hwaddr.sa_family != 1 /* ARPHRD_ETHER */) {
        snprintf(err, errlen, "interface %s is not an Ethernet interface", ifname);
        return PME_ERR_NODEV;
    }
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    e = if_query(ifname, SIOCGIFMTU, &ifr);
    if (e) {
        snprintf(err, errlen, "cannot read the MTU of %s: %s", ifname, strerror(e));
        return PME_ERR_DEVICE;
    }
    *mtu = (unsigned)ifr.ifr_mtu;
    return PME_OK;
}

void *pme_eth_dev_new(size_t size, const struct pme_dev_ops *ops, const char *ifname,
                      int *rc, char *err, size_t errlen)
{
    uint8_t mac[6];
    unsigned mtu = 0;
    *rc = pme_eth_probe(ifname, mac, &mtu, err, errlen);
    if (*rc)
        return NULL;
    struct pme_dev *d = calloc(1, size);
    if (!d) {
        snprintf(err, errlen, "out of memory opening %s", ifname);
        *rc = PME_ERR_NOMEM;
        return NULL;
    }
    d->ops = ops;
    memcpy(d->mac, mac, 6);
    d->mtu = mtu;
    return d;
}

void pme_eth_filter_expr(char *out, size_t outlen, uint16_t ethertype, const uint8_t mac[6],
                         uint16_t ep_id)
{
    snprintf(out, outlen,
             "ether proto 0x%04x and ether dst %02x:%02x:%02x:%02x:%02x:%02x and "
             "ether[%d:2] = %u",
             ethertype, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], PME_WIRE_OFF_DST_EP,
             ep_id);
}

#ifndef PME_BINDIR
#define PME_BINDIR "/usr/local/bin"
#endif

/* The broker answers at once; a broker that does not is broken, not slow. */
#define BROKER_TIMEOUT_MS 10000

static int find_broker(char *path, size_t len, char *why, size_t whylen)
{
    const char *v = getenv("PME_RAWSOCK");
    if (v && !strcmp(v, "0")) {
        snprintf(why, whylen, "not used (PME_RAWSOCK=0)");
        return -1;
    }
    if (v && *v) {
        snprintf(path, len, "%s", v);
        return 0;
    }
    snprintf(path, len, "%s/pme_rawsock", PME_BINDIR);
    if (access(path, F_OK) == 0)
        return 0;
    for (const char *dir = getenv("PATH"); dir && *dir; dir += strcspn(dir, ":")) {
        dir += *dir == ':';
        int n = (int)strcspn(dir, ":");
        if (n > 0 && snprintf(path, len, "%.*s/pme_rawsock", n, dir) < (int)len &&
            access(path, F_OK) == 0)
            return 0;
    }
    snprintf(why, whylen, "not installed (not in %s nor on PATH)", PME_BINDIR);
    return -1;
}

/* The broker's answer on sock: a descriptor, or -1 with its reason in why (empty when
 * it sent none). */
static int receive_socket(int sock, char *why, size_t whylen)
{
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    int n;
    while ((n = poll(&pfd, 1, BROKER_TIMEOUT_MS)) < 0 && errno == EINTR)
        ;
    if (n <= 0) {
        snprintf(why, whylen, "no answer within %d s", BROKER_TIMEOUT_MS / 1000);
        return -1;
    }
    char text[400];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {text, sizeof(text) - 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf)};
    ssize_t got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    why[0] = 0;
    if (got <= 0)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof(fd));
        return fd;
    }
    text[got] = 0;
    snprintf(why, whylen, "refused: %s", text);
    return -1;
}

static void explain_spawn_error(const char *path, int e, char *why, size_t whylen)
{
    struct stat st;
    if (e != EACCES || stat(path, &st)) {
        snprintf(why, whylen, "cannot run %s: %s", path, strerror(e));
        return;
    }
    char group[32];
    struct group *g = getgrgid(st.st_gid);
    if (g)
        snprintf(group, sizeof(group), "%s", g->gr_name);
    else
        snprintf(group, sizeof(group), "%u", (unsigned)st.st_gid);
    snprintf(why, whylen, "only group %s may run %s (ask an administrator)", group, path);
}

int pme_eth_broker_socket(const char *ifname, uint16_t ethertype, uint16_t ep_id,
                          char *why, size_t whylen)
{
    char path[PATH_MAX];
    if (find_broker(path, sizeof(path), why, whylen))
        return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
        snprintf(why, whylen, "cannot ask it: %s", strerror(errno));
        return -1;
    }
    char et[16], ep[16];
    snprintf(et, sizeof(et), "0x%04x", ethertype);
    snprintf(ep, sizeof(ep), "%u", ep_id);
    char *argv[] = {"pme_rawsock", "--fd",  "3", "--ethertype", et, "--endpoint", ep, "--",
                    (char *)ifname, NULL};
    char *envp[] = {NULL}; /* it needs nothing from ours */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
    pid_t pid;
    int e = posix_spawn(&pid, path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    if (e) {
        close(sv[0]);
        explain_spawn_error(path, e, why, whylen);
        return -1;
    }
    int fd = receive_socket(sv[0], why, whylen);
    close(sv[0]);
    if (fd < 0 && why[0])
        kill(pid, SIGKILL); /* refused or silent: either way it has nothing more to say */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (fd < 0 && !why[0])
        snprintf(why, whylen, "%s ended without an answer (%s %d)", path,
                 WIFSIGNALED(status) ? "signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return fd;
}

int pme_eth_perm_error_why(const char *ifname, const char *why, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "no permission for raw Ethernet frames on %s. Best first: (1) PME's kernel "
             "driver (PME_DEVICE=kernel%s): no privilege, each process sees only its own "
             "frames; (2) the broker pme_rawsock (see pme_rawsock(8)), whose group may send any "
             "frame: %s; (3) CAP_NET_RAW (setcap cap_net_raw+ep PROGRAM): whoever runs the "
             "program may read and send any frame anywhere",
             ifname, access("/dev/pme", F_OK) == 0 ? ", /dev/pme is here" : ", needs /dev/pme",
             why);
    return PME_ERR_PERM;
}

int pme_eth_perm_error(const char *ifname, char *err, size_t errlen)
{
    return pme_eth_perm_error_why(ifname, "not with PME_DEVICE=pcap, use the ring device", err,
                                  errlen);
}

int pme_eth_down_error(const char *ifname, char *err, size_t errlen)
{
    snprintf(err, errlen, "interface %s is down: bring it up (ip link set dev %s up)", ifname,
             ifname);
    return PME_ERR_IFDOWN;
}

static int is_full(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
}

int pme_eth_send(int fd, const struct pme_dev_frame *frames, int n)
{
    if (n == 1) {
        struct msghdr mh = {.msg_iov = (struct iovec *)frames[0].iov,
                            .msg_iovlen = (size_t)frames[0].iovcnt};
        if (sendmsg(fd, &mh, MSG_DONTWAIT) >= 0)
            return 1;
        return is_full(errno) ? 0 : PME_ERR_DEVICE;
    }
    struct mmsghdr mm[64];
    if (n > 64)
        n = 64;
    memset(mm, 0, sizeof(mm[0]) * (size_t)n);
    for (int i = 0; i < n; i++) {
        mm[i].msg_hdr.msg_iov = (struct iovec *)frames[i].iov;
        mm[i].msg_hdr.msg_iovlen = (size_t)frames[i].iovcnt;
    }
    int sent = sendmmsg(fd, mm, (unsigned)n, MSG_DONTWAIT);
    if (sent >= 0)
        return sent;
    return is_full(errno) ? 0 : PME_ERR_DEVICE;
}

struct pme_eth_ring_shape pme_eth_ring_shape(unsigned frame_size, size_t bytes)
{
    struct pme_eth_ring_shape g;
    size_t want = (size_t)frame_size * 8 > 65536 ? (size_t)frame_size * 8 : 65536;
    for (g.block_size = 4096; g.block_size < want; g.block_size <<= 1)
        ;
    g.frames_per_block = (unsigned)(g.block_size / frame_size);
    if (bytes > (1u << 30))
        bytes = 1u << 30;
    size_t nblocks = bytes / g.block_size;
    g.nblocks = nblocks < 2 ? 2 : (unsigned)nblocks;
    g.nframes = g.nblocks * g.frames_per_block;
    return g;
}
