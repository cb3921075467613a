/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology.h - a network of PME nodes as pme_route sees it: nodes, their data
 * interfaces, and what each interface is cabled to. Read from either of two forms:
 *
 * 1. The file an administrator writes (one item per line, '#' starts a comment):
 *
 *        topology torus 4x4                   (or: ring 8, torus 2x2x2, switch)
 *        node <id> <name> [x[,y[,z]]]         (coordinates: ring and torus only)
 *        iface <node id> <name> <MAC>
 *        link <node id>:<iface> <node id>:<iface>
 *        link <node id>:<iface> switch:<name>
 *
 *    On a ring or torus a link joins two neighbours, and its first end is the one that
 *    goes in the "+" direction (the second end's coordinate is one more, modulo the
 *    size, in exactly one dimension); that tells the two links apart when a dimension
 *    has size 2. Every position of the torus holds a node, and every node has a "+"
 *    and a "-" link in every dimension. On a switch, nodes whose interfaces reach the
 *    same switch are neighbours.
 *
 * 2. maint/vcluster's description (`maint/vcluster describe --tsv`), recognised by its
 *    "cluster" line. Node ids are the node indices; a torus link's "+" end is the
 *    interface vcluster names <dimension letter>p (xp, yp, zp).
 *
 * Both go through the same checks; errors name the line and what is wrong.
 */
#ifndef PME_TOPOLOGY_H
#define PME_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TOPO_MAX_DIMS 3
#define TOPO_MAX_IFS 8
#define TOPO_MAX_NODES 4096

enum topo_kind { TOPO_SWITCH, TOPO_TORUS }; /* a ring is a torus of one dimension */

struct topo_if {
    char name[16];
    uint8_t mac[6];
    int peer, peer_if;  /* torus: node and interface index at the other end, else -1 */
    int dim, dir;       /* torus: this link's dimension and direction (+1 or -1) */
    int sw;             /* switch: index of the switch it reaches, else -1 */
};

struct topo_node {
    uint32_t id;
    char name[64];
    int coord[TOPO_MAX_DIMS];
    int nif;
    struct topo_if ifs[TOPO_MAX_IFS];
};

struct topo {
    enum topo_kind kind;
    int ndims, dims[TOPO_MAX_DIMS];
    int nnodes, cap;
    struct topo_node *nodes;
    int nsw;
    char (*sw)[32];     /* switch names */
};

/* topo_read: parse f (named `what` in messages). 0, or -1 with a message in err. */
int topo_read(FILE *f, const char *what, struct topo *t, char *err, size_t errlen);
void topo_free(struct topo *t);

/* Index of the node with this id, or -1. */
int topo_find_id(const struct topo *t, uint32_t id);
/* Index of the node with this name, or -1. */
int topo_find_name(const struct topo *t, const char *name);

#endif
