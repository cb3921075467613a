// SPDX-License-Identifier: BSD-3-Clause
/*
 * tc_hook.c - see tc_hook.h. Classic TC filters through libbpf's netlink calls, which
 * work on every kernel with clsact (Linux 4.5 on); the attached program keeps its maps
 * alive, so nothing needs pinning in a BPF file system.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tc_hook.h"

static char libbpf_last[256];

static int keep_last(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level == LIBBPF_WARN) {
        vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, ap);
        libbpf_last[strcspn(libbpf_last, "\n")] = 0;
    }
    return 0;
}

void pme_tc_quiet_libbpf(void)
{
    libbpf_set_print(keep_last);
}

/* fail: an error message for a failed kernel call, with the usual fixes. */
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    const char *hint = "";
    if (rc == -EPERM || rc == -EACCES)
        hint = " (run as root: loading BPF programs needs CAP_BPF and CAP_NET_ADMIN)";
    snprintf(err, errlen, "%s: %s%s%s%s", what, strerror(-rc), hint,
             libbpf_last[0] ? "; libbpf: " : "", libbpf_last);
    libbpf_last[0] = 0;
    return rc;
}

int pme_tc_ifindex(const char *ifname, char *err, size_t errlen)
{
    unsigned idx = if_nametoindex(ifname);
    if (!idx) {
        snprintf(err, errlen,
                 "no interface '%s' in this network namespace (run it in the node's "
                 "namespace; 'ip link' lists the interfaces there)",
                 ifname);
        return -ENODEV;
    }
    return (int)idx;
}

static int hook_of(const char *ifname, enum pme_tc_side side, struct bpf_tc_hook *hook,
                   char *err, size_t errlen)
{
    int idx = pme_tc_ifindex(ifname, err, errlen);
    if (idx < 0)
        return idx;
    memset(hook, 0, sizeof(*hook));
    hook->sz = sizeof(*hook);
    hook->ifindex = idx;
    hook->attach_point = side == PME_TC_EGRESS ? BPF_TC_EGRESS : BPF_TC_INGRESS;
    return 0;
}

static const char *side_name(enum pme_tc_side side)
{
    return side == PME_TC_EGRESS ? "egress" : "ingress";
}

int pme_tc_attach(const char *ifname, enum pme_tc_side side, uint32_t prio, int prog_fd,
                  char *err, size_t errlen)
{
    struct bpf_tc_hook hook;
    int rc = hook_of(ifname, side, &hook, err, errlen);
    if (rc)
        return rc;
    rc = bpf_tc_hook_create(&hook); /* the clsact qdisc; it may exist already */
    libbpf_last[0] = 0;
    if (rc && rc != -EEXIST)
        return fail(rc, err, errlen, "cannot add a clsact qdisc to %s", ifname);
    LIBBPF_OPTS(bpf_tc_opts, opts, .handle = PME_TC_HANDLE, .priority = prio,
                .prog_fd = prog_fd, .flags = BPF_TC_F_REPLACE);
    rc = bpf_tc_attach(&hook, &opts);
    if (rc)
        return fail(rc, err, errlen, "cannot attach to the TC %s hook of %s", side_name(side),
                    ifname);
    return 0;
}

int pme_tc_detach(const char *ifname, enum pme_tc_side side, uint32_t prio, char *err,
                  size_t errlen)
{
    struct bpf_tc_hook hook;
    int rc = hook_of(ifname, side, &hook, err, errlen);
    if (rc)
        return rc;
    LIBBPF_OPTS(bpf_tc_opts, opts, .handle = PME_TC_HANDLE, .priority = prio);
    rc = bpf_tc_detach(&hook, &opts);
    if (rc == -ENOENT || rc == -EINVAL) {
        /* EINVAL: no clsact qdisc at all */
        libbpf_last[0] = 0;
        snprintf(err, errlen, "nothing of PME's is attached to the TC %s hook of %s",
                 side_name(side), ifname);
        return -ENOENT;
    }
    if (rc)
        return fail(rc, err, errlen, "cannot detach from the TC %s hook of %s", side_name(side),
                    ifname);
    return 0;
}

int pme_tc_query(const char *ifname, enum pme_tc_side side, uint32_t prio, uint32_t *prog_id,
                 char *err, size_t errlen)
{
    struct bpf_tc_hook hook;
    int rc = hook_of(ifname, side, &hook, err, errlen);
    *prog_id = 0;
    if (rc)
        return rc;
    LIBBPF_OPTS(bpf_tc_opts, opts, .handle = PME_TC_HANDLE, .priority = prio);
    rc = bpf_tc_query(&hook, &opts);
    libbpf_last[0] = 0;
    if (rc == -ENOENT || rc == -EINVAL)
        return 0;
    if (rc)
        return fail(rc, err, errlen, "cannot query the TC %s hook of %s", side_name(side),
                    ifname);
    *prog_id = opts.prog_id;
    return 0;
}

int pme_tc_prog_map(uint32_t prog_id, const char *prog_name, const char *map_name, char *err,
                    size_t errlen)
{
    int pfd = bpf_prog_get_fd_by_id(prog_id);
    if (pfd < 0)
        return fail(-errno, err, errlen, "cannot open BPF program %u", prog_id);
    uint32_t ids[16];
    struct bpf_prog_info info;
    uint32_t len = sizeof(info);
    memset(&info, 0, sizeof(info));
    info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
    info.map_ids = (uintptr_t)ids;
    int rc = bpf_obj_get_info_by_fd(pfd, &info, &len);
    close(pfd);
    if (rc)
        return fail(-errno, err, errlen, "cannot read BPF program %u", prog_id);
    if (strcmp(info.name, prog_name)) {
        snprintf(err, errlen, "the program in PME's slot is '%s', not %s", info.name, prog_name);
        return -ENOENT;
    }
    uint32_t n = info.nr_map_ids < sizeof(ids) / sizeof(ids[0]) ? info.nr_map_ids
                                                                 : sizeof(ids) / sizeof(ids[0]);
    for (uint32_t i = 0; i < n; i++) {
        int mfd = bpf_map_get_fd_by_id(ids[i]);
        if (mfd < 0)
            continue;
        struct bpf_map_info minfo;
        uint32_t mlen = sizeof(minfo);
        memset(&minfo, 0, sizeof(minfo));
        if (bpf_obj_get_info_by_fd(mfd, &minfo, &mlen) == 0 && !strcmp(minfo.name, map_name))
            return mfd;
        close(mfd);
    }
    snprintf(err, errlen, "program %s (id %u) has no map %s (built from another version?)",
             prog_name, prog_id, map_name);
    return -ENOENT;
}
