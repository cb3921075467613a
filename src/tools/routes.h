/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * routes.h - the routes of one node of a topology (topology.h), computed as
 * pme_route.h describes: dimension order with the shorter way round in each dimension
 * ("+" on a tie) on rings and tori, the first shared switch on switched networks.
 */
#ifndef PME_ROUTES_H
#define PME_ROUTES_H

#include <stdint.h>
#include <stdio.h>

#include "topology.h"

struct route {
    uint32_t dst;           /* destination node id */
    int ifidx;              /* out interface: index into the node's ifs[] */
    uint8_t next_hop[6];
    int hops;               /* links to the destination */
};

/*
 * routes_of: the route from node `from` (an index) to every other node, in node order,
 * into out[] (room for t->nnodes - 1). Returns how many, or -1 with a message in err
 * (a switched node that shares no switch with a destination).
 */
int routes_of(const struct topo *t, int from, struct route *out, char *err, size_t errlen);

/* The torus distance between two nodes (indices): the sum over the dimensions of the
 * shorter way round. */
int torus_distance(const struct topo *t, int a, int b);

/* Write node `from`'s routes in pme_route.h's text form. 0, or -1 with err. */
int routes_write(FILE *f, const struct topo *t, int from, uint16_t ethertype, char *err,
                 size_t errlen);

#endif
