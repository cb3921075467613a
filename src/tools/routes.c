// SPDX-License-Identifier: BSD-3-Clause
/*
 * routes.c - see routes.h; pme_route.h says why these routes cannot loop.
 */
#include <stdlib.h>
#include <string.h>

#include "pme_route.h"
#include "routes.h"

/* steps: how far b is from a in dimension d going "+", and the shorter way's length
 * and direction ("+" when both are equally long, so every node breaks ties alike). */
static int steps(const struct topo *t, int a, int b, int d, int *dir)
{
    int k = t->dims[d];
    int fwd = (t->nodes[b].coord[d] - t->nodes[a].coord[d] + k) % k;
    *dir = fwd <= k - fwd ? 1 : -1;
    return fwd <= k - fwd ? fwd : k - fwd;
}

int torus_distance(const struct topo *t, int a, int b)
{
    int sum = 0, dir;
    for (int d = 0; d < t->ndims; d++)
        sum += steps(t, a, b, d, &dir);
    return sum;
}

static int link_of(const struct topo_node *n, int dim, int dir)
{
    for (int i = 0; i < n->nif; i++)
        if (n->ifs[i].peer >= 0 && n->ifs[i].dim == dim && n->ifs[i].dir == dir)
            return i;
    return -1; /* topo_read guarantees one */
}

static int torus_route(const struct topo *t, int from, int to, struct route *r)
{
    int dir;
    for (int d = 0; d < t->ndims; d++) {
        if (!steps(t, from, to, d, &dir))
            continue;
        const struct topo_node *n = &t->nodes[from];
        r->ifidx = link_of(n, d, dir);
        const struct topo_if *f = &n->ifs[r->ifidx];
        memcpy(r->next_hop, t->nodes[f->peer].ifs[f->peer_if].mac, 6);
        r->hops = torus_distance(t, from, to);
        return 0;
    }
    return -1; /* from == to */
}

/* The first interface of `from` (in its order) whose switch `to` reaches too. */
static int switch_route(const struct topo *t, int from, int to, struct route *r)
{
    const struct topo_node *a = &t->nodes[from], *b = &t->nodes[to];
    for (int i = 0; i < a->nif; i++) {
        if (a->ifs[i].sw < 0)
            continue;
        for (int j = 0; j < b->nif; j++)
            if (b->ifs[j].sw == a->ifs[i].sw) {
                r->ifidx = i;
                memcpy(r->next_hop, b->ifs[j].mac, 6);
                r->hops = 1;
                return 0;
            }
    }
    return -1;
}

int routes_of(const struct topo *t, int from, struct route *out, char *err, size_t errlen)
{
    int n = 0;
    for (int to = 0; to < t->nnodes; to++) {
        if (to == from)
            continue;
        struct route *r = &out[n];
        memset(r, 0, sizeof(*r));
        r->dst = t->nodes[to].id;
        int rc = t->kind == TOPO_TORUS ? torus_route(t, from, to, r)
                                       : switch_route(t, from, to, r);
        if (rc) {
            snprintf(err, errlen, "node %u shares no switch with node %u: no route",
                     t->nodes[from].id, t->nodes[to].id);
            return -1;
        }
        n++;
    }
    return n;
}

static void fmt_mac(char *out, const uint8_t *m)
{
    sprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* The topology line and every node's coordinates (pme_route.h): how far apart any two
 * nodes are, for placing MPI ranks. */
static void write_places(FILE *f, const struct topo *t)
{
    if (t->kind == TOPO_SWITCH) {
        fprintf(f, "topology switch\n");
        return;
    }
    fprintf(f, "topology %s ", t->ndims == 1 ? "ring" : "torus");
    for (int d = 0; d < t->ndims; d++)
        fprintf(f, "%s%d", d ? "x" : "", t->dims[d]);
    fputc('\n', f);
    for (int i = 0; i < t->nnodes; i++) {
        fprintf(f, "coords %u ", t->nodes[i].id);
        for (int d = 0; d < t->ndims; d++)
            fprintf(f, "%s%d", d ? "," : "", t->nodes[i].coord[d]);
        fputc('\n', f);
    }
}

int routes_write(FILE *f, const struct topo *t, int from, uint16_t ethertype, char *err,
                 size_t errlen)
{
    const struct topo_node *me = &t->nodes[from];
    struct route *r = calloc((size_t)t->nnodes, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = routes_of(t, from, r, err, errlen);
    if (n < 0) {
        free(r);
        return -1;
    }
    char mac[18];
    fprintf(f, "pme-routes %d\n# node %s; written by pme_route\nnode %u\nethertype 0x%04x\n",
            PME_ROUTE_FORMAT, me->name, me->id, ethertype);
    for (int i = 0; i < me->nif; i++) {
        fmt_mac(mac, me->ifs[i].mac);
        fprintf(f, "iface %s %s\n", me->ifs[i].name, mac);
    }
    for (int i = 0; i < n; i++) {
        fmt_mac(mac, r[i].next_hop);
        fprintf(f, "route %u %s %s %d\n", r[i].dst, me->ifs[r[i].ifidx].name, mac, r[i].hops);
    }
    free(r);
    write_places(f, t);
    return 0;
}
