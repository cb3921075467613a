// SPDX-License-Identifier: BSD-3-Clause
/*
 * node_routes.c - reading this node's route file (pme_route.h's text form) for an endpoint.
 * The file is written by pme_route, once per boot; a mistake in it would send frames
 * nowhere, so anything it does not understand fails the open with the line named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node_routes.h"
#include "pme.h"
#include "pme_route.h"

static int by_node(const void *a, const void *b)
{
    uint32_t x = ((const struct pme_route_hop *)a)->node;
    uint32_t y = ((const struct pme_route_hop *)b)->node;
    return x < y ? -1 : x > y;
}

static int coords_by_node(const void *a, const void *b)
{
    uint32_t x = ((const struct pme_node_coords *)a)->node;
    uint32_t y = ((const struct pme_node_coords *)b)->node;
    return x < y ? -1 : x > y;
}

/* Room for one more element of size sz in *v (n used, *cap allocated); 0 or -1. */
static int grow(void **v, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, c * sz);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* A "topology" or "coords" line (pme_route.h); 0, or -1 with err saying what is wrong. */
static int take_place(struct pme_routes *r, const struct pme_route_line *l, size_t *cap,
                      char *err, size_t errlen)
{
    if (l->kind == PME_RL_TOPOLOGY) {
        if (r->ndims >= 0) {
            snprintf(err, errlen, "a second topology line");
            return -1;
        }
        r->ndims = (int)l->ndims;
        memcpy(r->dims, l->num, sizeof(r->dims));
        return 0;
    }
    if (r->ndims <= 0 || l->ndims != (unsigned)r->ndims) {
        snprintf(err, errlen, "coordinates of node %u without a ring or torus of %u "
                 "dimensions on a topology line before them", l->u.node, l->ndims);
        return -1;
    }
    for (unsigned d = 0; d < l->ndims; d++) {
        if (l->num[d] >= r->dims[d]) {
            snprintf(err, errlen, "node %u's coordinate %u is outside the topology (size %u)",
                     l->u.node, l->num[d], r->dims[d]);
            return -1;
        }
    }
    if (grow((void **)&r->coords, r->ncoords, cap, sizeof(*r->coords))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct pme_node_coords *c = &r->coords[r->ncoords++];
    memset(c, 0, sizeof(*c));
    c->node = l->u.node;
    for (unsigned d = 0; d < l->ndims; d++)
        c->c[d] = (uint16_t)l->num[d];
    return 0;
}

static int iface_index(const struct pme_routes *r, const char *name)
{
    for (unsigned i = 0; i < r->niface; i++)
        if (!strcmp(r->iface[i], name))
            return (int)i;
    return -1;
}

/* One parsed line into *r; 0, or -1 with err saying what is wrong with it. cap[0] and
 * cap[1]: room in r->v and r->coords. */
static int take_line(struct pme_routes *r, const struct pme_route_line *l, size_t cap[2],
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
        if (grow((void **)&r->v, r->n, &cap[0], sizeof(*r->v))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        struct pme_route_hop *h = &r->v[r->n++];
        h->node = l->u.node;
        h->iface = h->file_iface = (uint8_t)i;
        h->hops = (uint8_t)l->hops;
        memcpy(h->mac, l->mac, 6);
        return 0;
    }
    case PME_RL_TOPOLOGY:
    case PME_RL_COORDS:
        return take_place(r, l, &cap[1], err, errlen);
    default:
        snprintf(err, errlen, "not a line of the route format");
        return -1;
    }
}

/* The route file, if it may be trusted: it decides where frames go (a next hop could
 * be anybody's MAC) and which node we claim to be, so it must be a regular file of root
 * or ours that nobody else may write. NULL with errno ENOENT when there is none (no
 * routes: a switched network), else NULL with err set. */
static FILE *open_route_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (e != ENOENT)
            snprintf(err, errlen, "cannot read the route file %s: %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        errno = e;
        return NULL;
    }
    const char *why = !S_ISREG(st.st_mode)                       ? "is not a regular file"
                      : st.st_uid != 0 && st.st_uid != geteuid() ? "belongs to another user"
                      : st.st_mode & (S_IWGRP | S_IWOTH)         ? "may be written by others"
                                                                 : NULL;
    FILE *f = why ? NULL : fdopen(fd, "r");
    if (!f) {
        if (why)
            snprintf(err, errlen, "route file %s %s (owner uid %u, mode %03o): a route file "
                     "decides where frames go, so only root or you may write it (pme_route "
                     "install writes it so)", path, why, (unsigned)st.st_uid,
                     (unsigned)(st.st_mode & 0777));
        else
            snprintf(err, errlen, "cannot read the route file %s: %s", path, strerror(errno));
        close(fd);
        errno = EPERM;
    }
    return f;
}

int pme_routes_load(struct pme_routes *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->ndims = -1;
    if (pme_route_path(r->path, sizeof(r->path))) {
        snprintf(err, errlen, "the route file's path is too long");
        return -1;
    }
    FILE *f = open_route_file(r->path, err, errlen);
    if (!f)
        return errno == ENOENT ? 0 : -1;
    char line[512], why[160];
    size_t cap[2] = {0, 0};
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
        rc = take_line(r, &l, cap, why, sizeof(why));
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
    /* qsort wants an array even for nothing to sort, and a file without routes or
     * coordinates has none. */
    if (r->n > 1)
        qsort(r->v, r->n, sizeof(*r->v), by_node);
    for (size_t i = 1; i < r->n; i++) {
        if (r->v[i].node == r->v[i - 1].node) {
            snprintf(err, errlen, "route file %s has two routes to node %u (reinstall the "
                     "routes: pme_route install TOPOLOGY)", r->path, r->v[i].node);
            pme_routes_free(r);
            return -1;
        }
    }
    if (r->ncoords > 1)
        qsort(r->coords, r->ncoords, sizeof(*r->coords), coords_by_node);
    for (size_t i = 1; i < r->ncoords; i++) {
        if (r->coords[i].node == r->coords[i - 1].node) {
            snprintf(err, errlen, "route file %s gives node %u's coordinates twice (reinstall "
                     "the routes: pme_route install TOPOLOGY)", r->path, r->coords[i].node);
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
    free(r->coords);
    r->coords = NULL;
    r->ncoords = 0;
}

const struct pme_route_hop *pme_routes_find(const struct pme_routes *r, uint32_t node)
{
    struct pme_route_hop key = {.node = node};
    return r->n ? bsearch(&key, r->v, r->n, sizeof(key), by_node) : NULL;
}

const struct pme_node_coords *pme_routes_coords(const struct pme_routes *r, uint32_t node)
{
    struct pme_node_coords key = {.node = node};
    return r->ncoords ? bsearch(&key, r->coords, r->ncoords, sizeof(key), coords_by_node)
                      : NULL;
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
