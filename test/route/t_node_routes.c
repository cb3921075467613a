// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_node_routes.c - how an endpoint reads its node's route file and its interface list,
 * without any network: a good file gives the node id, the interfaces and each route;
 * a missing file is no error; every kind of broken file is refused with its path, the
 * line and what is wrong; interface lists (names, commas, patterns) expand as
 * documented and refuse what they cannot mean. A loop endpoint with a route file takes
 * its node id from it and refuses peers it has no route to, saying why. A route file
 * another user could have written (mode, owner) or a FIFO is refused; pme_route writes
 * its file 0644 under any umask.
 * pme-test: tier=default cpu=70 time=1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "iflist.h"
#include "node_routes.h"
#include "pme_test.h"

static char path[64];

/* Write text as the route file PME_ROUTES names. */
static void route_file(const char *text)
{
    unlink(path);
    FILE *f = fopen(path, "w");
    CHECK(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    /* As pme_route writes it, whatever the umask the test runs under. */
    CHECK(chmod(path, 0644) == 0, "chmod %s", path);
    setenv("PME_ROUTES", path, 1);
}

#define HEAD "pme-routes 1\nnode 5\nethertype 0x88b5\n"
#define IFACES "iface a 02:00:00:00:05:00\niface b 02:00:00:00:05:01\n"

static void no_file(void)
{
    struct pme_routes r;
    char err[256] = "", buf[64] = "x";
    setenv("PME_ROUTES", "/nonexistent/pme-routes", 1);
    CHECK(pme_routes_load(&r, err, sizeof(err)) == 0, "a missing file failed: %s", err);
    CHECK(!r.present && r.n == 0, "a missing file was read as present");
    CHECK(pme_route_ifaces(buf, sizeof(buf), err, sizeof(err)) == 0 && !buf[0],
          "pme_route_ifaces without a file said \"%s\"", buf);
    printf("ok: no route file: no routes, no error\n");
}

static void good_file(void)
{
    struct pme_routes r;
    char err[256] = "", buf[64];
    route_file(HEAD IFACES "# a comment\n\n"
                           "route 9 b 02:00:00:00:06:01 3\n"
                           "route 1 a 02:00:00:00:01:00 1\n");
    CHECK(pme_routes_load(&r, err, sizeof(err)) == 0, "good file refused: %s", err);
    CHECK(r.present && r.node == 5 && r.niface == 2 && r.n == 2, "read %d node %u, %u ifaces, "
          "%zu routes", r.present, r.node, r.niface, r.n);
    CHECK(!strcmp(r.iface[0], "a") && !strcmp(r.iface[1], "b"), "interfaces %s %s", r.iface[0],
          r.iface[1]);
    const struct pme_route_hop *h = pme_routes_find(&r, 9);
    static const uint8_t mac9[6] = {2, 0, 0, 0, 6, 1};
    CHECK(h && h->file_iface == 1 && h->hops == 3 && !memcmp(h->mac, mac9, 6),
          "route to 9 wrong or missing");
    h = pme_routes_find(&r, 1);
    CHECK(h && h->file_iface == 0 && h->hops == 1, "route to 1 wrong or missing");
    CHECK(!pme_routes_find(&r, 2) && !pme_routes_find(&r, 5), "a route to a node not listed");
    pme_routes_free(&r);
    CHECK(pme_route_ifaces(buf, sizeof(buf), err, sizeof(err)) == 1 && !strcmp(buf, "a,b"),
          "pme_route_ifaces said \"%s\"", buf);
    printf("ok: a route file gives node 5, interfaces a,b and routes to 1 and 9\n");
}

/* The file is refused, and the message names the file, the line (if any) and want. */
static void refused(const char *text, const char *line, const char *want)
{
    struct pme_routes r;
    char err[512] = "";
    route_file(text);
    CHECK(pme_routes_load(&r, err, sizeof(err)) < 0, "accepted a file with %s", want);
    CHECK(strstr(err, path) && strstr(err, want) && (!line || strstr(err, line)),
          "refusal does not say \"%s\" (%s) of %s: %s", want, line ? line : "", path, err);
    CHECK(!r.present && !r.v, "a refused file left routes behind");
    char buf[64];
    CHECK(pme_route_ifaces(buf, sizeof(buf), err, sizeof(err)) == PME_ERR_INVAL,
          "pme_route_ifaces accepted a file with %s", want);
    printf("ok: refused: %s\n", err);
}

static void bad_files(void)
{
    refused("node 5\n", "line 1", "does not begin with \"pme-routes 1\"");
    refused("pme-routes 7\nnode 5\n", "line 1", "format version 7");
    refused(HEAD IFACES "route 1 c 02:00:00:00:01:00 1\n", "line 6", "over c, which no iface");
    refused(HEAD IFACES "route 1 a 02:00:00:00:01:00 1\nroute 1 b 02:00:00:00:01:01 1\n", NULL,
            "two routes to node 1");
    refused("pme-routes 1\n" IFACES, NULL, "no \"node\" line");
    refused(HEAD IFACES "route 1 a 02:00:00:00:01 1\n", "line 6", "not a line of the route");
    refused(HEAD "iface a 02:00:00:00:00:01\niface b 02:00:00:00:00:02\niface c 02:00:00:00:00:03\n"
                 "iface d 02:00:00:00:00:04\niface e 02:00:00:00:00:05\niface f 02:00:00:00:00:06\n"
                 "iface g 02:00:00:00:00:07\niface h 02:00:00:00:00:08\niface i 02:00:00:00:00:09\n",
            "line 12", "more than 8 interfaces");
}

/* A route file decides where frames go and which node we are: one another user could
 * have written is refused, naming the file and why; so is a FIFO (its open blocked
 * until a writer came: an alarm turns a hang into a failure). pme_route writes 0644
 * files under any umask. */
static void untrusted_files(void)
{
    char err[512] = "";
    struct pme_routes r;
    route_file(HEAD IFACES);
    CHECK(chmod(path, 0664) == 0, "chmod");
    CHECK(pme_routes_load(&r, err, sizeof(err)) < 0 && strstr(err, path) &&
              strstr(err, "may be written by others"),
          "a group-writable route file was read: %s", err);
    printf("ok: refused: %s\n", err);
    CHECK(chmod(path, 0646) == 0, "chmod");
    CHECK(pme_routes_load(&r, err, sizeof(err)) < 0 && strstr(err, "may be written by others"),
          "a route file anyone may write was read: %s", err);
    if (geteuid() == 0) {
        CHECK(chmod(path, 0644) == 0 && chown(path, 65534, 65534) == 0, "chown");
        CHECK(pme_routes_load(&r, err, sizeof(err)) < 0 &&
                  strstr(err, "belongs to another user"),
              "a route file of another user was read: %s", err);
        printf("ok: refused: %s\n", err);
    }
    unlink(path);
    CHECK(mkfifo(path, 0644) == 0, "mkfifo");
    alarm(10);
    CHECK(pme_routes_load(&r, err, sizeof(err)) < 0 && strstr(err, "not a regular file"),
          "a FIFO as the route file: %s", err);
    alarm(0);
    unlink(path);
    printf("ok: refused: %s\n", err);

    /* The writer: pme_route install under umask 002 (which made group-writable files). */
    const char *bd = getenv("builddir");
    char cmd[1024], topo[96];
    snprintf(topo, sizeof(topo), "%s.topo", path);
    FILE *f = fopen(topo, "w");
    CHECK(f, "topology file");
    fputs("topology ring 3\nnode 1 host0 0\nnode 2 host1 1\nnode 3 host2 2\n"
          "link 1:p0plus 2:p0minus\nlink 2:p0plus 3:p0minus\nlink 3:p0plus 1:p0minus\n"
          "iface 1 p0plus 02:00:00:00:01:00\niface 1 p0minus 02:00:00:00:01:01\n"
          "iface 2 p0plus 02:00:00:00:02:00\niface 2 p0minus 02:00:00:00:02:01\n"
          "iface 3 p0plus 02:00:00:00:03:00\niface 3 p0minus 02:00:00:00:03:01\n", f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "umask 002 && '%s/src/tools/pme_route' install '%s' --node 1 "
             "--file '%s' --no-forward >/dev/null", bd && *bd ? bd : ".", topo, path);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    unlink(topo);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
          "pme_route wrote its route file with mode %03o under umask 002",
          (unsigned)(st.st_mode & 0777));
    CHECK(pme_routes_load(&r, err, sizeof(err)) == 0 && r.present && r.node == 1,
          "the file pme_route wrote is refused: %s", err);
    pme_routes_free(&r);
    printf("ok: pme_route writes its route file 0644 under umask 002, and it reads back\n");
}

static void expands(const char *spec, const char *want)
{
    char names[PME_MAX_DEVS][PME_IFNAME_LEN], err[256] = "", got[256] = "";
    int n = pme_iflist_expand(spec, names, err, sizeof(err));
    CHECK(n > 0, "\"%s\" refused: %s", spec, err);
    for (int i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", names[i]);
    CHECK(!strcmp(got, want), "\"%s\" gave \"%s\", not \"%s\"", spec, got, want);
}

static void refuses(const char *spec, const char *want)
{
    char names[PME_MAX_DEVS][PME_IFNAME_LEN], err[256] = "";
    CHECK(pme_iflist_expand(spec, names, err, sizeof(err)) < 0, "accepted \"%s\"", spec);
    CHECK(strstr(err, want), "\"%s\": refusal does not say \"%s\": %s", spec, want, err);
}

static void iface_lists(void)
{
    expands("eth1", "eth1");
    expands("xp,xm,yp,ym", "xp xm yp ym");
    expands("a,b,a", "a b");
    refuses("", "empty");
    refuses("a,,b", "empty or overlong item");
    refuses("a,", "ends with a comma");
    refuses("an-interface-name-too-long", "too long for an interface name");
    refuses("a,b,c,d,e,f,g,h,i", "more than 8 interfaces");
    refuses("pme-no-such-iface*", "no network interface matches \"pme-no-such-iface*\"");
    /* Loopback never matches a pattern. */
    refuses("l[o]", "no network interface matches");
    printf("ok: interface lists: names, commas, duplicates, patterns and their refusals\n");
}

/* A loop endpoint takes its node id from the file and refuses peers off the routes. */
static void endpoint(void)
{
    struct pme_loop_wire *wire;
    struct pme_config cfg;
    pme_ep_t *ep;
    pme_peer_t peer;
    char err[256] = "", addr[PME_ADDR_MAX];
    route_file(HEAD IFACES "route 1 a 02:00:00:00:01:00 1\n");
    CHECK_OK(pme_loop_wire_create(NULL, &wire));
    lp_config(&cfg, wire);
    CHECK_OK(pme_ep_open(&cfg, &ep, err, sizeof(err)));
    CHECK_OK(pme_ep_addr(ep, addr, sizeof(addr)));
    CHECK(!strncmp(addr, "pme3:00000005/", 14), "the endpoint is not node 5: %s", addr);
    int rc = pme_ep_add_peer(ep, "pme3:00000007/1@02:00:00:00:07:00", &peer);
    CHECK(rc == PME_ERR_UNREACHABLE && strstr(pme_ep_last_error(ep), "no route to node 7") &&
              strstr(pme_ep_last_error(ep), "pme_route install"),
          "a node without a route: %d, %s", rc, pme_ep_last_error(ep));
    /* The loop endpoint spans no interface: the route to 1 leaves by one it lacks. */
    rc = pme_ep_add_peer(ep, "pme3:00000001/1@02:00:00:00:01:00", &peer);
    CHECK(rc == PME_ERR_UNREACHABLE && strstr(pme_ep_last_error(ep), "interface a"),
          "a route over an interface not spanned: %d, %s", rc, pme_ep_last_error(ep));
    CHECK_OK(pme_ep_add_peer(ep, "pme3:00000005/9@02:00:00:00:05:00", &peer));
    pme_ep_close(ep);
    route_file("pme-routes 1\nnode 5\nroute\n");
    CHECK(pme_ep_open(&cfg, &ep, err, sizeof(err)) == PME_ERR_INVAL && strstr(err, path),
          "an endpoint opened with a broken route file: %s", err);
    pme_loop_wire_destroy(wire);
    printf("ok: a loop endpoint is node 5 from the file, refuses nodes 7 (no route) and 1 "
           "(interface a not spanned) with the reason, takes its own node, and does not "
           "open over a broken file\n");
}

/* The topology and coords lines: where this node and each peer's node sit. */
#define PLACES "topology torus 4x3\ncoords 5 1,2\ncoords 1 1,0\ncoords 9 3,0\n"

static void places(void)
{
    struct pme_routes r;
    char err[512] = "";
    route_file(HEAD IFACES "route 1 a 02:00:00:00:01:00 2\n" PLACES);
    CHECK(pme_routes_load(&r, err, sizeof(err)) == 0, "places refused: %s", err);
    const struct pme_node_coords *c = pme_routes_coords(&r, 9);
    CHECK(r.ndims == 2 && r.dims[0] == 4 && r.dims[1] == 3 && r.ncoords == 3 && c &&
              c->c[0] == 3 && c->c[1] == 0 && !pme_routes_coords(&r, 2),
          "topology %d %ux%u, %zu coords read", r.ndims, r.dims[0], r.dims[1], r.ncoords);
    pme_routes_free(&r);

    struct pme_loop_wire *wire;
    struct pme_config cfg;
    struct pme_topology t;
    pme_ep_t *ep;
    pme_peer_t self_peer, peer1, stranger;
    int at[PME_TOPO_MAX_DIMS], hops;
    CHECK_OK(pme_loop_wire_create(NULL, &wire));
    lp_config(&cfg, wire);
    cfg.iface = "a,b";
    CHECK_OK(pme_ep_open(&cfg, &ep, err, sizeof(err)));
    pme_ep_topology(ep, &t);
    CHECK(t.kind == PME_TOPO_TORUS && t.ndims == 2 && t.dims[0] == 4 && t.dims[1] == 3 &&
              t.coords[0] == 1 && t.coords[1] == 2 && t.node == 5,
          "topology kind %d, %d dims %dx%d, at %d,%d", t.kind, t.ndims, t.dims[0], t.dims[1],
          t.coords[0], t.coords[1]);
    CHECK_OK(pme_ep_add_peer(ep, "pme3:00000005/9@02:00:00:00:05:00", &self_peer));
    CHECK_OK(pme_ep_add_peer(ep, "pme3:00000001/1@02:00:00:00:01:00", &peer1));
    CHECK(pme_peer_place(ep, self_peer, at, &hops) == PME_OK && hops == 0 && at[0] == 1 &&
              at[1] == 2 && at[2] == 0,
          "this node's peer: hops %d at %d,%d,%d", hops, at[0], at[1], at[2]);
    CHECK(pme_peer_place(ep, peer1, at, &hops) == PME_OK && hops == 2 && at[0] == 1 &&
              at[1] == 0,
          "node 1's peer: hops %d at %d,%d", hops, at[0], at[1]);
    CHECK(pme_peer_place(ep, 77, at, &hops) == PME_ERR_INVAL, "an unknown peer was placed");
    pme_ep_close(ep);

    /* A node without coordinates is not placed; a switch places nothing. */
    route_file(HEAD IFACES "route 1 a 02:00:00:00:01:00 1\ntopology torus 4x3\ncoords 1 1,0\n");
    CHECK_OK(pme_ep_open(&cfg, &ep, err, sizeof(err)));
    pme_ep_topology(ep, &t);
    CHECK(t.kind == PME_TOPO_UNKNOWN, "a torus without this node's coordinates: kind %d", t.kind);
    CHECK_OK(pme_ep_add_peer(ep, "pme3:00000001/1@02:00:00:00:01:00", &stranger));
    CHECK(pme_peer_place(ep, stranger, at, &hops) == PME_ERR_UNREACHABLE, "placed on no torus");
    pme_ep_close(ep);
    route_file(HEAD IFACES "route 1 a 02:00:00:00:01:00 1\ntopology switch\n");
    CHECK_OK(pme_ep_open(&cfg, &ep, err, sizeof(err)));
    pme_ep_topology(ep, &t);
    CHECK_OK(pme_ep_add_peer(ep, "pme3:00000001/1@02:00:00:00:01:00", &stranger));
    CHECK(t.kind == PME_TOPO_SWITCH && pme_peer_place(ep, stranger, at, &hops) == PME_OK &&
              hops == 1 && at[0] == -1,
          "a switch: kind %d, hops %d, at %d", t.kind, hops, at[0]);
    pme_ep_close(ep);
    pme_loop_wire_destroy(wire);

    refused(HEAD PLACES "topology ring 5\n", "line 8", "a second topology line");
    refused(HEAD "coords 1 1,0\n", "line 4", "without a ring or torus of 2 dimensions");
    refused(HEAD "topology torus 4x3\ncoords 1 1\n", "line 5", "of 1 dimensions");
    refused(HEAD "topology torus 4x3\ncoords 1 1,3\n", "line 5", "outside the topology");
    refused(HEAD PLACES "coords 9 0,0\n", NULL, "node 9's coordinates twice");
    refused(HEAD "topology torus 4x1\n", "line 4", "not a line of the route format");
    refused(HEAD "topology mesh 4\n", "line 4", "not a line of the route format");
    printf("ok: topology and coords lines: this node on torus 4x3 at (1,2), its own peer 0 "
           "hops away, node 1's peer 2 hops at (1,0); unplaced nodes and switches; refusals\n");
}

int main(int argc, char **argv)
{
    snprintf(path, sizeof(path), "/tmp/pme-t-node-routes.%d", (int)getpid());
    static const struct scenario all[] = {
        {"no_file", no_file},     {"good_file", good_file}, {"bad_files", bad_files},
        {"iface_lists", iface_lists}, {"endpoint", endpoint}, {"places", places},
        {"untrusted_files", untrusted_files},
    };
    run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
    unlink(path);
    return 0;
}
