// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - start-up and shut-down: opening the PME endpoint on the chosen interface
 * (init_iface.c) under the job's key and secret (init_secret.c), publishing its address
 * through PMI, building the address vector, and a clean goodbye at finalize.
 */
#include "mpidimpl.h"
#include "pme_impl.h"
#include "pme_init.h"
#if !MPIDI_PME_MPICH_5
#include "mpidu_bc.h"   /* (5.0 has no business-card table) */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        device once nothing has arrived for PME_YIELD_US (when the node has more
        runnable processes than cores) or for PME_SPIN_US (when the process has a
        core of its own); see PME_WAIT. A sleep lasts an eighth of the time nothing
        has arrived, at least 50 us and at most this; PME frames end it at once, and
        so does a message from a rank of the same node (through shared memory, see
        MPIR_CVAR_CH4_PME_SHM_WAKE); 0 never sleeps (only yields the core).

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

    - name        : MPIR_CVAR_CH4_PME_TEST_CARD_REVISION
      category    : CH4_PME
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For tests only: publish this netmod revision (0 to 255) in the business card
        instead of the real one, to check that a job mixing two builds of ch4:pme that
        share a wire version fails cleanly (0 is what builds from before revisions
        were published say). -1 (the default) publishes the real revision.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

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
    int made_ok = MPIDI_PME_job_secret(made) == 0;
    pme_config_init(&cfg);
    /* A rank that computes for long must not be taken for dead by its peers. */
    cfg.helper = 1;
    int rc = pme_config_from_env(&cfg, err, sizeof(err));
    if (rc) {
        mpi_errno = MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                         "ch4:pme: a PME_* environment variable is invalid", err);
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s", err);
        goto fn_fail;
    }
    if (!getenv("PME_JOB_KEY"))
        cfg.job_key = MPIDI_PME_job_key();
    rc = MPIDI_PME_choose_secret(&cfg, made, made_ok, err, sizeof(err));
    pme_secret_wipe(made, sizeof(made));
    if (rc) {
        mpi_errno = MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                         "ch4:pme: no job secret to authenticate PME's frames",
                                         err);
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s", err);
        goto fn_fail;
    }
    cfg.local_procs = (unsigned) MPIR_Process.local_size;
    /* Only off-node ranks talk to us over PME (on-node ones use shared memory). */
    cfg.expected_peers = (unsigned) (MPIR_Process.size - MPIR_Process.local_size);
    /* An eager message that arrives before its receive is posted waits in one of
     * MPIDIG's unexpected-message buffers: it must fit in one. */
    if (cfg.eager_max > (size_t) MPIDI_PME_PACK_BUFFER_SIZE)
        cfg.eager_max = (size_t) MPIDI_PME_PACK_BUFFER_SIZE;

    if (!cfg.device || strcmp(cfg.device, "loop")) {
        mpi_errno = MPIDI_PME_choose_iface(&cfg, err, sizeof(err));
        if (mpi_errno) {
            snprintf(g->init_errmsg, sizeof(g->init_errmsg), "%s", err);
            goto fn_fail;
        }
    }

    rc = pme_ep_open(&cfg, &g->ep, err, sizeof(err));
    /* The endpoint keeps the secret in its key schedules only; this copy on the stack
     * would outlive the call (and fn_exit wipes it on the paths that fail before). */
    pme_secret_wipe(cfg.secret, sizeof(cfg.secret));
    if (rc) {
        char summary[200];
        snprintf(summary, sizeof(summary),
                 "ch4:pme could not open a PME endpoint on interface %s (chosen by %s)",
                 g->iface[0] ? g->iface : "(none)", g->iface_origin ? g->iface_origin : "-");
        mpi_errno = MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__, summary,
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
        mpi_errno = MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                         "ch4:pme: out of memory", "");
        snprintf(g->init_errmsg, sizeof(g->init_errmsg), "out of memory");
        goto fn_fail;
    }

    if (pme_ep_addr(g->ep, g->addr, sizeof(g->addr)) < 0) {
        mpi_errno = MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
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
    pme_secret_wipe(cfg.secret, sizeof(cfg.secret));
    pme_secret_wipe(made, sizeof(made));
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

_Static_assert(MPIDI_PME_CARD_REV_OFF < MPIDI_PME_CARD_LEN, "no room for the revision");

/* The netmod revision of a usable card (0: a build from before revisions). */
static unsigned card_revision(const char *card)
{
    return (unsigned char) card[MPIDI_PME_CARD_REV_OFF];
}

static const char *const same_build_advice =
    "run every process of the job with the same PME build (the same MPICH installation, "
    "built by maint/build-mpich from the same PME sources)";

/* Why the job cannot start PME, from everyone's business cards: the first process that
 * could not open its endpoint, or the first that speaks another wire version or netmod
 * revision than rank 0. Returns 1 and fills summary, detail and the rank (*who) if so,
 * 0 when every card is usable. */
static int job_init_failure(const char *table, int size, char *summary, size_t slen,
                            char *detail, size_t dlen, int *who)
{
    char ver0[16] = "", ver[16];
    card_version(table, ver0, sizeof(ver0));
    unsigned rev0 = card_revision(table);
    for (int i = 0; i < size; i++) {
        const char *c = table + (size_t) i * MPIDI_PME_CARD_LEN;
        *who = i;
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
            snprintf(detail, dlen, "%s", same_build_advice);
            return 1;
        }
        if (card_revision(c) != rev0) {
            const char *before = ", a build from before revisions";
            snprintf(summary, slen, "ch4:pme: rank %d runs another build of ch4:pme (netmod "
                     "revision %u%s) than rank 0 (netmod revision %u%s)", i, card_revision(c),
                     card_revision(c) ? "" : before, rev0, rev0 ? "" : before);
            snprintf(detail, dlen, "%s", same_build_advice);
            return 1;
        }
    }
    return 0;
}

/* Every process's card, by rank in MPI_COMM_WORLD, through PMI: 4.x's business-card
 * table, an allgather over all processes in 5.0 (which has no such table). */
static int card_table(const char *card, void **table)
{
#if MPIDI_PME_MPICH_5
    *table = MPL_malloc((size_t) MPIR_Process.size * MPIDI_PME_CARD_LEN, MPL_MEM_ADDRESS);
    if (!*table)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    return MPIR_pmi_allgather(card, MPIDI_PME_CARD_LEN, *table, MPIDI_PME_CARD_LEN,
                              MPIR_PMI_DOMAIN_ALL);
#else
    int recv_bc_len = MPIDI_PME_CARD_LEN;
    return MPIDU_bc_table_create(MPIR_Process.rank, MPIR_Process.size, MPIR_Process.node_map,
                                 (void *) card, MPIDI_PME_CARD_LEN, TRUE, 0, table,
                                 &recv_bc_len);
#endif
}

static void card_table_free(void *table)
{
#if MPIDI_PME_MPICH_5
    MPL_free(table);
#else
    MPIDU_bc_table_destroy();
#endif
}

/* The business cards of the whole job: every process added to PME and to ch4's address
 * vector, or the reason one of them could not start. In 4.x ch4 calls it once
 * (init_world); 5.0 sets up the world's communicator first (comm_bootstrap_hook). */
static int join_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    void *table = NULL;
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
    else {
        snprintf(card, sizeof(card), "%s", g->addr);
        card[MPIDI_PME_CARD_REV_OFF] = (char) (MPIR_CVAR_CH4_PME_TEST_CARD_REVISION >= 0 ?
                                               MPIR_CVAR_CH4_PME_TEST_CARD_REVISION :
                                               MPIDI_PME_NETMOD_REV);
    }
    mpi_errno = card_table(card, &table);
    MPIR_ERR_CHECK(mpi_errno);

    /* Any process that could not start PME, or that speaks another PME wire version than
     * rank 0, fails the whole job, with the same explanation in every process. */
    char summary[200], detail[MPIDI_PME_CARD_LEN];
    int who = -1;
    if (job_init_failure(table, size, summary, sizeof(summary), detail, sizeof(detail), &who)) {
        /* a process that failed itself keeps its own, longer error stack */
        mpi_errno = g->init_errno ? g->init_errno :
            MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__, summary, detail);
        /* Rank 0 states the reason, and every process waits for that line to get out.
         * When rank 0 is the process that failed, it states its own whole reason: the
         * card cut it to fit, and the remedies at the end of a permission error would
         * be lost. */
        MPIDI_PME_say_then_pause(rank == 0, summary, who == rank && g->init_errno ?
                                 g->init_errmsg : detail);
        card_table_free(table);
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
            mpi_errno = MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__, summary,
                                             pme_ep_last_error(g->ep));
            card_table_free(table);
            goto fn_fail;
        }
        mpi_errno = MPIDI_PME_peer_slot(peer);
        MPIR_ERR_CHECK(mpi_errno);
        MPIDI_PME_AV(MPIDI_PME_WORLD_AV(i)).peer = peer;
        MPIDI_PME_peer_t *p = &g->peers[peer];
        memcpy(p->addr, addr, PME_ADDR_MAX);
        p->world_rank = i;
        p->gpid = MPIDI_PME_WORLD_PROCID(i);
        p->has_gpid = 1;
    }
    card_table_free(table);
    mpi_errno = MPIDI_PME_shm_wake_init();
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#if MPIDI_PME_MPICH_5
/* 5.0 commits MPI_COMM_WORLD (a "bootstrap" communicator) before any message to another
 * process: its commit is where the job's cards are exchanged. A session's bootstrap
 * communicator over a part of the processes would need an exchange PMI does not offer
 * this netmod. */
int MPIDI_PME_comm_bootstrap_hook(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    static int joined;

    if ((comm->attr & MPIR_COMM_ATTR__BOOTSTRAP) && !joined) {
        if (comm->local_size != MPIR_Process.size)
            return MPIDI_PME_make_error(MPI_ERR_OTHER, __func__, __LINE__,
                                        "ch4:pme: the first communicator of a session must "
                                        "hold every process of the job",
                                        "create a communicator from the group mpi://WORLD "
                                        "first");
        mpi_errno = join_world();
        if (mpi_errno)
            return mpi_errno;
        joined = 1;
    }
    return MPIDI_PME_mpi_comm_commit_pre_hook(comm);
}

/* One VCI: PME's endpoint is the netmod's only queue pair, on every process. */
int MPIDI_PME_comm_set_vcis(MPIR_Comm * comm, int num_implicit, int num_reserved,
                            MPIDI_num_vci_t * all_num_vcis)
{
    for (int i = 0; i < comm->local_size; i++) {
        all_num_vcis[i].n_vcis = 1;
        all_num_vcis[i].n_total_vcis = 1;
    }
    return MPI_SUCCESS;
}
#else
int MPIDI_PME_init_world(void)
{
    return join_world();
}

#if MPIDI_PME_MPICH_42
/* One VCI: PME's endpoint is the netmod's only queue pair. */
int MPIDI_PME_init_vcis(int num_vcis, int *num_vcis_actual)
{
    *num_vcis_actual = 1;
    return MPI_SUCCESS;
}
#endif

int MPIDI_PME_post_init(void)
{
    return MPI_SUCCESS;
}
#endif

int MPIDI_PME_mpi_finalize_hook(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;

    MPIR_FUNC_ENTER;

    MPIDI_PME_shm_wake_finalize();
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
    MPIDI_PME_dynq_free();
    MPIDI_PME_globals_free();

    MPIR_FUNC_EXIT;
    return MPI_SUCCESS;
}
