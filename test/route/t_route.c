// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_route.c - pme_route's topologies and routes, without any network: rings and tori
 * of several shapes, written both as an administrator's topology file and as
 * maint/vcluster's description. For every pair of nodes a frame is walked hop by hop
 * through the routes each node on the way would install, and must arrive, over as
 * many links as a breadth-first search of the cabling finds (so, shortest), in
 * dimension order, one direction per dimension, "+" on ties, each route's hop count and
 * next-hop MAC matching the walk. The route file round-trips through pme_route.h's
 * parser and pme_core's reader (with the topology and every node's coordinates), and
 * bad topologies and route files are refused with messages naming the problem.
 * pme-test: tier=default cpu=90 time=1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node_routes.h"
#include "pme_route.h"
#include "pme_test.h"
#include "routefile.h"
#include "routes.h"
#include "topology.h"

static const char letters[] = "xyz";

struct shape {
    int ndims, dims[3];
};

static int shape_nodes(const struct shape *s)
{
    int n = 1;
    for (int d = 0; d < s->ndims; d++)
        n *= s->dims[d];
    return n;
}

static void coords_of(const struct shape *s, int i, int *c)
{
    for (int d = 0; d < s->ndims; d++) {
        c[d] = i % s->dims[d];
        i /= s->dims[d];
    }
}

static int index_of(const struct shape *s, const int *c)
{
    int i = 0, m = 1;
    for (int d = 0; d < s->ndims; d++) {
        i += c[d] * m;
        m *= s->dims[d];
    }
    return i;
}

static int neighbour(const struct shape *s, int i, int d, int dir)
{
    int c[3];
    coords_of(s, i, c);
    c[d] = (c[d] + dir + s->dims[d]) % s->dims[d];
    return index_of(s, c);
}

/* Interface j of node i: 2d is "+" in dimension d, 2d+1 is "-" (as vcluster does). */
static void mac_of(int i, int j, char out[18])
{
    snprintf(out, 18, "02:c8:02:%02x:%02x:%02x", (i >> 8) & 255, i & 255, j & 255);
}

/* The administrator's form; node ids are not the indices (7 * i + 100), interface
 * names differ from vcluster's, and the lines come in a scrambled order. */
static char *admin_text(const struct shape *s)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    int n = shape_nodes(s), c[3];
    char mac[18];
    fprintf(f, "# test topology\n");
    for (int i = n - 1; i >= 0; i--)
        for (int d = 0; d < s->ndims; d++)
            fprintf(f, "link %d:port%dplus %d:port%dminus\n", 7 * i + 100, d,
                    7 * neighbour(s, i, d, 1) + 100, d);
    if (s->ndims == 1)
        fprintf(f, "topology ring %d\n", s->dims[0]);
    else
        fprintf(f, "topology torus %dx%d%s%.0d\n", s->dims[0], s->dims[1],
                s->ndims == 3 ? "x" : "", s->ndims == 3 ? s->dims[2] : 0);
    for (int i = 0; i < n; i++) {
        coords_of(s, i, c);
        fprintf(f, "node %d host%d %d", 7 * i + 100, i, c[0]);
        for (int d = 1; d < s->ndims; d++)
            fprintf(f, ",%d", c[d]);
        fprintf(f, "   # a comment\n");
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2 * s->ndims; j++) {
            mac_of(i, j, mac);
            fprintf(f, "iface %d port%d%s %s\n", 7 * i + 100, j / 2, j % 2 ? "minus" : "plus",
                    mac);
        }
    fclose(f);
    return buf;
}

/* maint/vcluster's description of the same shape (see write_tsv there). */
static char *vcluster_text(const struct shape *s)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    int n = shape_nodes(s), c[3];
    char mac[18], pmac[18], spec[32];
    if (s->ndims == 1)
        sprintf(spec, "ring:%d", s->dims[0]);
    else if (s->ndims == 2)
        sprintf(spec, "torus:%dx%d", s->dims[0], s->dims[1]);
    else
        sprintf(spec, "torus:%dx%dx%d", s->dims[0], s->dims[1], s->dims[2]);
    fprintf(f, "# vcluster/1 cluster description\n");
    fprintf(f, "cluster\tt\t%s\t%s\t%d\t%d\t1500\t-\t0\t10.200.0.0/24\n",
            s->ndims == 1 ? "ring" : "torus", spec, n, 2 * s->ndims);
    for (int i = 0; i < n; i++) {
        coords_of(s, i, c);
        fprintf(f, "node\t%d\tt-n%d\t10.200.0.%d\t%d", i, i, i + 1, c[0]);
        for (int d = 1; d < s->ndims; d++)
            fprintf(f, ",%d", c[d]);
        fprintf(f, "\n");
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2 * s->ndims; j++) {
            int d = j / 2, p = neighbour(s, i, d, j % 2 ? -1 : 1), pj = j ^ 1;
            mac_of(i, j, mac);
            mac_of(p, pj, pmac);
            fprintf(f, "iface\t%d\t%c%c\t%s\t%c%c\t%d\t%c%c\t%s\n", i, letters[d],
                    j % 2 ? 'm' : 'p', mac, letters[d], j % 2 ? 'm' : 'p', p, letters[d],
                    pj % 2 ? 'm' : 'p', pmac);
        }
    fclose(f);
    return buf;
}

static int read_text(const char *text, struct topo *t, char *err, size_t errlen)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int rc = topo_read(f, "test", t, err, errlen);
    fclose(f);
    return rc;
}

/* Breadth-first search over the cabling: the true shortest path length. */
static int bfs_distance(const struct topo *t, int a, int b)
{
    int *dist = malloc((size_t)t->nnodes * sizeof(int)), *queue = malloc((size_t)t->nnodes * sizeof(int));
    for (int i = 0; i < t->nnodes; i++)
        dist[i] = -1;
    int head = 0, tail = 0;
    dist[a] = 0;
    queue[tail++] = a;
    while (head < tail) {
        int u = queue[head++];
        for (int k = 0; k < t->nodes[u].nif; k++) {
            int v = t->nodes[u].ifs[k].peer;
            if (v >= 0 && dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    int d = dist[b];
    free(dist);
    free(queue);
    return d;
}

static const struct route *route_to(const struct route *r, int n, uint32_t dst)
{
    for (int i = 0; i < n; i++)
        if (r[i].dst == dst)
            return &r[i];
    return NULL;
}

/* Walk a frame from a to b through every node's own routes. */
static void walk(const struct topo *t, struct route **tables, int a, int b)
{
    int cur = a, hops = 0, last_dim = -1, last_dir = 0;
    const struct route *first = route_to(tables[a], t->nnodes - 1, t->nodes[b].id);
    CHECK(first, "node %u has no route to %u", t->nodes[a].id, t->nodes[b].id);
    while (cur != b) {
        const struct route *r = route_to(tables[cur], t->nnodes - 1, t->nodes[b].id);
        CHECK(r, "node %u has no route to %u", t->nodes[cur].id, t->nodes[b].id);
        const struct topo_if *f = &t->nodes[cur].ifs[r->ifidx];
        CHECK(f->peer >= 0, "route leaves on an unlinked interface");
        const uint8_t *peer_mac = t->nodes[f->peer].ifs[f->peer_if].mac;
        CHECK(!memcmp(r->next_hop, peer_mac, 6), "next hop is not the far end of the link");
        CHECK(r->hops == bfs_distance(t, cur, b), "route %u->%u says %d hops, BFS %d",
              t->nodes[cur].id, t->nodes[b].id, r->hops, bfs_distance(t, cur, b));
        /* dimension order, one direction per dimension */
        CHECK(f->dim >= last_dim, "%u->%u goes back to dimension %d after %d", t->nodes[a].id,
              t->nodes[b].id, f->dim, last_dim);
        if (f->dim == last_dim)
            CHECK(f->dir == last_dir, "%u->%u turns round in dimension %d", t->nodes[a].id,
                  t->nodes[b].id, f->dim);
        else {
            /* a tie between the two ways round goes "+" */
            int k = t->dims[f->dim];
            int fwd = (t->nodes[b].coord[f->dim] - t->nodes[cur].coord[f->dim] + k) % k;
            if (2 * fwd == k)
                CHECK(f->dir == 1, "a tie in dimension %d went \"-\"", f->dim);
        }
        last_dim = f->dim;
        last_dir = f->dir;
        cur = f->peer;
        CHECK(++hops <= t->nnodes, "%u->%u loops", t->nodes[a].id, t->nodes[b].id);
    }
    CHECK(hops == bfs_distance(t, a, b), "%u->%u took %d hops, the shortest is %d",
          t->nodes[a].id, t->nodes[b].id, hops, bfs_distance(t, a, b));
    CHECK(hops == torus_distance(t, a, b), "torus distance disagrees");
    CHECK(first->hops == hops, "first route says %d hops, walk took %d", first->hops, hops);
}

/* The route file of node i, parsed back with pme_route.h's parser and routefile_read. */
/* pme_core reads the route file's topology and every node's coordinates back. */
static void check_places(const struct topo *t, const char *path)
{
    struct pme_routes pr;
    char err[512];
    setenv("PME_ROUTES", path, 1);
    CHECK(pme_routes_load(&pr, err, sizeof(err)) == 0, "pme_core refused: %s", err);
    unsetenv("PME_ROUTES");
    CHECK(pr.ndims == t->ndims && pr.ncoords == (size_t)t->nnodes, "%d dims, %zu coords read "
          "back", pr.ndims, pr.ncoords);
    for (int i = 0; i < t->nnodes; i++) {
        const struct pme_node_coords *c = pme_routes_coords(&pr, t->nodes[i].id);
        CHECK(c, "no coordinates for node %u", t->nodes[i].id);
        for (int d = 0; d < t->ndims; d++)
            CHECK(c->c[d] == t->nodes[i].coord[d] && pr.dims[d] == (unsigned)t->dims[d],
                  "node %u: dimension %d read back wrong", t->nodes[i].id, d);
    }
    pme_routes_free(&pr);
}

static void check_text_form(const struct topo *t, int i, const struct route *r, int n)
{
    char *buf, err[512];
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    CHECK(routes_write(f, t, i, 0x88b6, err, sizeof(err)) == 0, "%s", err);
    fclose(f);
    char path[] = "/tmp/t_route.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len, "temporary file");
    close(fd);
    struct routefile rf;
    CHECK(routefile_read(path, &rf, err, sizeof(err)) == 0, "%s", err);
    check_places(t, path);
    unlink(path);
    CHECK(rf.node == t->nodes[i].id, "node %u read back as %u", t->nodes[i].id, rf.node);
    CHECK(rf.ethertype == 0x88b6, "ethertype read back as %#x", rf.ethertype);
    CHECK(rf.nif == t->nodes[i].nif, "%d interfaces read back", rf.nif);
    CHECK(rf.nroutes == n, "%d routes read back, %d written", rf.nroutes, n);
    for (int k = 0; k < n; k++) {
        const struct pme_route_line *l = &rf.routes[k];
        const struct route *w = route_to(r, n, l->u.node);
        CHECK(w && !strcmp(l->iface, t->nodes[i].ifs[w->ifidx].name) &&
                  !memcmp(l->mac, w->next_hop, 6) && (int)l->hops == w->hops,
              "route to %u read back differently", l->u.node);
    }
    routefile_free(&rf);
    free(buf);
}

static void check_shape(const char *form, const char *text, const struct shape *s)
{
    struct topo t;
    char err[512];
    CHECK(read_text(text, &t, err, sizeof(err)) == 0, "%s: %s", form, err);
    CHECK(t.kind == TOPO_TORUS && t.ndims == s->ndims, "%s: wrong shape", form);
    CHECK(t.nnodes == shape_nodes(s), "%s: %d nodes", form, t.nnodes);
    struct route **tables = calloc((size_t)t.nnodes, sizeof(*tables));
    for (int i = 0; i < t.nnodes; i++) {
        tables[i] = calloc((size_t)t.nnodes, sizeof(struct route));
        int n = routes_of(&t, i, tables[i], err, sizeof(err));
        CHECK(n == t.nnodes - 1, "%s: node %d has %d routes: %s", form, i, n, err);
    }
    int longest = 0;
    for (int a = 0; a < t.nnodes; a++)
        for (int b = 0; b < t.nnodes; b++)
            if (a != b) {
                walk(&t, tables, a, b);
                if (torus_distance(&t, a, b) > longest)
                    longest = torus_distance(&t, a, b);
            }
    for (int i = 0; i < t.nnodes; i++) {
        check_text_form(&t, i, tables[i], t.nnodes - 1);
        free(tables[i]);
    }
    free(tables);
    printf("ok: %s %dx%dx%d: %d nodes, every pair routed shortest, longest path %d\n", form,
           s->dims[0], s->ndims > 1 ? s->dims[1] : 1, s->ndims > 2 ? s->dims[2] : 1, t.nnodes,
           longest);
    topo_free(&t);
}

static void test_shapes(void)
{
    static const struct shape shapes[] = {
        {1, {2}},       {1, {4}},       {1, {5}},       {1, {8}},       {2, {2, 2}},
        {2, {4, 4}},    {2, {3, 5}},    {2, {6, 2}},    {3, {2, 2, 2}}, {3, {3, 3, 3}},
        {3, {4, 2, 3}},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        char *a = admin_text(&shapes[i]), *v = vcluster_text(&shapes[i]);
        check_shape("topology file", a, &shapes[i]);
        check_shape("vcluster description", v, &shapes[i]);
        free(a);
        free(v);
    }
}

/* A concrete case checked by hand: ring of 4, from node 0. */
static void test_ring4_by_hand(void)
{
    struct shape s = {1, {4}};
    char *v = vcluster_text(&s), err[256], mac[18];
    struct topo t;
    struct route r[3];
    CHECK(read_text(v, &t, err, sizeof(err)) == 0, "%s", err);
    CHECK(routes_of(&t, 0, r, err, sizeof(err)) == 3, "%s", err);
    /* to 1: xp, next hop n1's xm (interface 1), 1 hop */
    mac_of(1, 1, mac);
    CHECK(r[0].dst == 1 && !strcmp(t.nodes[0].ifs[r[0].ifidx].name, "xp") && r[0].hops == 1,
          "route to 1");
    uint8_t want[6];
    pme_route_parse_mac(mac, want);
    CHECK(!memcmp(r[0].next_hop, want, 6), "next hop to 1 is n1's xm");
    /* to 2: a tie (2 either way) goes "+": xp toward n1, 2 hops */
    CHECK(r[1].dst == 2 && !strcmp(t.nodes[0].ifs[r[1].ifidx].name, "xp") && r[1].hops == 2,
          "route to 2 should go + over 2 hops");
    /* to 3: "-" is shorter: xm, next hop n3's xp, 1 hop */
    CHECK(r[2].dst == 3 && !strcmp(t.nodes[0].ifs[r[2].ifidx].name, "xm") && r[2].hops == 1,
          "route to 3 should go -");
    mac_of(3, 0, mac);
    pme_route_parse_mac(mac, want);
    CHECK(!memcmp(r[2].next_hop, want, 6), "next hop to 3 is n3's xp");
    topo_free(&t);
    free(v);
    printf("ok: ring of 4 from node 0: 1 via xp, 2 via xp (tie goes +), 3 via xm\n");
}

static void test_switch(void)
{
    const char *tsv =
        "cluster\ts\tswitch\tswitch\t3\t2\t1500\t-\t0\t10.201.0.0/24\n"
        "node\t0\ts-n0\t10.201.0.1\t-\nnode\t1\ts-n1\t10.201.0.2\t-\nnode\t2\ts-n2\t10.201.0.3\t-\n"
        "iface\t0\teth0\t02:c9:01:00:00:00\trail0\t1\teth0\t02:c9:01:00:01:00\n"
        "iface\t0\teth0\t02:c9:01:00:00:00\trail0\t2\teth0\t02:c9:01:00:02:00\n"
        "iface\t0\teth1\t02:c9:01:00:00:01\trail1\t1\teth1\t02:c9:01:00:01:01\n"
        "iface\t0\teth1\t02:c9:01:00:00:01\trail1\t2\teth1\t02:c9:01:00:02:01\n"
        "iface\t1\teth0\t02:c9:01:00:01:00\trail0\t0\teth0\t02:c9:01:00:00:00\n"
        "iface\t1\teth0\t02:c9:01:00:01:00\trail0\t2\teth0\t02:c9:01:00:02:00\n"
        "iface\t1\teth1\t02:c9:01:00:01:01\trail1\t0\teth1\t02:c9:01:00:00:01\n"
        "iface\t1\teth1\t02:c9:01:00:01:01\trail1\t2\teth1\t02:c9:01:00:02:01\n"
        "iface\t2\teth0\t02:c9:01:00:02:00\trail0\t0\teth0\t02:c9:01:00:00:00\n"
        "iface\t2\teth0\t02:c9:01:00:02:00\trail0\t1\teth0\t02:c9:01:00:01:00\n"
        "iface\t2\teth1\t02:c9:01:00:02:01\trail1\t0\teth1\t02:c9:01:00:00:01\n"
        "iface\t2\teth1\t02:c9:01:00:02:01\trail1\t1\teth1\t02:c9:01:00:01:01\n";
    struct topo t;
    struct route r[2];
    char err[256];
    CHECK(read_text(tsv, &t, err, sizeof(err)) == 0, "%s", err);
    CHECK(t.kind == TOPO_SWITCH && t.nnodes == 3 && t.nodes[0].nif == 2 && t.nsw == 2,
          "switch topology read wrongly");
    CHECK(routes_of(&t, 1, r, err, sizeof(err)) == 2, "%s", err);
    uint8_t want[6];
    pme_route_parse_mac("02:c9:01:00:02:00", want);
    CHECK(r[1].dst == 2 && r[1].ifidx == 0 && r[1].hops == 1 && !memcmp(r[1].next_hop, want, 6),
          "switch route 1->2 goes direct on rail 0 to n2's eth0");
    topo_free(&t);
    printf("ok: switched cluster: every node one hop away on the first rail\n");
}

/* Bad topologies: each is refused, and the message names the problem. */
static void test_bad_topologies(void)
{
    static const struct { const char *text, *want; } cases[] = {
        {"node 1 a 0\n", "node before the topology line"},
        {"topology torus 4x1\n", "bad torus size"},
        {"topology ring 3\ntopology ring 3\n", "a second topology line"},
        {"topology mesh 3\n", "unknown topology 'mesh'"},
        {"topology ring 2\nnode 0 a 0\nnode 0 b 1\n", "node 0 is listed twice"},
        {"topology ring 2\nnode 0 a 2\n", "bad coordinates '2'"},
        {"topology ring 2\nnode 0 a 0\nnode 1 b 0\n", "have the same coordinates"},
        {"topology ring 2\nnode 0 a\n", "needs its coordinates"},
        {"topology ring 2\nnode 0 a 0\nnode 1 b 1\niface 0 p 02:00:00:00:00\n", "bad MAC"},
        {"topology ring 2\nnode 0 a 0\nnode 1 b 1\nfoo\n", "expected one of"},
        {"topology ring 3\nnode 0 a 0\nnode 1 b 1\n", "every position needs a node"},
        {"topology ring 2\nnode 0 a 0\nnode 1 b 1\niface 0 p 02:00:00:00:00:01\n"
         "link 0:p 1:m\n", "test:5: node 1 has no interface m"},
        {"topology ring 3\nnode 0 a 0\nnode 1 b 1\nnode 2 c 2\n"
         "iface 0 p 02:00:00:00:00:01\niface 2 m 02:00:00:00:00:02\nlink 0:p 2:m\n",
         "does not go one step \"+\""},
        {"topology ring 2\nnode 0 a 0\nnode 1 b 1\n", "node 0 has 0 links going - in dimension 0"},
        {"topology ring 2\nnode 0 a 0\nnode 1 b 1\niface 0 p 02:00:00:00:00:01\n"
         "iface 1 m 02:00:00:00:00:02\nlink 0:p switch:s\n", "a link to a switch in a ring"},
        {"topology switch\nnode 0 a\niface 0 e 02:00:00:00:00:01\nlink 0:e 0:e\n",
         "a link between two nodes in a switched topology"},
        {"cluster\tx\ttorus\ttorus:2x2\nbogus\n", "not a line of a virtual cluster's description"},
        {"# only a comment\n", "no topology line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct topo t;
        char err[512] = "";
        CHECK(read_text(cases[i].text, &t, err, sizeof(err)) != 0, "accepted bad topology %zu",
              i);
        CHECK(strstr(err, cases[i].want), "topology %zu: message \"%s\" lacks \"%s\"", i, err,
              cases[i].want);
    }
    /* two switched nodes that share no switch have no route to each other */
    struct topo t;
    struct route r[1];
    char err[256];
    const char *apart = "topology switch\nnode 0 a\nnode 1 b\niface 0 e 02:00:00:00:00:01\n"
                        "iface 1 e 02:00:00:00:00:02\nlink 0:e switch:one\nlink 1:e switch:two\n";
    CHECK(read_text(apart, &t, err, sizeof(err)) == 0, "%s", err);
    CHECK(routes_of(&t, 0, r, err, sizeof(err)) < 0 && strstr(err, "shares no switch"),
          "unroutable switch topology: %s", err);
    topo_free(&t);
    printf("ok: %zu bad topologies refused with messages naming the problem\n",
           sizeof(cases) / sizeof(cases[0]) + 1);
}

static void test_bad_route_files(void)
{
    static const struct { const char *text, *want; } cases[] = {
        {"node 1\n", ":1: the first line must be \"pme-routes 1\""},
        {"pme-routes 2\n", "reads \"pme-routes 1\""},
        {"pme-routes 1\nnode 1\nroute 2 eth0 02:00:00:00:00:01 1\n", ":3: a route on an interface"},
        {"pme-routes 1\nnode 1\niface eth0 02:00:00:00:00:01\n"
         "route 2 eth0 02:00:00:00:00:01 0\n", ":4: not a line of the route format"},
        {"pme-routes 1\nnode 1\niface eth0 02:00:00:00:00:01\n"
         "route 2 eth0 02:00:00:00:00:01 1\nroute 2 eth0 02:00:00:00:00:02 1\n",
         ":5: a second route to the same node"},
        {"pme-routes 1\niface eth0 02:00:00:00:00:01\n", "no \"node ID\" line"},
        {"pme-routes 1\nnode 4294967295\n", ":2: not a line"},
        {"pme-routes 1\nnode 1\nethertype 0x0500\n", ":3: not a line"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[] = "/tmp/t_route.XXXXXX";
        int fd = mkstemp(path);
        size_t len = strlen(cases[i].text);
        CHECK(fd >= 0 && write(fd, cases[i].text, len) == (ssize_t)len, "temporary file");
        close(fd);
        struct routefile rf;
        err[0] = 0;
        int rc = routefile_read(path, &rf, err, sizeof(err));
        unlink(path);
        CHECK(rc != 0, "accepted bad route file %zu", i);
        CHECK(strstr(err, cases[i].want), "route file %zu: message \"%s\" lacks \"%s\"", i, err,
              cases[i].want);
    }
    struct routefile rf;
    CHECK(routefile_read("/nonexistent/routes", &rf, err, sizeof(err)) != 0 &&
              strstr(err, "pme_route install"),
          "a missing route file says how to install one: %s", err);
    printf("ok: %zu bad route files refused with messages naming the line\n",
           sizeof(cases) / sizeof(cases[0]) + 1);
}

static void test_route_path(void)
{
    char buf[256];
    setenv(PME_ROUTE_ENV, "/somewhere/routes", 1);
    CHECK(pme_route_path(buf, sizeof(buf)) == 0 && !strcmp(buf, "/somewhere/routes"),
          "PME_ROUTES is obeyed: %s", buf);
    unsetenv(PME_ROUTE_ENV);
    char want[64];
    FILE *f = popen("stat -L -c %i /proc/self/ns/net", "r");
    CHECK(f && fgets(want, sizeof(want), f), "stat of /proc/self/ns/net");
    pclose(f);
    want[strcspn(want, "\n")] = 0;
    CHECK(pme_route_path(buf, sizeof(buf)) == 0, "path");
    char expect[128];
    snprintf(expect, sizeof(expect), "/run/pme/routes.%s", want);
    CHECK(!strcmp(buf, expect), "route file is %s, expected %s", buf, expect);
    CHECK(pme_route_path(buf, 8) != 0, "a short buffer is refused");
    printf("ok: the route file is %s (keyed by the network namespace), or $PME_ROUTES\n", expect);
}

int main(void)
{
    test_ring4_by_hand();
    test_shapes();
    test_switch();
    test_bad_topologies();
    test_bad_route_files();
    test_route_path();
    return 0;
}
