// SPDX-License-Identifier: BSD-3-Clause
/*
 * topology.c - read a network of PME nodes (see topology.h for the two forms) and
 * check that it is one pme_route can route: links are collected first and joined up
 * at the end, so the order of the lines does not matter.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pme_route.h"
#include "topology.h"

struct pending_link {
    int line;
    uint32_t a, b;          /* node ids */
    char aif[16], bif[16];  /* interface names (bif empty: a switch link) */
    char sw[32];
};

struct reader {
    const char *what;
    int line;
    char *err;
    size_t errlen;
    int vcluster;           /* the input is vcluster's description */
    int have_kind;
    struct pending_link *links;
    int nlinks, caplinks;
};

static int fail(struct reader *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r->line)
        snprintf(r->err, r->errlen, "%s:%d: %s", r->what, r->line, msg);
    else
        snprintf(r->err, r->errlen, "%s: %s", r->what, msg);
    return -1;
}

int topo_find_id(const struct topo *t, uint32_t id)
{
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].id == id)
            return i;
    return -1;
}

int topo_find_name(const struct topo *t, const char *name)
{
    for (int i = 0; i < t->nnodes; i++)
        if (!strcmp(t->nodes[i].name, name))
            return i;
    return -1;
}

static int find_if(const struct topo_node *n, const char *name)
{
    for (int i = 0; i < n->nif; i++)
        if (!strcmp(n->ifs[i].name, name))
            return i;
    return -1;
}

void topo_free(struct topo *t)
{
    free(t->nodes);
    free(t->sw);
    memset(t, 0, sizeof(*t));
}

/* ---------------------------------------------------------------- the items */

/* "torus 4x4", "ring 8", "switch"; vcluster spells them "torus:4x4", "ring:8". */
static int set_kind(struct reader *r, struct topo *t, const char *kind, const char *dims)
{
    if (r->have_kind)
        return fail(r, "a second topology line");
    r->have_kind = 1;
    if (!strcmp(kind, "switch")) {
        if (dims && *dims)
            return fail(r, "a switch has no dimensions ('%s')", dims);
        t->kind = TOPO_SWITCH;
        return 0;
    }
    int ring = !strcmp(kind, "ring");
    if (!ring && strcmp(kind, "torus"))
        return fail(r, "unknown topology '%s': expected torus AxB[xC], ring N or switch", kind);
    t->kind = TOPO_TORUS;
    const char *p = dims ? dims : "";
    long total = 1;
    for (t->ndims = 0; *p; t->ndims++) {
        char *end;
        long d = strtol(p, &end, 10);
        if (end == p || d < 2 || d > TOPO_MAX_NODES || t->ndims == TOPO_MAX_DIMS ||
            (*end && *end != 'x'))
            return fail(r, "bad %s size '%s': %s", kind, dims,
                        ring ? "a number of nodes, at least 2"
                             : "2 or 3 sizes of at least 2, e.g. 4x4 or 2x2x2");
        t->dims[t->ndims] = (int)d;
        total *= d;
        p = *end ? end + 1 : end;
    }
    if (t->ndims == 0 || (ring && t->ndims != 1) || (!ring && t->ndims < 2))
        return fail(r, "bad %s size '%s'", kind, dims ? dims : "");
    if (total > TOPO_MAX_NODES)
        return fail(r, "%ld nodes; at most %d", total, TOPO_MAX_NODES);
    return 0;
}

static int parse_coords(struct reader *r, const struct topo *t, const char *s, int *c)
{
    const char *p = s;
    int n = 0;
    while (*p && n < TOPO_MAX_DIMS) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= t->dims[n] || (*end && *end != ','))
            break;
        c[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (*p || n != t->ndims)
        return fail(r, "bad coordinates '%s': %d comma-separated numbers, each below its "
                    "dimension's size", s, t->ndims);
    return 0;
}

static int add_node(struct reader *r, struct topo *t, const char *id_s, const char *name,
                    const char *coords)
{
    if (!r->have_kind)
        return fail(r, "node before the topology line");
    uint32_t id;
    if (pme_route_parse_u32(id_s, &id, 10) || id == PME_NODE_ANY)
        return fail(r, "bad node id '%s': a number below 4294967295", id_s);
    if (topo_find_id(t, id) >= 0)
        return fail(r, "node %u is listed twice", id);
    if (strlen(name) >= sizeof(t->nodes[0].name))
        return fail(r, "node name '%s' is too long", name);
    if (t->nnodes == TOPO_MAX_NODES)
        return fail(r, "more than %d nodes", TOPO_MAX_NODES);
    if (t->nnodes == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        struct topo_node *n = realloc(t->nodes, (size_t)cap * sizeof(*n));
        if (!n)
            return fail(r, "out of memory");
        t->nodes = n;
        t->cap = cap;
    }
    struct topo_node *n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof(*n));
    n->id = id;
    strcpy(n->name, name);
    if (t->kind == TOPO_TORUS) {
        if (!coords || !*coords || !strcmp(coords, "-"))
            return fail(r, "node %u needs its coordinates on a ring or torus", id);
        if (parse_coords(r, t, coords, n->coord))
            return -1;
        for (int i = 0; i < t->nnodes; i++)
            if (!memcmp(t->nodes[i].coord, n->coord, sizeof(n->coord)))
                return fail(r, "nodes %u and %u have the same coordinates %s", t->nodes[i].id,
                            id, coords);
    }
    t->nnodes++;
    return 0;
}

/* add_iface: a data interface; vcluster's description repeats it once per peer. */
static int add_iface(struct reader *r, struct topo *t, const char *id_s, const char *name,
                     const char *mac_s)
{
    uint32_t id;
    int ni = pme_route_parse_u32(id_s, &id, 10) ? -1 : topo_find_id(t, id);
    if (ni < 0)
        return fail(r, "interface of an unknown node '%s' (list the node first)", id_s);
    struct topo_node *n = &t->nodes[ni];
    uint8_t mac[6];
    if (pme_route_parse_mac(mac_s, mac))
        return fail(r, "bad MAC '%s': six hexadecimal bytes, e.g. 02:00:00:00:00:01", mac_s);
    int i = find_if(n, name);
    if (i >= 0) {
        if (r->vcluster && !memcmp(n->ifs[i].mac, mac, 6))
            return 0;
        return fail(r, "node %u has two interfaces called %s", id, name);
    }
    if (strlen(name) >= sizeof(n->ifs[0].name))
        return fail(r, "interface name '%s' is too long (at most 15 characters)", name);
    if (n->nif == TOPO_MAX_IFS)
        return fail(r, "node %u has more than %d data interfaces", id, TOPO_MAX_IFS);
    struct topo_if *f = &n->ifs[n->nif++];
    memset(f, 0, sizeof(*f));
    strcpy(f->name, name);
    memcpy(f->mac, mac, 6);
    f->peer = f->peer_if = f->sw = -1;
    return 0;
}

/* "3:xp" -> node id 3, interface xp; "switch:r0" -> *is_switch. */
static int parse_end(struct reader *r, const char *s, uint32_t *id, char *ifname, int *is_switch)
{
    const char *colon = strchr(s, ':');
    size_t len = colon ? strlen(colon + 1) : 0;
    char num[16];
    *is_switch = 0;
    if (!colon || !len || len >= 32 || (size_t)(colon - s) >= sizeof(num))
        return fail(r, "bad link end '%s': NODE:IFACE or switch:NAME", s);
    memcpy(num, s, (size_t)(colon - s));
    num[colon - s] = 0;
    if (!strcmp(num, "switch")) {
        *is_switch = 1;
    } else if (pme_route_parse_u32(num, id, 10) || len >= 16) {
        return fail(r, "bad link end '%s': NODE:IFACE or switch:NAME", s);
    }
    strcpy(ifname, colon + 1);
    return 0;
}

static int add_link(struct reader *r, const char *a, const char *b)
{
    if (r->nlinks == r->caplinks) {
        int cap = r->caplinks ? 2 * r->caplinks : 64;
        struct pending_link *l = realloc(r->links, (size_t)cap * sizeof(*l));
        if (!l)
            return fail(r, "out of memory");
        r->links = l;
        r->caplinks = cap;
    }
    struct pending_link *l = &r->links[r->nlinks];
    memset(l, 0, sizeof(*l));
    l->line = r->line;
    int a_sw, b_sw;
    char bname[32];
    if (parse_end(r, a, &l->a, l->aif, &a_sw) || parse_end(r, b, &l->b, bname, &b_sw))
        return -1;
    if (a_sw)
        return fail(r, "a link starts at a node's interface (write the switch second)");
    if (b_sw)
        strcpy(l->sw, bname);
    else
        strcpy(l->bif, bname);
    r->nlinks++;
    return 0;
}

/* ---------------------------------------------------------------- joining links */

static int switch_index(struct topo *t, const char *name)
{
    for (int i = 0; i < t->nsw; i++)
        if (!strcmp(t->sw[i], name))
            return i;
    char (*sw)[32] = realloc(t->sw, (size_t)(t->nsw + 1) * sizeof(*sw));
    if (!sw)
        return -1;
    t->sw = sw;
    strcpy(t->sw[t->nsw], name);
    return t->nsw++;
}

static int resolve_end(struct reader *r, struct topo *t, uint32_t id, const char *ifname,
                       int *node, int *ifidx)
{
    *node = topo_find_id(t, id);
    if (*node < 0)
        return fail(r, "link to an unknown node %u", id);
    *ifidx = find_if(&t->nodes[*node], ifname);
    if (*ifidx < 0)
        return fail(r, "node %u has no interface %s (add an iface line)", id, ifname);
    const struct topo_if *f = &t->nodes[*node].ifs[*ifidx];
    if (f->peer >= 0 || f->sw >= 0)
        return fail(r, "interface %s of node %u is in two links", ifname, id);
    return 0;
}

static int join_torus(struct reader *r, struct topo *t, const struct pending_link *l)
{
    int a, ai, b, bi;
    if (!l->bif[0])
        return fail(r, "a link to a switch in a %s", t->ndims == 1 ? "ring" : "torus");
    if (resolve_end(r, t, l->a, l->aif, &a, &ai) || resolve_end(r, t, l->b, l->bif, &b, &bi))
        return -1;
    const int *ca = t->nodes[a].coord, *cb = t->nodes[b].coord;
    int dim = -1, other = 0;
    for (int d = 0; d < t->ndims; d++) {
        if (ca[d] == cb[d])
            continue;
        if ((ca[d] + 1) % t->dims[d] == cb[d] && dim < 0)
            dim = d;
        else
            other = 1;
    }
    if (dim < 0 || other)
        return fail(r, "link %u:%s %u:%s does not go one step \"+\" in one dimension (its "
                    "first end must be the one whose coordinate is one less)",
                    l->a, l->aif, l->b, l->bif);
    struct topo_if *fa = &t->nodes[a].ifs[ai], *fb = &t->nodes[b].ifs[bi];
    fa->peer = b, fa->peer_if = bi, fa->dim = dim, fa->dir = 1;
    fb->peer = a, fb->peer_if = ai, fb->dim = dim, fb->dir = -1;
    return 0;
}

static int join_switch(struct reader *r, struct topo *t, const struct pending_link *l)
{
    int a, ai;
    if (!l->sw[0])
        return fail(r, "a link between two nodes in a switched topology (write NODE:IFACE "
                    "switch:NAME)");
    if (resolve_end(r, t, l->a, l->aif, &a, &ai))
        return -1;
    int s = switch_index(t, l->sw);
    if (s < 0)
        return fail(r, "out of memory");
    t->nodes[a].ifs[ai].sw = s;
    return 0;
}

/* finish: join the links and check that the whole is routable. */
static int finish(struct reader *r, struct topo *t)
{
    r->line = 0;
    if (!r->have_kind)
        return fail(r, "no topology line (and not a virtual cluster's description)");
    if (t->nnodes == 0)
        return fail(r, "no nodes");
    for (int i = 0; i < r->nlinks; i++) {
        r->line = r->links[i].line;
        if ((t->kind == TOPO_TORUS ? join_torus : join_switch)(r, t, &r->links[i]))
            return -1;
    }
    r->line = 0;
    if (t->kind == TOPO_SWITCH)
        return 0;
    int want = 1;
    for (int d = 0; d < t->ndims; d++)
        want *= t->dims[d];
    if (t->nnodes != want)
        return fail(r, "%d nodes for a %s of %d positions: every position needs a node",
                    t->nnodes, t->ndims == 1 ? "ring" : "torus", want);
    for (int i = 0; i < t->nnodes; i++) {
        const struct topo_node *n = &t->nodes[i];
        for (int d = 0; d < t->ndims; d++)
            for (int dir = -1; dir <= 1; dir += 2) {
                int have = 0;
                for (int k = 0; k < n->nif; k++)
                    have += n->ifs[k].peer >= 0 && n->ifs[k].dim == d && n->ifs[k].dir == dir;
                if (have != 1)
                    return fail(r, "node %u has %d links going %c in dimension %d (needs "
                                "exactly one)", n->id, have, dir > 0 ? '+' : '-', d);
            }
    }
    return 0;
}

/* ---------------------------------------------------------------- lines */

static int split(char *line, char **w, int max, const char *seps)
{
    int n = 0;
    char *save = NULL;
    line[strcspn(line, "\r\n")] = 0;
    for (char *t = strtok_r(line, seps, &save); t && n < max; t = strtok_r(NULL, seps, &save))
        w[n++] = t;
    return n;
}

/* One line of the administrator's form. */
static int admin_line(struct reader *r, struct topo *t, char *line)
{
    char *w[6];
    line[strcspn(line, "#")] = 0;
    int n = split(line, w, 6, " \t");
    if (n == 0)
        return 0;
    if (!strcmp(w[0], "topology") && (n == 2 || n == 3))
        return set_kind(r, t, w[1], n == 3 ? w[2] : NULL);
    if (!strcmp(w[0], "node") && (n == 3 || n == 4))
        return add_node(r, t, w[1], w[2], n == 4 ? w[3] : NULL);
    if (!strcmp(w[0], "iface") && n == 4)
        return add_iface(r, t, w[1], w[2], w[3]);
    if (!strcmp(w[0], "link") && n == 3)
        return add_link(r, w[1], w[2]);
    return fail(r, "expected one of: topology KIND [SIZES], node ID NAME [COORDS], "
                "iface NODE NAME MAC, link NODE:IFACE NODE:IFACE|switch:NAME");
}

/* One line of maint/vcluster's description (fields separated by one tab). */
static int vcluster_line(struct reader *r, struct topo *t, char *line)
{
    char *w[12];
    if (line[0] == '#')
        return 0;
    int n = split(line, w, 12, "\t");
    if (n == 0)
        return 0;
    if (!strcmp(w[0], "cluster") && n >= 4) {
        char kind[16];
        const char *colon = strchr(w[3], ':');
        snprintf(kind, sizeof(kind), "%.*s", colon ? (int)(colon - w[3]) : (int)strlen(w[3]),
                 w[3]);
        return set_kind(r, t, kind, colon ? colon + 1 : NULL);
    }
    if (!strcmp(w[0], "node") && n >= 5)
        return add_node(r, t, w[1], w[2], w[4]);
    if (!strcmp(w[0], "iface") && n >= 8) {
        if (add_iface(r, t, w[1], w[2], w[3]))
            return -1;
        char a[48], b[48];
        size_t len = strlen(w[2]);
        if (t->kind == TOPO_SWITCH) {
            snprintf(a, sizeof(a), "%s:%s", w[1], w[2]);
            snprintf(b, sizeof(b), "switch:%s", w[4]);
            /* once per interface, though the line repeats per peer */
            for (int i = 0; i < r->nlinks; i++)
                if (!strcmp(r->links[i].aif, w[2]) && r->links[i].a == strtoul(w[1], NULL, 10))
                    return 0;
        } else if (len == 2 && w[2][1] == 'p') { /* xp, yp, zp: the "+" end */
            snprintf(a, sizeof(a), "%s:%s", w[1], w[2]);
            snprintf(b, sizeof(b), "%s:%s", w[5], w[6]);
        } else {
            return 0;
        }
        return add_link(r, a, b);
    }
    return fail(r, "not a line of a virtual cluster's description (cluster, node or iface)");
}

int topo_read(FILE *f, const char *what, struct topo *t, char *err, size_t errlen)
{
    struct reader r = {.what = what, .err = err, .errlen = errlen};
    char line[1024];
    int rc = 0, decided = 0;
    memset(t, 0, sizeof(*t));
    while (!rc && fgets(line, sizeof(line), f)) {
        r.line++;
        if (!decided) {
            char probe[16];
            if (sscanf(line, "%15s", probe) != 1 || probe[0] == '#')
                continue;
            r.vcluster = !strncmp(line, "cluster\t", 8);
            decided = 1;
        }
        rc = r.vcluster ? vcluster_line(&r, t, line) : admin_line(&r, t, line);
    }
    if (!rc && ferror(f))
        rc = fail(&r, "read error: %s", strerror(errno));
    if (!rc)
        rc = finish(&r, t);
    free(r.links);
    if (rc)
        topo_free(t);
    return rc;
}
