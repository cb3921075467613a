/*
 * ch4:pme - start-up and shut-down: choosing the interface, opening the PME endpoint,
 * publishing its address through PMI and building the address vector.
 */
#include "mpidimpl.h"
#include "pme_impl.h"
#include "mpidu_bc.h"

#include <dirent.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_PME
      description : A category for the CH4 PME netmod (MPI over PME's raw Ethernet transport)

cvars:
    - name        : MPIR_CVAR_CH4_PME_IFACE
      category    : CH4_PME
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The network interface that carries PME's frames (e.g. eth1). It takes
        precedence over the PME_IFACE environment variable. When neither is set,
        the interface named for this host in the cluster description is used
        (PME_CLUSTER_FILE, or the description of the maint/vcluster cluster the host
        belongs to), else the lowest-numbered Ethernet interface that is up, is not
        a bridge and does not carry the default route (else the one that does).
        The interface in use is the MPI_T performance variable pme_iface.

    - name        : MPIR_CVAR_CH4_PME_MAX_SLEEP_US
      category    : CH4_PME
      type        : int
      default     : 1000
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Longest time in microseconds that one progress call sleeps on the network
        device when the node has more runnable processes than cores and nothing has
        arrived for PME_SPIN_US (see PME_WAIT). A sleep lasts an eighth of the time
        nothing has arrived, at least 50 us and at most this; PME frames end it at once,
        shared memory is polled after it; 0 never sleeps (only yields the core).

    - name        : MPIR_CVAR_CH4_PME_TEST_CARD_VERSION
      category    : CH4_PME
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For tests only: publish this PME wire version in the business card instead of
        the real one, to check that a job mixing two PME versions fails cleanly.
        0 (the default) publishes the real version.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_PME_global_t MPIDI_PME_global;

/* ---- errors ---- */

/* Build an MPI error code whose stack shows summary, then detail (a sentence from
 * pme_core naming cause and fix). MPICH keeps at most 256 characters per line of an
 * error stack, so long details are split over several lines at word boundaries. */
static int make_error(int errclass, const char *func, int line, const char *summary,
                      const char *detail)
{
    int code = MPI_SUCCESS;
    if (detail && *detail) {
        const char *chunks[16];
        int lens[16];
        int n = 0;
        const char *p = detail;
        while (*p && n < 16) {
            int len = (int) strlen(p);
            if (len > 220) {
                len = 220;
                while (len > 120 && p[len] != ' ')
                    len--;
            }
            chunks[n] = p;
            lens[n] = len;
            n++;
            p += len;
            while (*p == ' ')
                p++;
        }
        /* The newest entry of an error stack prints first: create the last chunk first. */
        for (int i = n - 1; i >= 0; i--) {
            char buf[256];
            snprintf(buf, sizeof(buf), "%.*s", lens[i], chunks[i]);
            code = MPIR_Err_create_code(code, MPIR_ERR_RECOVERABLE, func, line, errclass,
                                        "**pme_detail", "**pme_detail %s", buf);
        }
    }
    return MPIR_Err_create_code(code, MPIR_ERR_RECOVERABLE, func, line, errclass,
                                "**pme_summary", "**pme_summary %s", summary);
}

/* An MPI error for a failed PME operation with peer `rank` (-1: none). */
int MPIDI_PME_error_from_status(int status, int rank, const char *what)
{
    char summary[200];
    int errclass = MPI_ERR_OTHER;
    const char *detail = MPIDI_PME_global.ep ? pme_ep_last_error(MPIDI_PME_global.ep) : "";

    if (status == PME_ERR_PEER_DEAD) {
        errclass = MPIX_ERR_PROC_FAILED;
        snprintf(summary, sizeof(summary),
                 "ch4:pme: %s: rank %d stopped answering for %u ms (PME_PEER_TIMEOUT_MS)",
                 what, rank, MPIDI_PME_global.peer_timeout_ms);
    } else if (rank >= 0) {
        snprintf(summary, sizeof(summary), "ch4:pme: %s with rank %d failed: %s", what, rank,
                 pme_strerror(status));
    } else {
        snprintf(summary, sizeof(summary), "ch4:pme: %s failed: %s", what, pme_strerror(status));
    }
    return make_error(errclass, __func__, __LINE__, summary, detail);
}

/* ---- the peer table ---- */

/* Make room for peer index `peer` in the netmod's peer table. */
int MPIDI_PME_peer_slot(uint32_t peer)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    if (peer < g->npeers_alloc)
        return MPI_SUCCESS;
    uint32_t n = g->npeers_alloc ? g->npeers_alloc : 64;
    while (n <= peer)
        n *= 2;
    MPIDI_PME_peer_t *p = MPL_realloc(g->peers, n * sizeof(*p), MPL_MEM_ADDRESS);
    if (!p)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    for (uint32_t i = g->npeers_alloc; i < n; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        p[i].world_rank = -1;
    }
    g->peers = p;
    g->npeers_alloc = n;
    return MPI_SUCCESS;
}

/* ---- choosing the interface ---- */

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

static int choose_iface(struct pme_config *cfg, char *err, size_t errlen)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    const char *file = getenv("PME_CLUSTER_FILE");
    char host[256];

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
            return make_error(MPI_ERR_OTHER, __func__, __LINE__,
                              "ch4:pme: no network interface for PME", err);
        }
        g->iface_origin = "PME_CLUSTER_FILE";
    } else if (vcluster_iface(host, g->iface, sizeof(g->iface)) == 0) {
        g->iface_origin = "the vcluster description";
    } else if (auto_iface(g->iface, sizeof(g->iface)) == 0) {
        g->iface_origin = "automatic choice";
    } else {
        snprintf(err, errlen, "no Ethernet interface on this node is up: bring one up "
                 "(ip link set dev <interface> up) or name the interface with "
                 "PME_IFACE=<interface>");
        return make_error(MPI_ERR_OTHER, __func__, __LINE__,
                          "ch4:pme: no network interface for PME", err);
    }
    cfg->iface = g->iface;
    return MPI_SUCCESS;
}

/* ---- the job key ---- */

/* Frames of other jobs are dropped by their key, which all processes of a job must
 * share. It is a hash of the PMI job id. Hydra names its jobs
 * "kvs_<mpiexec pid>_<process group>_<random>_<host>"; the process-group and random
 * parts are left out so that processes started by MPI_Comm_spawn from the same
 * mpiexec share the key of their parents. PME_JOB_KEY overrides it. */
static uint32_t job_key(void)
{
    const char *id = MPIR_pmi_job_id();
    char norm[256];
    int pid, pg, rnd, n = 0;
    if (!id)
        id = "";
    if (sscanf(id, "kvs_%d_%d_%d_%n", &pid, &pg, &rnd, &n) == 3 && n > 0)
        snprintf(norm, sizeof(norm), "kvs_%d_%s", pid, id + n);
    else
        snprintf(norm, sizeof(norm), "%s", id);
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (const char *p = norm; *p; p++) {
        h ^= (uint8_t) * p;
        h *= 16777619u;
    }
    return h ? h : 1;
}

/* ---- the job secret ---- */

/* Every process of the job learns the same secret, made by rank 0 from the kernel's
 * random source and spread through PMI (never on the wire): PME's frames carry a MAC
 * under it, so no process outside the job can forge or inject one. Collective: every
 * process calls it before anything can fail, so that none waits for a missing one.
 * Returns nonzero when rank 0 could not make one (reported like any failure of
 * MPI_Init, by every process). */
static int job_secret(uint8_t secret[PME_SECRET_BYTES])
{
    /* byte PME_SECRET_BYTES: 1 when rank 0 succeeded */
    uint8_t buf[PME_SECRET_BYTES + 1] = { 0 };
    if (MPIR_Process.rank == 0)
        buf[PME_SECRET_BYTES] = pme_secret_generate(buf) == PME_OK;
    if (MPIR_pmi_bcast(buf, sizeof(buf), MPIR_PMI_DOMAIN_ALL) != MPI_SUCCESS)
        buf[PME_SECRET_BYTES] = 0;
    memcpy(secret, buf, PME_SECRET_BYTES);
    int ok = buf[PME_SECRET_BYTES];
    memset(buf, 0, sizeof(buf));
    return ok ? 0 : -1;
}

/* The secret when none was given: made for the job, unless frames are not to be
 * authenticated. Processes started by MPI_Comm_spawn cannot learn their parents' secret
 * (PMI keeps one job's data from another's), so they need one given to every job alike. */
static int choose_secret(struct pme_config *cfg, const uint8_t made[PME_SECRET_BYTES],
                         int made_ok, char *err, size_t errlen)
{
    if (cfg->secret_len || cfg->auth == PME_AUTH_CRC || cfg->auth == PME_AUTH_NONE)
        return 0;
    if (MPIR_Process.has_parent) {
        snprintf(err, errlen, "processes started by MPI_Comm_spawn share their parents' job "
                 "secret only through a file: start mpiexec with PME_JOB_SECRET_FILE=<file> "
                 "in its environment (make one with: pme_info --new-secret > <file>), or "
                 "PME_AUTH=crc on a network where every host is trusted");
        return -1;
    }
    if (!made_ok) {
        snprintf(err, errlen, "rank 0 could not make the job secret (no random bytes from "
                 "the kernel); set PME_JOB_SECRET_FILE or PME_AUTH=crc");
        return -1;
    }
    memcpy(cfg->secret, made, PME_SECRET_BYTES);
    cfg->secret_len = PME_SECRET_BYTES;
    return 0;
}

/* ---- init ---- */

int MPIDI_PME_init_local(int *tag_bits)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    struct pme_config cfg;
    char err[512];
    uint8_t made[PME_SECRET_BYTES];

    MPIR_FUNC_ENTER;

    /* MPIDIG carries tags in its own headers: no bits are lost to the transport. */
    *tag_bits = MPIR_TAG_BITS_DEFAULT;

    memset(g, 0, sizeof(*g));
    int made_ok = job_secret(made) == 0;
    pme_config_init(&cfg);
    /* A rank that computes for long must not be taken for dead by its peers. */
    cfg.helper = 1;
    int rc = pme_config_from_env(&cfg, err, sizeof(err));
    if (rc) {
        mpi_errno = make_error(MPI_ERR_OTHER, __func__, __LINE__,
                               "ch4:pme: a PME_* environment variable is invalid", err);
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s", err);
        goto fn_fail;
    }
    if (!getenv("PME_JOB_KEY"))
        cfg.job_key = job_key();
    rc = choose_secret(&cfg, made, made_ok, err, sizeof(err));
    memset(made, 0, sizeof(made));
    if (rc) {
        mpi_errno = make_error(MPI_ERR_OTHER, __func__, __LINE__,
                               "ch4:pme: no job secret to authenticate PME's frames", err);
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s", err);
        goto fn_fail;
    }
    cfg.local_procs = (unsigned) MPIR_Process.local_size;
    /* Only off-node ranks talk to us over PME (on-node ones use shared memory). */
    cfg.expected_peers = (unsigned) (MPIR_Process.size - MPIR_Process.local_size);
    /* An eager message that arrives before its receive is posted waits in one of
     * MPIDIG's unexpected-message buffers: it must fit in one. */
    if (cfg.eager_max > (size_t) MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE)
        cfg.eager_max = (size_t) MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE;

    if (!cfg.device || strcmp(cfg.device, "loop")) {
        mpi_errno = choose_iface(&cfg, err, sizeof(err));
        if (mpi_errno) {
            snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s", err);
            goto fn_fail;
        }
    }

    rc = pme_ep_open(&cfg, &g->ep, err, sizeof(err));
    if (rc) {
        char summary[200];
        snprintf(summary, sizeof(summary),
                 "ch4:pme could not open a PME endpoint on interface %s (chosen by %s)",
                 g->iface[0] ? g->iface : "(none)", g->iface_origin ? g->iface_origin : "-");
        mpi_errno = make_error(MPI_ERR_OTHER, __func__, __LINE__, summary,
                               err[0] ? err : pme_strerror(rc));
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s",
                 err[0] ? err : pme_strerror(rc));
        goto fn_fail;
    }
    g->open = 1;
    g->max_hdr = pme_ep_max_hdr(g->ep);
    g->eager_max = pme_ep_eager_max(g->ep);
    g->peer_timeout_ms = cfg.peer_timeout_ms;
    g->rto_us = cfg.rto_us;
    size_t room = g->max_hdr < MPIDI_PME_HDR_BUF ? g->max_hdr : MPIDI_PME_HDR_BUF;
    g->am_hdr_max = (MPI_Aint) ((room - sizeof(MPIDI_PME_wire_hdr_t)) & ~(size_t) 7);
    g->max_sleep_us = MPIR_CVAR_CH4_PME_MAX_SLEEP_US > 0 ?
        (unsigned) MPIR_CVAR_CH4_PME_MAX_SLEEP_US : 0;
    g->pack_scratch = MPL_malloc(g->eager_max + 8, MPL_MEM_BUFFER);
    if (!g->pack_scratch) {
        mpi_errno = make_error(MPI_ERR_OTHER, __func__, __LINE__, "ch4:pme: out of memory", "");
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "out of memory");
        goto fn_fail;
    }

    if (pme_ep_addr(g->ep, g->addr, sizeof(g->addr)) < 0) {
        mpi_errno = make_error(MPI_ERR_OTHER, __func__, __LINE__,
                               "ch4:pme: cannot format the endpoint's address", "");
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "cannot format its PME address");
        goto fn_fail;
    }
    if (MPIR_CVAR_CH4_PME_TEST_CARD_VERSION > 0) {
        /* Test hook: pretend to speak another wire version ("pme<N>:..."). */
        const char *rest = strchr(g->addr, ':');
        char fake[PME_ADDR_MAX];
        snprintf(fake, sizeof(fake), "pme%d%s", MPIR_CVAR_CH4_PME_TEST_CARD_VERSION,
                 rest ? rest : "");
        memcpy(g->addr, fake, sizeof(fake));
    }

    g->idle_since_ns = 0;
    MPIDI_PME_pvars_init();

    if (MPIR_CVAR_DEBUG_SUMMARY && MPIR_Process.rank == 0) {
        printf("==== ch4:pme netmod ====\n");
        printf("interface: %s (%s)\n", g->iface, g->iface_origin);
        printf("address: %s\n", g->addr);
        printf("eager_max: %zu  max_hdr: %zu  peer_timeout_ms: %u\n", g->eager_max,
               g->max_hdr, g->peer_timeout_ms);
        printf("authentication: %s  local_procs: %u  helper: %s\n",
               pme_ep_auth(g->ep) == PME_AUTH_MAC ? "MAC (job secret)" :
               pme_ep_auth(g->ep) == PME_AUTH_CRC ? "CRC only" : "none", cfg.local_procs,
               cfg.helper ? "on" : "off");
        printf("========================\n");
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return MPI_SUCCESS;
  fn_fail:
    /* Report the failure from init_world, where every process learns of it through the
     * business cards and all of MPI_Init fails together, naming this rank: a lone
     * process aborting here would leave the others waiting in PMI. */
    g->init_errno = mpi_errno;
    if (g->ep) {
        pme_ep_close(g->ep);
        g->ep = NULL;
    }
    g->open = 0;
    goto fn_exit;
}

/* The PME wire version of a card: the text before its ':' ("pme1"). */
static int card_version(const char *card, char *out, size_t len)
{
    size_t n = strcspn(card, ":");
    if (card[n] != ':' || n >= len)
        return -1;
    memcpy(out, card, n);
    out[n] = 0;
    return 0;
}

/* Why the job cannot start PME, from everyone's business cards: the first process that
 * could not open its endpoint, or the first that speaks another wire version than rank
 * 0. Returns 1 and fills summary and detail if so, 0 when every card is usable. */
static int job_init_failure(const char *table, int size, char *summary, size_t slen,
                            char *detail, size_t dlen)
{
    char ver0[16] = "", ver[16];
    card_version(table, ver0, sizeof(ver0));
    for (int i = 0; i < size; i++) {
        const char *c = table + (size_t) i * MPIDI_PME_CARD_LEN;
        if (c[0] == '!') {
            const char *why = strchr(c, ':');
            snprintf(summary, slen, "ch4:pme: rank %d could not start PME on host %.*s", i,
                     (int) strcspn(c + 1, ":"), c + 1);
            snprintf(detail, dlen, "%s", why ? why + 2 : c + 1);
            return 1;
        }
        if (ver0[0] && card_version(c, ver, sizeof(ver)) == 0 && strcmp(ver, ver0)) {
            snprintf(summary, slen, "ch4:pme: rank %d runs another PME version (wire version "
                     "%s) than rank 0 (wire version %s)", i, ver, ver0);
            snprintf(detail, dlen, "run every process of the job with the same PME build (the "
                     "same MPICH installation, built by maint/build-mpich from the same PME "
                     "sources)");
            return 1;
        }
    }
    return 0;
}

/* hydra tears a job down as soon as one process aborts and may drop the output still on
 * its way, so that a failed MPI_Init sometimes ended with nothing printed at all. Rank 0
 * states the reason itself, and every process gives that line time to reach mpiexec
 * before MPICH aborts the job. */
static void announce_init_failure(int rank, const char *summary, const char *detail)
{
    if (rank == 0) {
        fprintf(stderr, "%s: %s\n", summary, detail);
        fflush(stderr);
    }
    struct timespec pause = { 0, 300 * 1000 * 1000 };
    nanosleep(&pause, NULL);
}

int MPIDI_PME_init_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    void *table = NULL;
    int recv_bc_len = MPIDI_PME_CARD_LEN;
    int size = MPIR_Process.size;
    int rank = MPIR_Process.rank;
    char card[MPIDI_PME_CARD_LEN];
    char host[128];

    MPIR_FUNC_ENTER;

    /* A card is our PME address, or "!<host>: <why PME did not start here>". */
    memset(card, 0, sizeof(card));
    if (gethostname(host, sizeof(host)))
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = 0;
    if (g->init_errno)
        snprintf(card, sizeof(card), "!%s: %s", host, g->init_errmsg);
    else
        snprintf(card, sizeof(card), "%s", g->addr);
    mpi_errno = MPIDU_bc_table_create(rank, size, MPIR_Process.node_map, card,
                                      MPIDI_PME_CARD_LEN, TRUE, 0, &table, &recv_bc_len);
    MPIR_ERR_CHECK(mpi_errno);

    /* Any process that could not start PME, or that speaks another PME wire version than
     * rank 0, fails the whole job, with the same explanation in every process. */
    char summary[200], detail[MPIDI_PME_CARD_LEN];
    if (job_init_failure(table, size, summary, sizeof(summary), detail, sizeof(detail))) {
        /* a process that failed itself keeps its own, longer error stack */
        mpi_errno = g->init_errno ? g->init_errno :
            make_error(MPI_ERR_OTHER, __func__, __LINE__, summary, detail);
        announce_init_failure(rank, summary, detail);
        MPIDU_bc_table_destroy();
        goto fn_fail;
    }

    for (int i = 0; i < size; i++) {
        char addr[PME_ADDR_MAX];
        pme_peer_t peer;
        snprintf(addr, sizeof(addr), "%s", (char *) table + (size_t) i * MPIDI_PME_CARD_LEN);
        int rc = pme_ep_add_peer(g->ep, addr, &peer);
        if (rc) {
            char summary[200];
            if (rc == PME_ERR_VERSION)
                snprintf(summary, sizeof(summary),
                         "ch4:pme: rank %d runs another PME version than rank %d", i, rank);
            else
                snprintf(summary, sizeof(summary),
                         "ch4:pme: the business card of rank %d is not usable", i);
            mpi_errno = make_error(MPI_ERR_OTHER, __func__, __LINE__, summary,
                                   pme_ep_last_error(g->ep));
            MPIDU_bc_table_destroy();
            goto fn_fail;
        }
        mpi_errno = MPIDI_PME_peer_slot(peer);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_PME_AV(&MPIDIU_get_av(0, i)).peer = peer;
        MPIDI_PME_peer_t *p = &g->peers[peer];
        memcpy(p->addr, addr, PME_ADDR_MAX);
        p->world_rank = i;
        p->gpid = MPIDIU_GPID_CREATE(0, i);
        p->has_gpid = 1;
    }
    MPIDU_bc_table_destroy();

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_PME_post_init(void)
{
    return MPI_SUCCESS;
}

int MPIDI_PME_mpi_finalize_hook(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;

    MPIR_FUNC_ENTER;

    if (g->ep) {
        /* Let our sends be acknowledged, then keep answering for a moment so that the
         * peers' last frames are acknowledged too before the endpoint goes away. */
        unsigned t = g->peer_timeout_ms < 10000 ? g->peer_timeout_ms : 10000;
        uint64_t start = MPIDI_PME_now_ns();
        while (g->sendq_head && MPIDI_PME_sendq_drain() == MPI_SUCCESS && g->sendq_head &&
               MPIDI_PME_now_ns() - start < (uint64_t) t * 1000000u)
            pme_wait(g->ep, 1);
        pme_ep_flush(g->ep, (int) t);
        /* Linger until nothing has arrived for a few ACK delays (at most 1 s). */
        uint64_t quiet_ns = 5000000u + 4000ull * g->rto_us;
        struct pme_counters c;
        pme_ep_counters(g->ep, &c);
        uint64_t last_rx = c.rx_frames, last_change = MPIDI_PME_now_ns();
        start = last_change;
        while (MPIDI_PME_now_ns() - last_change < quiet_ns &&
               MPIDI_PME_now_ns() - start < 1000000000ull) {
            pme_wait(g->ep, 1);
            pme_ep_counters(g->ep, &c);
            if (c.rx_frames != last_rx) {
                last_rx = c.rx_frames;
                last_change = MPIDI_PME_now_ns();
            }
        }
        pme_ep_close(g->ep);
        g->ep = NULL;
    }
    g->open = 0;
    while (g->dyn_head) {
        MPIDI_PME_dynmsg_t *m = g->dyn_head;
        g->dyn_head = m->next;
        MPL_free(m);
    }
    MPL_free(g->pack_scratch);
    MPL_free(g->peers);
    g->pack_scratch = NULL;
    g->peers = NULL;
    g->npeers_alloc = 0;

    MPIR_FUNC_EXIT;
    return MPI_SUCCESS;
}
