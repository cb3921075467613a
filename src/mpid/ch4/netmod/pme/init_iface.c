/*
 * ch4:pme - which network interface carries PME's frames: named by a CVAR or
 * PME_IFACE, by a cluster description, or chosen automatically.
 */
#include "mpidimpl.h"
#include "pme_impl.h"
#include "pme_init.h"

#include <dirent.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_sysfs(const char *ifname, const char *attr, char *buf, size_t len)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, attr);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = 0;
    return 0;
}

static int sysfs_exists(const char *ifname, const char *attr)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, attr);
    return access(path, F_OK) == 0;
}

/* Is ifname the interface of a default route (IPv4)? */
static int carries_default_route(const char *ifname)
{
    FILE *f = fopen("/proc/net/route", "r");
    if (!f)
        return 0;
    char line[512], name[IFNAMSIZ + 1];
    unsigned long dest;
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%16s %lx", name, &dest) == 2 && dest == 0 && !strcmp(name, ifname)) {
            found = 1;
            break;
        }
    }
    fclose(f);
    return found;
}

/* The automatic choice: among the Ethernet interfaces that are up (ARPHRD_ETHER,
 * IFF_UP, not loopback, not a bridge), the lowest-numbered one without the default
 * route; if every candidate carries it, the lowest-numbered candidate. */
static int auto_iface(char *out, size_t len)
{
    DIR *d = opendir("/sys/class/net");
    if (!d)
        return -1;
    struct dirent *e;
    int best_index = -1, best_default = 1;
    while ((e = readdir(d))) {
        char buf[64];
        if (e->d_name[0] == '.' || strlen(e->d_name) >= IFNAMSIZ)
            continue;
        if (read_sysfs(e->d_name, "type", buf, sizeof(buf)) || atoi(buf) != 1)
            continue;   /* not ARPHRD_ETHER (loopback is 772) */
        if (read_sysfs(e->d_name, "flags", buf, sizeof(buf)) ||
            !(strtoul(buf, NULL, 0) & IFF_UP) || (strtoul(buf, NULL, 0) & IFF_LOOPBACK))
            continue;
        if (sysfs_exists(e->d_name, "bridge"))
            continue;
        if (read_sysfs(e->d_name, "ifindex", buf, sizeof(buf)))
            continue;
        int index = atoi(buf);
        int is_default = carries_default_route(e->d_name);
        if (best_index < 0 || is_default < best_default ||
            (is_default == best_default && index < best_index)) {
            best_index = index;
            best_default = is_default;
            snprintf(out, len, "%s", e->d_name);
        }
    }
    closedir(d);
    return best_index < 0 ? -1 : 0;
}

/* A cluster description names each node's data interface. Two formats are read:
 * maint/vcluster's cluster.tsv (lines "node<TAB>I<TAB>HOSTNAME<TAB>..." and
 * "iface<TAB>I<TAB>IFNAME<TAB>..."; the node's first data interface is used), and a
 * plain list of "HOSTNAME INTERFACE" lines ('#' starts a comment). Returns 0 and the
 * interface for this host if the file lists it. */
static int cluster_file_iface(const char *file, const char *host, char *out, size_t len)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char line[1024];
    int rc = -1, node = -1;
    while (rc && fgets(line, sizeof(line), f)) {
        char a[256], b[256], c[256];
        int idx;
        if (line[0] == '#')
            continue;
        if (!strncmp(line, "node\t", 5)) {
            if (sscanf(line + 5, "%d %255s", &idx, a) == 2 && !strcmp(a, host))
                node = idx;
        } else if (!strncmp(line, "iface\t", 6)) {
            if (node >= 0 && sscanf(line + 6, "%d %255s", &idx, b) == 2 && idx == node) {
                snprintf(out, len, "%s", b);
                rc = 0;
            }
        } else if (!strncmp(line, "cluster\t", 8)) {
            continue;
        } else {
            char *hash = strchr(line, '#');
            if (hash)
                *hash = 0;
            if (sscanf(line, "%255s %255s %255s", a, b, c) >= 2 && !strcmp(a, host)) {
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
    } else if (auto_iface(g->iface, sizeof(g->iface)) == 0) {
        g->iface_origin = "automatic choice";
    } else {
        snprintf(err, errlen, "no Ethernet interface on this node is up: bring one up "
                 "(ip link set dev <interface> up) or name the interface with "
                 "PME_IFACE=<interface>");
        return MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                    "ch4:pme: no network interface for PME", err);
    }
    cfg->iface = g->iface;
    return MPI_SUCCESS;
}
