// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - which network interfaces carry PME's frames: named by a CVAR or
 * PME_IFACE, by a cluster description or the node's route file, or chosen
 * automatically (every data interface; on a switch of several NICs each is a rail).
 */
#include "mpidimpl.h"
#include "pme_impl.h"
#include "pme_init.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append an interface name to a comma-separated list unless it is in it already. */
static void list_add(char *out, size_t len, const char *name)
{
    size_t n = strlen(name), used = strlen(out);
    for (const char *p = out; (p = strstr(p, name)); p++)
        if ((p == out || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return;
    snprintf(out + used, len - used, "%s%s", used ? "," : "", name);
}

/* A cluster description names each node's data interfaces. Two formats are read:
 * maint/vcluster's cluster.tsv (lines "node<TAB>I<TAB>HOSTNAME<TAB>..." and
 * "iface<TAB>I<TAB>IFNAME<TAB>..."; every data interface of the node is used, in the
 * order listed: on a switch of several NICs each is a rail), and a plain list of
 * "HOSTNAME INTERFACE[,INTERFACE...]" lines ('#' starts a comment). Returns 0 and the
 * interfaces for this host if the file lists them. */
static int cluster_file_iface(const char *file, const char *host, char *out, size_t len)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[1024];
    int rc = -1, node = -1;
    out[0] = 0;
    while (fgets(line, sizeof(line), f)) {
        char a[256], b[256], c[256];
        int idx;
        if (line[0] == '#')
            continue;
        if (!strncmp(line, "node\t", 5)) {
            if (sscanf(line + 5, "%d %255s", &idx, a) == 2 && !strcmp(a, host))
                node = idx;
        } else if (!strncmp(line, "iface\t", 6)) {
            if (node >= 0 && sscanf(line + 6, "%d %255s", &idx, b) == 2 && idx == node) {
                list_add(out, len, b);
                rc = 0;
            }
        } else if (!strncmp(line, "cluster\t", 8)) {
            continue;
        } else {
            char *hash = strchr(line, '#');
            if (hash)
                *hash = 0;
            if (rc && sscanf(line, "%255s %255s %255s", a, b, c) >= 2 && !strcmp(a, host)) {
                snprintf(out, len, "%s", b);
                rc = 0;
            }
        }
    }
    fclose(f);
    return rc;
}

/* The description of the virtual cluster this node belongs to, if any: maint/vcluster
 * names its nodes "<cluster>-n<i>" and keeps <rundir>/<cluster>/cluster.tsv. */
static int vcluster_iface(const char *host, char *out, size_t len)
{
    char name[16], path[512];
    int i, n = 0;
    if (sscanf(host, "%8[a-z0-9]-n%d%n", name, &i, &n) != 2 || host[n] != 0)
        return -1;
    const char *rundir = getenv("VCLUSTER_RUNDIR");
    snprintf(path, sizeof(path), "%s/%s/cluster.tsv", rundir && *rundir ? rundir : "/run/vcluster",
             name);
    return cluster_file_iface(path, host, out, len);
}

/* Choose the interface for cfg (which may name one from PME_IFACE) and record it and
 * how it was chosen in the global state. On failure, err says why in one line. */
int MPIDI_PME_choose_iface(struct pme_config *cfg, char *err, size_t errlen)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    const char *file = getenv("PME_CLUSTER_FILE");
    char host[256];
    int routed;

    if (gethostname(host, sizeof(host)))
        host[0] = 0;
    host[sizeof(host) - 1] = 0;

    if (MPIR_CVAR_CH4_PME_IFACE && MPIR_CVAR_CH4_PME_IFACE[0]) {
        snprintf(g->iface, sizeof(g->iface), "%s", MPIR_CVAR_CH4_PME_IFACE);
        g->iface_origin = "MPIR_CVAR_CH4_PME_IFACE";
    } else if (cfg->iface && cfg->iface[0]) {
        snprintf(g->iface, sizeof(g->iface), "%s", cfg->iface);
        g->iface_origin = "PME_IFACE";
    } else if (file && *file) {
        if (cluster_file_iface(file, host, g->iface, sizeof(g->iface))) {
            snprintf(err, errlen, "PME_CLUSTER_FILE=%s does not name an interface "
                     "for host %s: add a line \"%s <interface>\" or set PME_IFACE", file, host,
                     host);
            return MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                        "ch4:pme: no network interface for PME", err);
        }
        g->iface_origin = "PME_CLUSTER_FILE";
    } else if ((routed = pme_route_ifaces(g->iface, sizeof(g->iface), err, errlen)) != 0) {
        if (routed < 0)
            return MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                        "ch4:pme: unusable route file", err);
        g->iface_origin = "this node's route file";
    } else if (vcluster_iface(host, g->iface, sizeof(g->iface)) == 0) {
        g->iface_origin = "the vcluster description";
    } else if (pme_default_ifaces(g->iface, sizeof(g->iface)) > 0) {
        g->iface_origin = "automatic choice (every data interface)";
    } else {
        snprintf(err, errlen, "no Ethernet interface on this node is up but loopback, bridges "
                 "and the default route's: bring one up (ip link set dev <interface> up) or "
                 "name the interfaces with PME_IFACE=<interface>[,<interface>...]");
        return MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                    "ch4:pme: no network interface for PME", err);
    }
    cfg->iface = g->iface;
    return MPI_SUCCESS;
}
