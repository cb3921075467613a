// SPDX-License-Identifier: BSD-3-Clause
/*
 * place.c - where nodes sit on a ring or torus, as this node's route file says
 * (node_routes.c reads its "topology" and "coords" lines): the queries MPI uses to place
 * ranks and to run collectives along a torus's axes.
 */
#include <string.h>

#include "eplock.h"
#include "pme.h"
#include "pme_internal.h"

_Static_assert(PME_TOPO_MAX_DIMS == PME_ROUTE_MAX_DIMS, "pme.h and pme_route.h disagree");

/* Fill t from the route file; UNKNOWN unless it places this node. Caller holds the lock. */
static void topology_of(const struct pme_ep *ep, struct pme_topology *t)
{
    const struct pme_routes *r = &ep->routes;
    memset(t, 0, sizeof(*t));
    t->node = ep->self.node;
    if (!r->present || r->ndims < 0)
        return;
    if (r->ndims == 0) {
        t->kind = PME_TOPO_SWITCH;
        return;
    }
    const struct pme_node_coords *me = pme_routes_coords(r, ep->self.node);
    if (!me)
        return;
    t->kind = PME_TOPO_TORUS;
    t->ndims = r->ndims;
    for (int d = 0; d < r->ndims; d++) {
        t->dims[d] = (int)r->dims[d];
        t->coords[d] = me->c[d];
    }
}

void pme_ep_topology(pme_ep_t *ep, struct pme_topology *t)
{
    pme_ep_lock(ep);
    topology_of(ep, t);
    pme_ep_unlock(ep);
}

int pme_peer_place(pme_ep_t *ep, pme_peer_t peer, int coords[PME_TOPO_MAX_DIMS], int *hops)
{
    int rc = PME_OK;
    pme_ep_lock(ep);
    struct pme_peer *p = pme_peer_get(ep, peer);
    struct pme_topology t;
    topology_of(ep, &t);
    for (int d = 0; d < PME_TOPO_MAX_DIMS; d++)
        coords[d] = -1;
    *hops = -1;
    if (!p) {
        rc = PME_ERR_INVAL;
    } else if (t.kind == PME_TOPO_UNKNOWN) {
        rc = PME_ERR_UNREACHABLE;
    } else if (p->node == ep->self.node) {
        *hops = 0;
        memcpy(coords, t.coords, sizeof(t.coords));
    } else {
        const struct pme_route_hop *h = pme_routes_find(&ep->routes, p->node);
        const struct pme_node_coords *c = pme_routes_coords(&ep->routes, p->node);
        if (!h || (t.kind == PME_TOPO_TORUS && !c)) {
            rc = PME_ERR_UNREACHABLE;
        } else {
            *hops = h->hops;
            for (int d = 0; c && d < PME_TOPO_MAX_DIMS; d++)
                coords[d] = c->c[d];
        }
    }
    pme_ep_unlock(ep);
    return rc;
}
