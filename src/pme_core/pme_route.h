/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note OR BSD-3-Clause */
/*
 * pme_route.h - PME's routes: how one node reaches every other node of a mesh (ring or
 * torus) or switched network. One definition for everyone who sends or forwards PME
 * frames: pme_core (the sender), the BPF forwarder (src/bpf/pme_fwd.bpf.c) and later
 * the kernel driver. pme_route (src/tools/pme_route.c) computes and installs them.
 *
 * Nodes are numbered by a 32-bit id (wire version 2's dst_node and src_node);
 * PME_NODE_ANY (0xFFFFFFFF) is never a node.
 *
 * 1. The binary form, what a forwarder looks up for every frame: a map from the
 *    destination node (__u32 in host order) to struct pme_route_entry, and one struct
 *    pme_route_self that says who this node is.
 *
 * 2. The text form, one file per node, which pme_core reads to learn its node id, its
 *    data interfaces, and, for a destination that is not a neighbour, which interface
 *    to send on and to which Ethernet address. One item per line, '#' starts a comment,
 *    fields are separated by blanks:
 *
 *        pme-routes 1                          (first line: format and version)
 *        node <this node's id>
 *        ethertype 0x88b5
 *        iface <name> <MAC>                    (each data interface of this node)
 *        route <dst node> <iface> <next-hop MAC> <hops>
 *        topology <ring N | torus AxB | torus AxBxC | switch>   (optional)
 *        coords <node> <x>[,<y>[,<z>]]          (optional: ring and torus, every node)
 *
 *    A route's <hops> is the number of links to the destination (1 for a neighbour).
 *    A sender puts at least that many in a frame's hops_left: each forwarder drops a
 *    frame that arrives with hops_left <= 1 and decrements it otherwise, so a frame
 *    arrives with hops_left reduced by the number of nodes that forwarded it (its path
 *    length minus one). Destinations without a route line are unreachable.
 *
 *    The topology line and one coords line per node (this one included) say where
 *    every node sits on a ring or torus, so that a process can tell how far apart any
 *    two nodes are (the torus distance, which is a route's length) without asking
 *    them: MPI places ranks by it. Routing does not read them.
 *
 *    Where the file is: $PME_ROUTES when set, else
 *        /run/pme/routes.<network namespace inode>
 *    where the inode is that of /proc/self/ns/net (stat -L -c %i /proc/self/ns/net).
 *    On a real host that is one file for the host (its initial namespace); on a
 *    virtual cluster, whose nodes are network namespaces sharing one file system, each
 *    node finds its own file the same way, as it finds its counter files
 *    (/dev/shm/pme-<uid>/<netns inode>.*). /run is emptied at boot, like the routes, which
 *    pme_route installs once per boot on each node, as one loads a driver.
 *
 * The routes pme_route computes (torus and ring): dimension order, x then y then z,
 * and in each dimension the shorter way round (Shortest-Direction-First), "+" when both
 * ways are equally long. A route depends only on (here, destination), and the node one
 * hop along it makes the same choice for the rest of the way, so every hop shortens
 * the remaining torus distance by exactly one: no frame can loop, and a frame's path
 * length is the torus distance (the hop limit guards against a wrongly installed
 * table). On a switched network every node is a neighbour (hops 1, on the first rail).
 */
#ifndef PME_ROUTE_H
#define PME_ROUTE_H

#include <linux/types.h>

#define PME_ROUTE_FORMAT 1
#define PME_ROUTE_MAX_NODES 4096        /* entries of a forwarder's route map */
#define PME_ROUTE_DIR "/run/pme"
#define PME_ROUTE_ENV "PME_ROUTES"
#define PME_ROUTE_MAX_DIMS 3    /* a ring has 1 dimension, a torus 2 or 3 */
#ifndef PME_NODE_ANY
#define PME_NODE_ANY 0xFFFFFFFFu
#endif

/* Value of the route map; key: the destination node (__u32, host order). */
struct pme_route_entry {
	__u32 ifindex;          /* out interface, in the node's network namespace */
	__u8 next_hop[6];       /* Ethernet destination on the out link */
	__u8 src_mac[6];        /* the out interface's own address: Ethernet source */
	__u8 hops;              /* links from this node to the destination */
	__u8 pad[3];
};

/* Who this node is (key 0 of a one-entry map). */
struct pme_route_self {
	__u32 node;             /* this node's id */
	__u16 ethertype;        /* PME's EtherType, host order */
	__u16 pad;
};

#if !defined(__KERNEL__) && !defined(__bpf__)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One line of the text form. */
enum pme_route_kind {
	PME_RL_BLANK,           /* empty or a comment */
	PME_RL_FORMAT,          /* pme-routes <version>: u.version */
	PME_RL_NODE,            /* node <id>: u.node */
	PME_RL_ETHERTYPE,       /* ethertype <x>: u.ethertype */
	PME_RL_IFACE,           /* iface <name> <mac>: iface, mac */
	PME_RL_ROUTE,           /* route <dst> <iface> <mac> <hops>: u.node, iface, mac, hops */
	PME_RL_TOPOLOGY,        /* topology <kind> [sizes]: ndims (0: switch), num[] the sizes */
	PME_RL_COORDS,          /* coords <node> <x,y,z>: u.node, ndims, num[] the coordinates */
	PME_RL_BAD = -1
};

struct pme_route_line {
	enum pme_route_kind kind;
	union {
		unsigned int version;
		__u32 node;
		__u16 ethertype;
	} u;
	char iface[16];
	__u8 mac[6];
	unsigned int hops;
	unsigned int ndims;
	unsigned int num[PME_ROUTE_MAX_DIMS];
};

/* pme_route_path: where this node's text form is (see above). 0, or -1 if no room. */
static inline int pme_route_path(char *buf, size_t len)
{
	const char *env = getenv(PME_ROUTE_ENV);
	struct stat st;
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (stat("/proc/self/ns/net", &st) == 0)
		n = snprintf(buf, len, "%s/routes.%llu", PME_ROUTE_DIR,
			     (unsigned long long)st.st_ino);
	else
		n = snprintf(buf, len, "%s/routes", PME_ROUTE_DIR);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static inline int pme_route_parse_mac(const char *s, __u8 mac[6])
{
	unsigned int m[6];
	char end;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
		   &end) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = (__u8)m[i];
	return 0;
}

static inline int pme_route_parse_u32(const char *s, __u32 *v, int base)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return -1;
	x = strtoull(s, &end, base);
	if (*end || x > 0xFFFFFFFFull)
		return -1;
	*v = (__u32)x;
	return 0;
}

/* Up to PME_ROUTE_MAX_DIMS numbers below 65536 joined by sep ("4x4", "1,0,2") into
 * num[]; their count, or 0 if s is not such a list.
 */
static inline unsigned int pme_route_parse_nums(const char *s, char sep, unsigned int num[])
{
	char buf[64], *p, *q, *end;
	unsigned int n = 0;
	unsigned long v;

	if (strlen(s) >= sizeof(buf))
		return 0;
	strcpy(buf, s);
	for (p = buf; n < PME_ROUTE_MAX_DIMS; p = q + 1) {
		q = strchr(p, sep);
		if (q)
			*q = 0;
		if (*p < '0' || *p > '9')
			return 0;
		v = strtoul(p, &end, 10);
		if (*end || v > 0xFFFF)
			return 0;
		num[n++] = (unsigned int)v;
		if (!q)
			return n;
	}
	return 0;
}

/* "topology ring N", "torus AxB[xC]" (each size at least 2) or "switch" into *l. */
static inline int pme_route_parse_topology(char **w, int n, struct pme_route_line *l)
{
	unsigned int i;

	if (n == 2 && !strcmp(w[1], "switch"))
		l->ndims = 0;
	else if (n == 3 && !strcmp(w[1], "ring"))
		l->ndims = pme_route_parse_nums(w[2], ',', l->num) == 1 ? 1 : PME_ROUTE_MAX_DIMS + 1;
	else if (n == 3 && !strcmp(w[1], "torus"))
		l->ndims = pme_route_parse_nums(w[2], 'x', l->num);
	else
		return -1;
	if (l->ndims > PME_ROUTE_MAX_DIMS || (n == 3 && l->ndims == 0))
		return -1;
	for (i = 0; i < l->ndims; i++)
		if (l->num[i] < 2)
			return -1;
	return 0;
}

/* pme_route_parse_line: one line of the text form into *l; returns l->kind. */
static inline int pme_route_parse_line(const char *line, struct pme_route_line *l)
{
	char buf[256], *w[6], *save = NULL, *t;
	int n = 0;
	__u32 v;

	memset(l, 0, sizeof(*l));
	l->kind = PME_RL_BAD;
	n = (int)strcspn(line, "#\r\n");
	if ((size_t)n >= sizeof(buf))
		return l->kind; /* no line of the format is that long */
	memcpy(buf, line, (size_t)n);
	buf[n] = 0;
	n = 0;
	for (t = strtok_r(buf, " \t", &save); t && n < 6; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (n == 0)
		l->kind = PME_RL_BLANK;
	else if (n == 2 && !strcmp(w[0], "pme-routes") && !pme_route_parse_u32(w[1], &v, 10)) {
		l->u.version = v;
		l->kind = PME_RL_FORMAT;
	} else if (n == 2 && !strcmp(w[0], "node") && !pme_route_parse_u32(w[1], &v, 10) &&
		   v != PME_NODE_ANY) {
		l->u.node = v;
		l->kind = PME_RL_NODE;
	} else if (n == 2 && !strcmp(w[0], "ethertype") && !pme_route_parse_u32(w[1], &v, 0) &&
		   v >= 0x600 && v <= 0xFFFF) {
		l->u.ethertype = (__u16)v;
		l->kind = PME_RL_ETHERTYPE;
	} else if (n == 3 && !strcmp(w[0], "iface") && strlen(w[1]) < sizeof(l->iface) &&
		   !pme_route_parse_mac(w[2], l->mac)) {
		strcpy(l->iface, w[1]);
		l->kind = PME_RL_IFACE;
	} else if (n == 5 && !strcmp(w[0], "route") && !pme_route_parse_u32(w[1], &v, 10) &&
		   v != PME_NODE_ANY && strlen(w[2]) < sizeof(l->iface) &&
		   !pme_route_parse_mac(w[3], l->mac) && !pme_route_parse_u32(w[4], &l->hops, 10) &&
		   l->hops >= 1 && l->hops <= 255) {
		l->u.node = v;
		strcpy(l->iface, w[2]);
		l->kind = PME_RL_ROUTE;
	} else if (!strcmp(w[0], "topology") && !pme_route_parse_topology(w, n, l)) {
		l->kind = PME_RL_TOPOLOGY;
	} else if (n == 3 && !strcmp(w[0], "coords") && !pme_route_parse_u32(w[1], &v, 10) &&
		   v != PME_NODE_ANY) {
		l->ndims = pme_route_parse_nums(w[2], ',', l->num);
		if (l->ndims) {
			l->u.node = v;
			l->kind = PME_RL_COORDS;
		}
	}
	return l->kind;
}
#endif /* user space */

#endif /* PME_ROUTE_H */
