// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_route - PME's routes on a mesh: compute them from a topology, install them on a
 * node (its route file, and the in-kernel forwarder on its data interfaces), show
 * them, remove them. Run `install` once per boot on each node, as one loads a driver.
 *
 *   pme_route routes TOPOLOGY [--node N] [--ethertype X]
 *       print a node's route file (every node's when --node is not given)
 *   pme_route install TOPOLOGY [--node N] [--ethertype X] [--file F] [--no-forward]
 *       write this node's route file and load the forwarder from it
 *   pme_route load [--file F]     load the forwarder from an existing route file
 *   pme_route show [--file F] [--kv]
 *   pme_route remove [--file F]   unload the forwarder, delete the route file
 *   pme_route path                where this node's route file is
 *
 * TOPOLOGY is a topology file (src/tools/topology.h) or the output of
 * `maint/vcluster describe --tsv`; "-" reads it from standard input. --node takes a
 * node's id or name and defaults to the node named like this host (a virtual node's
 * hostname is its name). The route file's format and location, and why the routes
 * cannot loop, are in src/pme_core/pme_route.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pme_route.h"
#include "pme_wire.h"
#include "route_fwd.h"
#include "routefile.h"
#include "routes.h"
#include "topology.h"

struct opts {
    const char *topology, *node, *file;
    unsigned ethertype;
    int no_forward, kv;
};

static char err[16384]; /* room for two paths */

static int die(const char *msg)
{
    fprintf(stderr, "pme_route: %s\n", msg);
    return 1;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: pme_route routes TOPOLOGY [--node N] [--ethertype X]\n"
            "       pme_route install TOPOLOGY [--node N] [--ethertype X] [--file F] "
            "[--no-forward]\n"
            "       pme_route load|remove [--file F]\n"
            "       pme_route show [--file F] [--kv]\n"
            "       pme_route path\n"
            "TOPOLOGY: a topology file, or a virtual cluster's description\n"
            "          (`vcluster describe --tsv`); '-': stdin. See pme_route(8)\n");
    return 2;
}

static int read_topology(const char *path, struct topo *t)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        snprintf(err, sizeof(err), "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = topo_read(f, strcmp(path, "-") ? path : "standard input", t, err, sizeof(err));
    if (f != stdin)
        fclose(f);
    return rc;
}

/* pick_node: the index of --node (an id or a name), or of the node named like this host. */
static int pick_node(const struct topo *t, const char *want)
{
    char host[256];
    int i = -1;
    if (want) {
        uint32_t id;
        if (!pme_route_parse_u32(want, &id, 10))
            i = topo_find_id(t, id);
        if (i < 0)
            i = topo_find_name(t, want);
        if (i < 0)
            snprintf(err, sizeof(err), "no node '%s' in the topology", want);
        return i;
    }
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = 0;
        i = topo_find_name(t, host);
    }
    if (i < 0)
        snprintf(err, sizeof(err), "this host ('%s') is not a node of the topology: say which "
                 "node this is with --node ID", host);
    return i;
}

static const char *route_path(const struct opts *o, char *buf, size_t len)
{
    if (o->file)
        return o->file;
    if (pme_route_path(buf, len)) {
        snprintf(err, sizeof(err), "the route file's path is too long");
        return NULL;
    }
    return buf;
}

static int cmd_routes(const struct opts *o)
{
    struct topo t;
    if (read_topology(o->topology, &t))
        return die(err);
    int rc = 0;
    if (o->node) {
        int i = pick_node(&t, o->node);
        rc = i < 0 || routes_write(stdout, &t, i, (uint16_t)o->ethertype, err, sizeof(err));
    } else {
        for (int i = 0; i < t.nnodes && !rc; i++) {
            printf("%s# ---- node %u (%s)\n", i ? "\n" : "", t.nodes[i].id, t.nodes[i].name);
            rc = routes_write(stdout, &t, i, (uint16_t)o->ethertype, err, sizeof(err));
        }
    }
    topo_free(&t);
    return rc ? die(err) : 0;
}

/* write_file: the route file, replaced at once (a reader sees the old or the new). */
static int write_file(const char *path, const struct topo *t, int node, uint16_t ethertype)
{
    char tmp[4096];
    if (!strncmp(path, PME_ROUTE_DIR "/", strlen(PME_ROUTE_DIR) + 1))
        mkdir(PME_ROUTE_DIR, 0755);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    /* Mode 0644 whatever the umask: endpoints refuse a route file others may write (it
     * decides where their frames go), and every user's endpoints read it. A fresh file
     * only, never through a link planted in its place. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 && fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, sizeof(err), "cannot write %s: %s%s", tmp, strerror(errno),
                 errno == EACCES ? " (run as root, or choose another --file)" : "");
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return -1;
    }
    int rc = routes_write(f, t, node, ethertype, err, sizeof(err));
    if (fclose(f) && !rc) {
        snprintf(err, sizeof(err), "cannot write %s: %s", tmp, strerror(errno));
        rc = -1;
    }
    if (!rc && rename(tmp, path)) {
        snprintf(err, sizeof(err), "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        rc = -1;
    }
    if (rc)
        unlink(tmp);
    return rc;
}

static int load_forwarder(const char *path)
{
    struct routefile rf;
    if (routefile_read(path, &rf, err, sizeof(err)))
        return -1;
    int rc = fwd_load(&rf, err, sizeof(err));
    if (!rc)
        printf("forwarder for node %u loaded on %d interface%s (%d routes)\n", rf.node, rf.nif,
               rf.nif == 1 ? "" : "s", rf.nroutes);
    routefile_free(&rf);
    return rc;
}

static int cmd_install(const struct opts *o)
{
    struct topo t;
    char buf[4096];
    const char *path = route_path(o, buf, sizeof(buf));
    if (!path || read_topology(o->topology, &t))
        return die(err);
    int node = pick_node(&t, o->node);
    int rc = node < 0 || write_file(path, &t, node, (uint16_t)o->ethertype);
    if (!rc)
        printf("routes of node %u (%s) written to %s\n", t.nodes[node].id, t.nodes[node].name,
               path);
    topo_free(&t);
    if (!rc && !o->no_forward)
        rc = load_forwarder(path);
    return rc ? die(err) : 0;
}

static int cmd_load(const struct opts *o)
{
    char buf[4096];
    const char *path = route_path(o, buf, sizeof(buf));
    return !path || load_forwarder(path) ? die(err) : 0;
}

static int cmd_show(const struct opts *o)
{
    char buf[4096];
    const char *path = route_path(o, buf, sizeof(buf));
    struct routefile rf;
    if (!path || routefile_read(path, &rf, err, sizeof(err)))
        return die(err);
    if (!o->kv)
        printf("%s: node %u, EtherType 0x%04x, %d interface%s, %d routes\n", path, rf.node,
               rf.ethertype, rf.nif, rf.nif == 1 ? "" : "s", rf.nroutes);
    int rc = fwd_show(&rf, stdout, o->kv, err, sizeof(err));
    routefile_free(&rf);
    return rc ? die(err) : 0;
}

static int cmd_remove(const struct opts *o)
{
    char buf[4096];
    const char *path = route_path(o, buf, sizeof(buf));
    struct routefile rf;
    if (!path || routefile_read(path, &rf, err, sizeof(err)))
        return die(err);
    int rc = fwd_unload(&rf, err, sizeof(err));
    routefile_free(&rf);
    if (!rc && unlink(path)) {
        snprintf(err, sizeof(err), "cannot remove %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (!rc)
        printf("routes and forwarder removed (%s)\n", path);
    return rc ? die(err) : 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.ethertype = PME_ETHERTYPE_DEFAULT};
    static const struct option lo[] = {
        {"node", 1, 0, 'n'},       {"file", 1, 0, 'f'}, {"ethertype", 1, 0, 'e'},
        {"no-forward", 0, 0, 'N'}, {"kv", 0, 0, 'k'},   {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "n:f:e:h", lo, NULL)) != -1) {
        switch (c) {
        case 'n': o.node = optarg; break;
        case 'f': o.file = optarg; break;
        case 'e': {
            uint32_t v;
            if (pme_route_parse_u32(optarg, &v, 0) || v < 0x600 || v > 0xFFFF)
                return die("--ethertype: expected an EtherType from 0x0600 to 0xffff, e.g. "
                           "0x88b5");
            o.ethertype = v;
            break;
        }
        case 'N': o.no_forward = 1; break;
        case 'k': o.kv = 1; break;
        default: return usage();
        }
    }
    if (optind >= argc)
        return usage();
    const char *cmd = argv[optind++];
    int nargs = argc - optind;
    if (!strcmp(cmd, "routes") || !strcmp(cmd, "install")) {
        if (nargs != 1)
            return usage();
        o.topology = argv[optind];
        return cmd[0] == 'r' ? cmd_routes(&o) : cmd_install(&o);
    }
    if (nargs)
        return usage();
    if (!strcmp(cmd, "load"))
        return cmd_load(&o);
    if (!strcmp(cmd, "show"))
        return cmd_show(&o);
    if (!strcmp(cmd, "remove"))
        return cmd_remove(&o);
    if (!strcmp(cmd, "path")) {
        char buf[4096];
        const char *path = route_path(&o, buf, sizeof(buf));
        if (!path)
            return die(err);
        printf("%s\n", path);
        return 0;
    }
    return usage();
}
