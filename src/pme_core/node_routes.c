/*
 * node_routes.c - reading this node's route file (pme_route.h's text form) for an endpoint.
 * The file is written by pme_route, once per boot; a mistake in it would send frames
 * nowhere, so anything it does not understand fails the open with the line named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_routes.h"
#include "pme.h"
#include "pme_route.h"

static int by_node(const void *a, const void *b)
{
    uint32_t x = ((const struct pme_route_hop *)a)->node;
    uint32_t y = ((const struct pme_route_hop *)b)->node;
    return x < y ? -1 : x > y;
}

static int iface_index(const struct pme_routes *r, const char *name)
{
    for (unsigned i = 0; i < r->niface; i++)
        if (!strcmp(r->iface[i], name))
            return (int)i;
    return -1;
}

/* One parsed line into *r; 0, or -1 with err saying what is wrong with it. */
static int take_line(struct pme_routes *r, const struct pme_route_line *l, size_t *cap,
                     char *err, size_t errlen)
{
    switch (l->kind) {
    case PME_RL_BLANK:
    case PME_RL_ETHERTYPE:
        return 0;
    case PME_RL_FORMAT:
        if (l->u.version != PME_ROUTE_FORMAT) {
            snprintf(err, errlen, "format version %u (this build reads %d)", l->u.version,
                     PME_ROUTE_FORMAT);
            return -1;
        }
        return 0;
    case PME_RL_NODE:
        r->node = l->u.node;
        return 0;
    case PME_RL_IFACE:
        if (r->niface == PME_MAX_DEVS) {
            snprintf(err, errlen, "more than %d interfaces", PME_MAX_DEVS);
            return -1;
        }
        snprintf(r->iface[r->niface++], PME_IFNAME_LEN, "%s", l->iface);
        return 0;
    case PME_RL_ROUTE: {
        int i = iface_index(r, l->iface);
        if (i < 0) {
            snprintf(err, errlen, "route to node %u over %s, which no iface line names",
                     l->u.node, l->iface);
            return -1;
        }
        if (r->n == *cap) {
            size_t c = *cap ? *cap * 2 : 64;
            struct pme_route_hop *v = realloc(r->v, c * sizeof(*v));
            if (!v) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            r->v = v;
            *cap = c;
        }
        struct pme_route_hop *h = &r->v[r->n++];
        h->node = l->u.node;
        h->iface = h->file_iface = (uint8_t)i;
        h->hops = (uint8_t)l->hops;
        memcpy(h->mac, l->mac, 6);
        return 0;
    }
    default:
        snprintf(err, errlen, "not a line of the route format");
        return -1;
    }
}

int pme_routes_load(struct pme_routes *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    if (pme_route_path(r->path, sizeof(r->path))) {
        snprintf(err, errlen, "the route file's path is too long");
        return -1;
    }
    FILE *f = fopen(r->path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read the route file %s: %s", r->path, strerror(errno));
        return -1;
    }
    char line[512], why[160];
    size_t cap = 0;
    unsigned lineno = 0;
    bool have_format = false, have_node = false;
    int rc = 0;
    while (!rc && fgets(line, sizeof(line), f)) {
        struct pme_route_line l;
        lineno++;
        pme_route_parse_line(line, &l);
        if (!have_format && l.kind != PME_RL_BLANK && l.kind != PME_RL_FORMAT) {
            snprintf(why, sizeof(why), "does not begin with \"pme-routes %d\"", PME_ROUTE_FORMAT);
            rc = -1;
            break;
        }
        have_format |= l.kind == PME_RL_FORMAT;
        have_node |= l.kind == PME_RL_NODE;
        rc = take_line(r, &l, &cap, why, sizeof(why));
    }
    fclose(f);
    if (!rc && !have_node) {
        snprintf(why, sizeof(why), "has no \"node\" line");
        rc = -1;
        lineno = 0;
    }
    if (rc) {
        if (lineno)
            snprintf(err, errlen, "route file %s, line %u: %s (reinstall the routes: "
                     "pme_route install TOPOLOGY)", r->path, lineno, why);
        else
            snprintf(err, errlen, "route file %s %s (reinstall the routes: pme_route "
                     "install TOPOLOGY)", r->path, why);
        pme_routes_free(r);
        return -1;
    }
    qsort(r->v, r->n, sizeof(*r->v), by_node);
    for (size_t i = 1; i < r->n; i++) {
        if (r->v[i].node == r->v[i - 1].node) {
            snprintf(err, errlen, "route file %s has two routes to node %u (reinstall the "
                     "routes: pme_route install TOPOLOGY)", r->path, r->v[i].node);
            pme_routes_free(r);
            return -1;
        }
    }
    r->present = true;
    return 0;
}

void pme_routes_free(struct pme_routes *r)
{
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

const struct pme_route_hop *pme_routes_find(const struct pme_routes *r, uint32_t node)
{
    struct pme_route_hop key = {.node = node};
    return r->n ? bsearch(&key, r->v, r->n, sizeof(key), by_node) : NULL;
}

int pme_route_ifaces(char *buf, size_t len, char *err, size_t errlen)
{
    struct pme_routes r;
    if (pme_routes_load(&r, err, errlen))
        return PME_ERR_INVAL;
    pme_iflist_join(r.iface, r.niface, buf, len);
    pme_routes_free(&r);
    return r.present;
}
