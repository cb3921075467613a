// SPDX-License-Identifier: BSD-3-Clause
/*
 * routefile.c - see routefile.h. Every line must parse; a route must leave on one of
 * the listed interfaces and name each destination once, and the file must say which
 * node it belongs to.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routefile.h"

int routefile_iface(const struct routefile *rf, const char *name)
{
    for (int i = 0; i < rf->nif; i++)
        if (!strcmp(rf->ifs[i].name, name))
            return i;
    return -1;
}

void routefile_free(struct routefile *rf)
{
    free(rf->routes);
    memset(rf, 0, sizeof(*rf));
}

static int fail_with(const char **why, const char *what)
{
    *why = what;
    return -1;
}

static int add_line(struct routefile *rf, const struct pme_route_line *l, int *cap,
                    const char **why)
{
    switch (l->kind) {
    case PME_RL_IFACE:
        if (routefile_iface(rf, l->iface) >= 0)
            return fail_with(why, "an interface listed twice");
        if (rf->nif == ROUTEFILE_MAX_IFS)
            return fail_with(why, "more than 8 interfaces");
        snprintf(rf->ifs[rf->nif].name, sizeof(rf->ifs[0].name), "%s", l->iface);
        memcpy(rf->ifs[rf->nif++].mac, l->mac, 6);
        return 0;
    case PME_RL_ROUTE:
        if (routefile_iface(rf, l->iface) < 0)
            return fail_with(why, "a route on an interface no iface line lists");
        for (int i = 0; i < rf->nroutes; i++)
            if (rf->routes[i].u.node == l->u.node)
                return fail_with(why, "a second route to the same node");
        if (rf->nroutes == *cap) {
            int c = *cap ? 2 * *cap : 64;
            struct pme_route_line *r = realloc(rf->routes, (size_t)c * sizeof(*r));
            if (!r)
                return fail_with(why, "out of memory");
            rf->routes = r;
            *cap = c;
        }
        rf->routes[rf->nroutes++] = *l;
        return 0;
    case PME_RL_NODE:
        rf->node = l->u.node;
        return 0;
    case PME_RL_ETHERTYPE:
        rf->ethertype = l->u.ethertype;
        return 0;
    default:
        return 0;
    }
}

int routefile_read(const char *path, struct routefile *rf, char *err, size_t errlen)
{
    memset(rf, 0, sizeof(*rf));
    rf->ethertype = 0x88B5;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s%s", path, strerror(errno),
                 errno == ENOENT ? " (no routes installed here: pme_route install ...)" : "");
        return -1;
    }
    char line[512];
    int lineno = 0, cap = 0, have_node = 0, have_format = 0, rc = 0;
    while (!rc && fgets(line, sizeof(line), f)) {
        struct pme_route_line l;
        const char *why = NULL;
        lineno++;
        int kind = pme_route_parse_line(line, &l);
        if (kind == PME_RL_BAD)
            why = "not a line of the route format (pme-routes, node, ethertype, iface, route, "
                  "topology, coords)";
        else if (kind != PME_RL_BLANK && !have_format && kind != PME_RL_FORMAT)
            why = "the first line must be \"pme-routes 1\"";
        else if (kind == PME_RL_FORMAT && (have_format || l.u.version != PME_ROUTE_FORMAT))
            why = "this program reads \"pme-routes 1\" once, at the top";
        else
            add_line(rf, &l, &cap, &why);
        have_format |= kind == PME_RL_FORMAT;
        have_node |= kind == PME_RL_NODE;
        if (why) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            rc = -1;
        }
    }
    fclose(f);
    if (!rc && !have_node) {
        snprintf(err, errlen, "%s: no \"node ID\" line: whose routes are these?", path);
        rc = -1;
    }
    if (rc)
        routefile_free(rf);
    return rc;
}
