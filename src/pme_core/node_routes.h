/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_routes.h - this node's route file (the text form pme_route writes, pme_route.h), as
 * an endpoint uses it: its node id, its data interfaces, and for each destination node
 * the interface to send on, the next hop's Ethernet address and the path's length.
 */
#ifndef PME_NODE_ROUTES_H
#define PME_NODE_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iflist.h"
#include "pme_route.h"

struct pme_route_hop {
    uint32_t node;          /* destination */
    uint8_t iface;          /* the endpoint's device (ep.c maps file_iface to it) */
    uint8_t file_iface;     /* index into struct pme_routes.iface */
    uint8_t hops;           /* links to the destination */
    uint8_t mac[6];         /* next hop's Ethernet address on that interface */
};

/* Where a node sits on a ring or torus (a "coords" line). */
struct pme_node_coords {
    uint32_t node;
    uint16_t c[PME_ROUTE_MAX_DIMS];
};

struct pme_routes {
    bool present;           /* a route file was read */
    char path[256];
    uint32_t node;          /* this node's id, from the "node" line */
    unsigned niface;
    char iface[PME_MAX_DEVS][PME_IFNAME_LEN];
    struct pme_route_hop *v; /* sorted by node */
    size_t n;
    /* the "topology" line: -1 when there is none, 0 a switch, else a ring's or torus's
     * dimensions; and the nodes' coordinates (sorted by node) */
    int ndims;
    unsigned dims[PME_ROUTE_MAX_DIMS];
    struct pme_node_coords *coords;
    size_t ncoords;
};

/* Read this node's route file (pme_route_path). No file: *r says not present and the
 * call succeeds. A file that cannot be read or parsed fails with err saying where. */
int pme_routes_load(struct pme_routes *r, char *err, size_t errlen);
void pme_routes_free(struct pme_routes *r);
/* The route to node, or NULL when the file has none. */
const struct pme_route_hop *pme_routes_find(const struct pme_routes *r, uint32_t node);
/* Where node sits on the file's ring or torus, or NULL when the file does not say. */
const struct pme_node_coords *pme_routes_coords(const struct pme_routes *r, uint32_t node);

#endif
