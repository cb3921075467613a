// SPDX-License-Identifier: BSD-3-Clause
/*
 * route_fwd.c - route_fwd.h with libbpf. One forwarder program per node, attached to
 * the TC ingress hook of each of its data interfaces, with one route map: the tools
 * find it again through any of those interfaces.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pme_fwd.h"
#include "pme_fwd.skel.h"
#include "route_fwd.h"
#include "tc_hook.h"

/* The interface's MAC must be the one the route file names: else these are the
 * routes of another node, and forwarded frames would carry a wrong source. */
static int check_mac(const char *ifname, const uint8_t *want, char *err, size_t errlen)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = s < 0 ? -1 : ioctl(s, SIOCGIFHWADDR, &ifr);
    if (s >= 0)
        close(s);
    if (rc) {
        snprintf(err, errlen, "cannot read the MAC of %s: %s", ifname, strerror(errno));
        return -1;
    }
    const uint8_t *m = (const uint8_t *)ifr.ifr_hwaddr.sa_data;
    if (memcmp(m, want, 6)) {
        snprintf(err, errlen,
                 "interface %s has MAC %02x:%02x:%02x:%02x:%02x:%02x here, but the route "
                 "file says %02x:%02x:%02x:%02x:%02x:%02x: these are another node's routes "
                 "(check --node)", ifname, m[0], m[1], m[2], m[3], m[4], m[5], want[0],
                 want[1], want[2], want[3], want[4], want[5]);
        return -1;
    }
    return 0;
}

static int fill_maps(struct pme_fwd_bpf *skel, const struct routefile *rf, char *err,
                     size_t errlen)
{
    uint32_t zero = 0;
    struct pme_route_self self = {.node = rf->node, .ethertype = rf->ethertype};
    if (bpf_map_update_elem(bpf_map__fd(skel->maps.fwd_self), &zero, &self, BPF_ANY)) {
        snprintf(err, errlen, "cannot write the forwarder's node id: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < rf->nroutes; i++) {
        const struct pme_route_line *l = &rf->routes[i];
        int idx = pme_tc_ifindex(l->iface, err, errlen);
        if (idx < 0)
            return -1;
        struct pme_route_entry e;
        memset(&e, 0, sizeof(e));
        e.ifindex = (uint32_t)idx;
        memcpy(e.next_hop, l->mac, 6);
        memcpy(e.src_mac, rf->ifs[routefile_iface(rf, l->iface)].mac, 6);
        e.hops = (uint8_t)l->hops;
        if (bpf_map_update_elem(bpf_map__fd(skel->maps.fwd_routes), &l->u.node, &e,
                                BPF_ANY)) {
            snprintf(err, errlen, "cannot add the route to node %u: %s", l->u.node,
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

int fwd_load(const struct routefile *rf, char *err, size_t errlen)
{
    pme_tc_quiet_libbpf();
    if (rf->nroutes > PME_ROUTE_MAX_NODES) {
        snprintf(err, errlen, "%d routes; the forwarder holds at most %d", rf->nroutes,
                 PME_ROUTE_MAX_NODES);
        return -1;
    }
    for (int i = 0; i < rf->nif; i++)
        if (check_mac(rf->ifs[i].name, rf->ifs[i].mac, err, errlen))
            return -1;
    struct pme_fwd_bpf *skel = pme_fwd_bpf__open_and_load();
    if (!skel) {
        snprintf(err, errlen, "cannot load the forwarder: %s%s", strerror(errno),
                 errno == EPERM ? " (run as root)" : "");
        return -1;
    }
    int rc = fill_maps(skel, rf, err, errlen);
    int fd = bpf_program__fd(skel->progs.pme_fwd);
    for (int i = 0; i < rf->nif && !rc; i++)
        rc = pme_tc_attach(rf->ifs[i].name, PME_TC_INGRESS, PME_TC_PRIO_FWD, fd, err, errlen);
    pme_fwd_bpf__destroy(skel); /* the attached program keeps itself and its maps */
    return rc ? -1 : 0;
}

int fwd_unload(const struct routefile *rf, char *err, size_t errlen)
{
    pme_tc_quiet_libbpf();
    for (int i = 0; i < rf->nif; i++) {
        int rc = pme_tc_detach(rf->ifs[i].name, PME_TC_INGRESS, PME_TC_PRIO_FWD, err, errlen);
        if (rc && rc != -ENOENT)
            return -1;
    }
    return 0;
}

/* find_maps: the counters and routes of the forwarder attached to rf's interfaces. */
static int find_maps(const struct routefile *rf, int *cnt, int *routes, char *attached,
                     size_t alen, char *err, size_t errlen)
{
    uint32_t id = 0, first = 0;
    attached[0] = 0;
    for (int i = 0; i < rf->nif; i++) {
        if (pme_tc_query(rf->ifs[i].name, PME_TC_INGRESS, PME_TC_PRIO_FWD, &id, err, errlen))
            return -1;
        if (!id)
            continue;
        if (!first)
            first = id;
        size_t used = strlen(attached);
        snprintf(attached + used, alen - used, "%s%s%s", used ? " " : "", rf->ifs[i].name,
                 id == first ? "" : "(another program)");
    }
    if (!first) {
        snprintf(err, errlen, "no forwarder on this node's interfaces (pme_route install or "
                 "pme_route load)");
        return -1;
    }
    *cnt = pme_tc_prog_map(first, PME_FWD_PROG, PME_FWD_MAP_COUNTERS, err, errlen);
    if (*cnt < 0)
        return -1;
    *routes = pme_tc_prog_map(first, PME_FWD_PROG, PME_FWD_MAP_ROUTES, err, errlen);
    if (*routes < 0) {
        close(*cnt);
        return -1;
    }
    return 0;
}

static int sum_counters(int fd, uint64_t sums[PME_FWD_COUNT], char *err, size_t errlen)
{
    int ncpu = libbpf_num_possible_cpus();
    uint64_t *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;
    if (!v) {
        snprintf(err, errlen, "cannot count the CPUs");
        return -1;
    }
    for (uint32_t i = 0; i < PME_FWD_COUNT; i++) {
        sums[i] = 0;
        if (bpf_map_lookup_elem(fd, &i, v)) {
            snprintf(err, errlen, "cannot read the forwarder's counters: %s", strerror(errno));
            free(v);
            return -1;
        }
        for (int c = 0; c < ncpu; c++)
            sums[i] += v[c];
    }
    free(v);
    return 0;
}

static void show_routes(int fd, FILE *out)
{
    uint32_t key, next;
    uint32_t *prev = NULL;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        struct pme_route_entry e;
        key = next;
        prev = &key;
        if (bpf_map_lookup_elem(fd, &key, &e))
            continue;
        char ifname[IF_NAMESIZE] = "?";
        if_indextoname(e.ifindex, ifname);
        const uint8_t *m = e.next_hop;
        fprintf(out, "  to node %u: %s (ifindex %u) -> %02x:%02x:%02x:%02x:%02x:%02x, %u hop%s\n",
                key, ifname, e.ifindex, m[0], m[1], m[2], m[3], m[4], m[5], e.hops,
                e.hops == 1 ? "" : "s");
    }
}

int fwd_show(const struct routefile *rf, FILE *out, int kv, char *err, size_t errlen)
{
    pme_tc_quiet_libbpf();
    int cnt, routes;
    char attached[256];
    if (find_maps(rf, &cnt, &routes, attached, sizeof(attached), err, errlen))
        return -1;
    uint64_t c[PME_FWD_COUNT];
    int rc = sum_counters(cnt, c, err, errlen);
    static const char *names[] = PME_FWD_COUNTER_NAMES;
    if (!rc && kv) {
        for (int i = 0; i < PME_FWD_COUNT; i++)
            fprintf(out, "%s%s=%" PRIu64, i ? " " : "", names[i], c[i]);
        fprintf(out, "\n");
    } else if (!rc) {
        fprintf(out, "forwarder on %s\n  counters:", attached);
        for (int i = 0; i < PME_FWD_COUNT; i++)
            fprintf(out, "%s %s %" PRIu64, i ? "," : "", names[i], c[i]);
        fprintf(out, "\n");
        show_routes(routes, out);
    }
    close(cnt);
    close(routes);
    return rc;
}
