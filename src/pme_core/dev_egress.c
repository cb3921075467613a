// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_egress.c - may frames skip an interface's egress path (PACKET_QDISC_BYPASS)?
 *
 * Only when nothing there does more than queue them: the kernel's default queueing
 * disciplines (noqueue, mq, pfifo_fast, pfifo, fq_codel, fq) and no filter at TC egress.
 * A shaper (tbf, htb, cake, netem...) or an egress filter (clsact with a program
 * attached, as PME's fault injector does) is the administrator's or a test's, and
 * bypassing it would send past a rate limit or around injected faults. Asked once per
 * endpoint, through rtnetlink (the qdisc dump, then the filters at clsact's egress).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev_eth.h"

/* Queueing disciplines that only queue (and schedule fairly among flows). */
static bool only_queues(const char *kind)
{
    static const char *const plain[] = {"noqueue", "mq", "pfifo_fast", "pfifo", "fq_codel",
                                        "fq", "ingress"};
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        if (!strcmp(kind, plain[i]))
            return true;
    return false;
}

/* One rtnetlink dump of `type` for the interface (parent: for filters). Calls `each` with
 * every answer's tcmsg and its TCA_KIND for that interface; stops when `each` says
 * false. Returns 0, or -1 when rtnetlink could not be asked. */
static int dump(int type, int ifindex, uint32_t parent,
                bool (*each)(const char *kind, uint32_t handle, void *arg), void *arg)
{
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0)
        return -1;
    struct {
        struct nlmsghdr nh;
        struct tcmsg tc;
    } req = {
        .nh = {.nlmsg_len = sizeof(req), .nlmsg_type = (uint16_t)type,
               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1},
        .tc = {.tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_parent = parent},
    };
    int rc = send(s, &req, sizeof(req), 0) == (ssize_t)sizeof(req) ? 0 : -1;
    bool more = true;
    char buf[16384];
    while (!rc && more) {
        ssize_t n = recv(s, buf, sizeof(buf), 0);
        if (n <= 0) {
            rc = n < 0 && errno == EINTR ? 0 : -1;
            continue;
        }
        for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
             nh = NLMSG_NEXT(nh, n)) {
            if (nh->nlmsg_type == NLMSG_DONE) {
                more = false;
                break;
            }
            if (nh->nlmsg_type == NLMSG_ERROR) {
                rc = -1;
                break;
            }
            struct tcmsg *tc = NLMSG_DATA(nh);
            if (tc->tcm_ifindex != ifindex || !more)
                continue;
            const char *kind = "";
            int alen = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc)));
            for (struct rtattr *a = (struct rtattr *)((char *)tc + NLMSG_ALIGN(sizeof(*tc)));
                 RTA_OK(a, alen); a = RTA_NEXT(a, alen))
                if (a->rta_type == TCA_KIND)
                    kind = RTA_DATA(a);
            if (!each(kind, tc->tcm_handle, arg))
                more = false;
        }
    }
    close(s);
    return rc;
}

struct verdict {
    bool plain;
    bool clsact;
};

static bool judge_qdisc(const char *kind, uint32_t handle, void *arg)
{
    (void)handle;
    struct verdict *v = arg;
    if (!strcmp(kind, "clsact"))
        v->clsact = true;
    else if (!only_queues(kind))
        v->plain = false;
    return v->plain;
}

static bool any_filter(const char *kind, uint32_t handle, void *arg)
{
    (void)kind;
    (void)handle;
    *(bool *)arg = true;
    return false;
}

bool pme_eth_egress_plain(const char *ifname)
{
    int ifindex = (int)if_nametoindex(ifname);
    struct verdict v = {true, false};
    if (!ifindex || dump(RTM_GETQDISC, ifindex, 0, judge_qdisc, &v))
        return false;
    if (v.plain && v.clsact) {
        bool filtered = false;
        if (dump(RTM_GETTFILTER, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS), any_filter,
                 &filtered))
            return false;
        v.plain = !filtered;
    }
    return v.plain;
}
