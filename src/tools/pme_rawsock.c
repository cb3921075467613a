// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_rawsock - hands a PME process the packet socket it may not open itself.
 *
 *   pme_rawsock [--fd N] [--ethertype 0x88b5] --endpoint ID IFACE
 *
 * The one step that needs privilege is socket(AF_PACKET): this program alone holds
 * CAP_NET_RAW (a file capability, or setuid root), only its group may run it, and it
 * gives the privilege up right after that call. With the caller's own rights it then
 * checks the caller and the request, filters the socket to frames of PME's EtherType
 * for one endpoint at the interface's MAC, locks that filter so the receiver cannot
 * widen it, binds it to the interface and passes it back over the Unix socket N
 * (SCM_RIGHTS), or a sentence saying why not. Without --fd it runs the same checks
 * and prints the verdict, for an administrator trying the setup. Every verdict goes
 * to syslog (authpriv).
 *
 * What no filter limits: a packet socket can send any frame. doc/rawsock.md says what
 * that means and how to install this program. Keep it small: it is read by whoever
 * decides to trust it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "pme_wire.h"

#ifndef PME_RAWSOCK_ALLOW_ALL
#define PME_RAWSOCK_ALLOW_ALL 0
#endif

struct request {
    int reply_fd; /* -1: the verdict goes to stderr */
    unsigned ethertype;
    unsigned ep_id;
    const char *iface;
};

/* Say why the request is refused (to the caller and to syslog); returns the exit
 * status. */
static int refuse(const struct request *rq, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int refuse(const struct request *rq, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    syslog(LOG_WARNING, "refused uid %u (pid %d): %s", (unsigned)getuid(), (int)getppid(),
           msg);
    if (rq->reply_fd < 0 || send(rq->reply_fd, msg, strlen(msg) + 1, MSG_NOSIGNAL) < 0)
        fprintf(stderr, "pme_rawsock: %s\n", msg);
    return 1;
}

/* Leave the privilege of this program (setuid root or file capability) for good. */
static int drop_privileges(void)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
        return -1;
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];
    memset(none, 0, sizeof(none));
    if (syscall(SYS_capset, &hdr, none))
        return -1;
    if (uid != 0 && setresuid(uid, 0, uid) == 0)
        return -1; /* root could be had back: refuse to go on */
    return 0;
}

/* The group that owns this program's file is the group allowed to run it. Root may
 * always; anyone else must have it as the primary or a supplementary group. */
static int check_group(const struct request *rq)
{
    struct stat st;
    if (stat("/proc/self/exe", &st))
        return refuse(rq, "cannot look at its own file (/proc/self/exe): %s", strerror(errno));
    if (getuid() == 0 || getgid() == st.st_gid)
        return 0;
    int n = getgroups(0, NULL);
    gid_t *groups = n > 0 ? calloc((size_t)n, sizeof(*groups)) : NULL;
    if (groups)
        n = getgroups(n, groups);
    for (int i = 0; groups && i < n; i++) {
        if (groups[i] == st.st_gid) {
            free(groups);
            return 0;
        }
    }
    free(groups);
    struct group *g = getgrgid(st.st_gid);
    if (g)
        return refuse(rq, "you are not in group %s (ask an administrator)", g->gr_name);
    return refuse(rq, "you are not in group %u (ask an administrator)", (unsigned)st.st_gid);
}

/* Is the interface listed (a name or a glob per line, '#' comments) in the
 * administrator's file? The file must be root's alone: whoever can write it decides. */
static int check_interface(const struct request *rq)
{
    FILE *f = fopen(PME_RAWSOCK_CONFIG, "re");
    if (!f && errno == ENOENT && PME_RAWSOCK_ALLOW_ALL)
        return 0;
    if (!f && errno == ENOENT)
        return refuse(rq, "%s does not exist, so no interface is allowed (an "
                      "administrator lists them there)", PME_RAWSOCK_CONFIG);
    if (!f)
        return refuse(rq, "cannot read %s: %s", PME_RAWSOCK_CONFIG, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        fclose(f);
        return refuse(rq, "%s must belong to root and be writable by root alone",
                      PME_RAWSOCK_CONFIG);
    }
    char line[256];
    int allowed = 0, line_start = 1;
    while (!allowed && fgets(line, sizeof(line), f)) {
        int line_end = strchr(line, '\n') != NULL; /* the rest of a long line is no pattern */
        line[strcspn(line, "#\n")] = 0;
        char *pat = line + strspn(line, " \t");
        pat[strcspn(pat, " \t")] = 0;
        allowed = line_start && *pat && fnmatch(pat, rq->iface, 0) == 0;
        line_start = line_end;
    }
    fclose(f);
    if (allowed)
        return 0;
    return refuse(rq, "interface %s is not listed in %s (ask an administrator)", rq->iface,
                  PME_RAWSOCK_CONFIG);
}

/* Classic BPF: PME's EtherType, sent to this interface's MAC, for this endpoint. The
 * endpoint id keeps its offset in every wire version (pme_wire.h). */
static int attach_locked_filter(int sock, const struct request *rq, const uint8_t mac[6])
{
    uint32_t mac_hi = (uint32_t)mac[0] << 24 | (uint32_t)mac[1] << 16 |
                      (uint32_t)mac[2] << 8 | mac[3];
    uint32_t mac_lo = (uint32_t)mac[4] << 8 | mac[5];
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, rq->ethertype, 0, 7),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, mac_hi, 0, 5),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, mac_lo, 0, 3),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, PME_WIRE_OFF_DST_EP),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, rq->ep_id, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xFFFFFFFFu), /* the whole frame */
        BPF_STMT(BPF_RET | BPF_K, 0),           /* nothing */
    };
    struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};
    int one = 1;
    if (setsockopt(sock, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
        setsockopt(sock, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one)))
        return -1;
    return 0;
}

/* Filter, lock and bind the socket; 0, or the exit status of a refusal. */
static int prepare(int sock, const struct request *rq)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", rq->iface);
    if (ioctl(sock, SIOCGIFHWADDR, &ifr))
        return refuse(rq, "cannot read the MAC of %s: %s", rq->iface, strerror(errno));
    if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
        return refuse(rq, "%s is not an Ethernet interface", rq->iface);
    if (attach_locked_filter(sock, rq, (const uint8_t *)ifr.ifr_hwaddr.sa_data))
        return refuse(rq, "cannot filter the socket: %s", strerror(errno));
    /* Every protocol, as PME's ring device binds its own socket: only such a socket
     * also gets copies of the frames this host sends, and two endpoints on one
     * interface meet only through those copies. The locked filter, not the binding,
     * decides what the socket receives. */
    struct sockaddr_ll sll = {.sll_family = AF_PACKET,
                              .sll_protocol = htons(ETH_P_ALL),
                              .sll_ifindex = (int)if_nametoindex(rq->iface)};
    if (bind(sock, (struct sockaddr *)&sll, sizeof(sll)))
        return refuse(rq, "cannot bind to %s: %s", rq->iface, strerror(errno));
    return 0;
}

static int hand_over(int sock, const struct request *rq)
{
    char text[160];
    snprintf(text, sizeof(text), "a socket on %s for EtherType 0x%04x, endpoint %u",
             rq->iface, rq->ethertype, rq->ep_id);
    if (rq->reply_fd < 0) {
        printf("pme_rawsock: allowed: %s (no --fd: nothing handed over)\n", text);
        return 0;
    }
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct iovec iov = {text, strlen(text) + 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &sock, sizeof(sock));
    if (sendmsg(rq->reply_fd, &mh, MSG_NOSIGNAL) < 0) {
        syslog(LOG_WARNING, "uid %u (pid %d): could not pass %s: %m", (unsigned)getuid(),
               (int)getppid(), text);
        return 1;
    }
    syslog(LOG_INFO, "uid %u (pid %d) got %s", (unsigned)getuid(), (int)getppid(), text);
    return 0;
}

static int usage(FILE *to, int status)
{
    fprintf(to,
            "usage: pme_rawsock [--fd N] [--ethertype 0x88b5|0x88b6] --endpoint ID IFACE\n"
            "PME's ring device runs this for processes without CAP_NET_RAW.\n"
            "Allowed interfaces: %s%s. Allowed callers: root and the group of this "
            "file.\n",
            PME_RAWSOCK_CONFIG,
            PME_RAWSOCK_ALLOW_ALL ? " (every interface if it does not exist)" : "");
    return status;
}

static int parse_num(const char *s, unsigned long max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 0);
    if (errno || end == s || *end || *s == '-' || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* The request from the command line; 0, or an exit status. */
static int parse(int argc, char **argv, struct request *rq)
{
    static const struct option opts[] = {{"fd", 1, 0, 'f'}, {"ethertype", 1, 0, 't'},
                                         {"endpoint", 1, 0, 'e'}, {0, 0, 0, 0}};
    unsigned fd = 0;
    int have_ep = 0, c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'f' && !parse_num(optarg, 1024, &fd) && fd > 2)
            continue;
        if (c == 't' && !parse_num(optarg, 0xFFFF, &rq->ethertype))
            continue;
        if (c == 'e' && !parse_num(optarg, PME_EP_ID_MAX, &rq->ep_id)) {
            have_ep = 1;
            continue;
        }
        return usage(stderr, 2);
    }
    if (optind != argc - 1 || !have_ep)
        return usage(stderr, 2);
    if (fd) {
        int domain = 0;
        socklen_t len = sizeof(domain);
        if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) || domain != AF_UNIX) {
            fprintf(stderr, "pme_rawsock: --fd %u is not a Unix socket\n", fd);
            return 2;
        }
        rq->reply_fd = (int)fd;
    }
    rq->iface = argv[optind];
    size_t n = strlen(rq->iface);
    int printable = n > 0 && n < IF_NAMESIZE;
    for (size_t i = 0; i < n; i++)
        printable &= rq->iface[i] > ' ' && rq->iface[i] <= '~' && rq->iface[i] != '/';
    if (!printable)
        return refuse(rq, "the interface name is not one Linux allows");
    if (!if_nametoindex(rq->iface))
        return refuse(rq, "no interface named %s here", rq->iface);
    /* The two EtherTypes IEEE 802 keeps for local experiments. Any other could be a
     * protocol of other users (0x0800 is IPv4): a socket for it would read their
     * traffic to this host. */
    if (rq->ethertype != 0x88B5 && rq->ethertype != 0x88B6)
        return refuse(rq, "EtherType 0x%04x is not one of PME's (0x88b5, 0x88b6)",
                      rq->ethertype);
    return 0;
}

int main(int argc, char **argv)
{
    /* Descriptors 0 to 2 are open, so that the socket cannot become one of them and
     * take what is printed. */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
            return 1;
    /* Privileged: this call and nothing else. Protocol 0: the socket takes no frame
     * before it is filtered and bound. */
    int sock = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    int sock_errno = errno;
    int dropped = drop_privileges() == 0;
    int drop_errno = errno;

    if (argc == 2 && !strcmp(argv[1], "--help"))
        return usage(stdout, 0);
    openlog("pme_rawsock", LOG_PID, LOG_AUTHPRIV);
    struct request rq = {.reply_fd = -1, .ethertype = PME_ETHERTYPE_DEFAULT};
    int rc = parse(argc, argv, &rq);
    if (!rc && !dropped)
        rc = refuse(&rq, "cannot give up its privilege: %s", strerror(drop_errno));
    if (!rc)
        rc = check_group(&rq);
    if (!rc)
        rc = check_interface(&rq);
    if (!rc && sock < 0)
        rc = sock_errno == EPERM || sock_errno == EACCES
                 ? refuse(&rq, "it has no CAP_NET_RAW itself (an administrator gives it: "
                          "setcap cap_net_raw+ep)")
                 : refuse(&rq, "cannot open a packet socket: %s", strerror(sock_errno));
    if (!rc)
        rc = prepare(sock, &rq);
    if (!rc)
        rc = hand_over(sock, &rq);
    return rc;
}
