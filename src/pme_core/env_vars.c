// SPDX-License-Identifier: BSD-3-Clause
/*
 * env_vars.c - the one list of PME_* environment variables. config.c and the other
 * readers take their values; this table says which exist, where each lands in struct
 * pme_config (so that its default is the one pme_config_init sets, never a copy), and
 * which belong to the build and test scripts only. pme_info --config prints it, an
 * endpoint warns about PME_* variables it does not hold (a misspelt tunable is
 * otherwise silently ignored), and test/unit/t-config.sh fails when a variable the
 * sources read or the documents describe is missing from it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_vars.h"

#define F(field) offsetof(struct pme_config, field)
#define CFG(name, kind, field, what) {name, kind, F(field), NULL, what}
#define TXT(name, dflt, what) {name, PME_VAR_TEXT, 0, dflt, what}
#define SCR(name, what) {name, PME_VAR_SCRIPT, 0, "-", what}

static const struct pme_env_var vars[] = {
    CFG("PME_DEVICE", PME_VAR_STR, device, "auto, ring, pcap, kernel or loop"),
    CFG("PME_IFACE", PME_VAR_STR, iface, "interfaces (names and patterns, commas)"),
    CFG("PME_EP_ID", PME_VAR_INT, ep_id, "endpoint id (-1: a free one)"),
    CFG("PME_JOB_KEY", PME_VAR_UINT, job_key, "job id without a secret"),
    CFG("PME_AUTH", PME_VAR_AUTH, auth, "auto, mac, crc or none"),
    TXT("PME_JOB_SECRET_FILE", "(none)", "file of the job secret"),
    CFG("PME_NODE_ID", PME_VAR_UINT, node_id, "node id (0: from the MAC)"),
    CFG("PME_HOP_LIMIT", PME_VAR_UINT, hop_limit, "forwarding hops a frame may take"),
    CFG("PME_ETHERTYPE", PME_VAR_U16, ethertype, "PME's EtherType"),
    TXT("PME_CHECKSUM", "1", "0: PME_AUTH=none (older name)"),
    CFG("PME_MTU", PME_VAR_UINT, mtu, "largest frame payload (0: the interface's MTU)"),
    CFG("PME_EAGER_MAX", PME_VAR_SIZE, eager_max, "largest eager message"),
    CFG("PME_WINDOW", PME_VAR_UINT, window, "frames in flight per peer"),
    CFG("PME_HOLD", PME_VAR_SIZE, hold_bytes, "frames held after a gap"),
    CFG("PME_RX_POOL", PME_VAR_SIZE, rx_pool_bytes, "receive pool"),
    CFG("PME_TX_POOL", PME_VAR_SIZE, tx_pool_bytes, "eager send copies"),
    CFG("PME_CREDITS", PME_VAR_SIZE, credit_bytes, "eager credit per peer"),
    CFG("PME_COALESCE", PME_VAR_SIZE, coalesce_bytes, "largest bundle of small messages"),
    CFG("PME_COALESCE_AFTER", PME_VAR_UINT, coalesce_after, "frames unacknowledged before gathering"),
    CFG("PME_COALESCE_US", PME_VAR_UINT, coalesce_us, "longest a gathered message waits"),
    CFG("PME_RTO_US", PME_VAR_UINT, rto_us, "first retransmission timeout"),
    CFG("PME_PEER_TIMEOUT_MS", PME_VAR_UINT, peer_timeout_ms, "owing this long: dead"),
    CFG("PME_HELLO_TIMEOUT_MS", PME_VAR_UINT, hello_timeout_ms, "handshake unanswered this long"),
    CFG("PME_LINK_DOWN_MS", PME_VAR_UINT, link_down_ms, "owing this long over a link down"),
    CFG("PME_RAIL_TIMEOUT_MS", PME_VAR_UINT, rail_timeout_ms, "a rail unanswered this long"),
    CFG("PME_WAIT", PME_VAR_WAIT, wait_mode, "auto, spin or block"),
    CFG("PME_SPIN_US", PME_VAR_UINT, spin_us, "auto, own core: poll this long"),
    CFG("PME_YIELD_US", PME_VAR_UINT, yield_us, "auto, shared core: yield this long"),
    CFG("PME_SLEEP_SLACK_US", PME_VAR_UINT, sleep_slack_us, "how late a timed sleep may end"),
    CFG("PME_RING", PME_VAR_SIZE, ring_bytes, "kernel receive ring"),
    CFG("PME_ZC_MIN", PME_VAR_SIZE, zc_min_bytes, "smallest zero-copy rendezvous"),
    CFG("PME_TX_RING", PME_VAR_SIZE, tx_ring_bytes, "kernel send ring of the ring device"),
    CFG("PME_QDISC_BYPASS", PME_VAR_BYPASS, qdisc_bypass, "auto, 1 or 0"),
    CFG("PME_COUNTERS", PME_VAR_BOOL, counters_shm, "publish counters for pme_info"),
    CFG("PME_HELPER", PME_VAR_BOOL, helper, "liveness helper thread (MPI: 1)"),
    CFG("PME_HELPER_US", PME_VAR_UINT, helper_us, "away this long before the helper answers"),
    TXT("PME_RUNTIME_DIR", "/dev/shm", "where counter directories live"),
    TXT("PME_RAWSOCK", "(installed broker)", "the pme_rawsock broker; 0: none"),
    TXT("PME_ROUTES", "/run/pme/routes.<netns>", "this node's route file"),
    TXT("PME_CLUSTER_FILE", "(none)", "MPI: cluster description naming interfaces"),
    TXT("PME_WARN_UNKNOWN", "1", "0: no warning for unknown PME_* variables"),
    /* The build and test scripts' own (doc/testing.md, doc/mpi.md, maint/): known, so
     * that a job started from such a shell is not warned about them. */
    SCR("PME_CACHE_DIR", "MPICH build: build cache"),
    SCR("PME_CHECKPATCH", "build scripts: checkpatch.pl of the kernel style"),
    SCR("PME_FAULTCTL", "tests: the fault injector program"),
    SCR("PME_FAULT_SEED", "tests: the fault injector's seed"),
    SCR("PME_FUZZ_SECONDS", "tests: length of each fuzzer's run"),
    SCR("PME_INFO", "tests: the pme_info to run"),
    SCR("PME_IN_VM", "test VM: running inside the guest"),
    SCR("PME_JOBS", "build scripts: parallel jobs"),
    SCR("PME_KBENCH_IN_VM", "build scripts: kernel benchmark inside the guest"),
    SCR("PME_KMPI_DIR", "tests: kernel MPI test directory"),
    SCR("PME_MPICH_LEAN", "MPICH build: lean build"),
    SCR("PME_MPICH_PREBUILT", "tests: an installed MPICH to use"),
    SCR("PME_MPICH_PREFIX", "MPICH build: install prefix"),
    SCR("PME_MPICH_SRC_DIR", "MPICH build: source trees"),
    SCR("PME_MPICH_TARBALL", "MPICH build: a release tarball"),
    SCR("PME_MPICH_VERSION", "MPICH build: the MPICH version"),
    SCR("PME_MPICH_VERSIONS", "tests: MPICH versions to test"),
    SCR("PME_MPIEXEC_TIMEOUT", "tests: time limit of an MPI run"),
    SCR("PME_PERF", "tests: the pme_perf to run"),
    SCR("PME_PREFIX", "tests: the MPICH prefix in use"),
    SCR("PME_ROUTE", "virtual cluster: the pme_route to run"),
    SCR("PME_ROUTE_OPTS", "virtual cluster: options of pme_route"),
    SCR("PME_SOAK_SECONDS", "tests: length of the soak test"),
    SCR("PME_TEST_CASE", "tests: one case of a test program"),
    SCR("PME_TEST_CPU", "tests: CPU budget"),
    SCR("PME_TEST_FILTER", "tests: which tests run"),
    SCR("PME_TEST_FULL", "tests: the full tier"),
    SCR("PME_TEST_JOBS", "tests: tests side by side"),
    SCR("PME_TEST_KEEP", "tests: keep clusters and products"),
    SCR("PME_TEST_LOGDIR", "tests: where the logs go"),
    SCR("PME_TEST_MPICH_CPU", "tests: CPU share of the MPICH suite"),
    SCR("PME_TEST_MPICH_STATUS", "tests: the MPICH suite's status file"),
    SCR("PME_TEST_QUICK", "tests: smaller transfers"),
    SCR("PME_TEST_SCRIPTS", "tests: 0 leaves the scripts out"),
    SCR("PME_TEST_SEED", "tests: random seed"),
    SCR("PME_TEST_TIER", "tests: the tier being run"),
    SCR("PME_TEST_TIMEOUT", "tests: time limit of each test"),
    SCR("PME_TEST_TIMEOUT_S", "tests: a program's own time limit"),
    SCR("PME_TEST_VERBOSE", "tests: more output"),
    SCR("PME_TEST_WRAP", "tests: run the programs under this"),
    SCR("PME_VM_CACHE", "test VM: the guest's cache"),
    SCR("PME_VM_KERNEL", "test VM: the guest's kernel"),
    SCR("PME_VM_RAW", "test VM: raw guest options"),
};

const struct pme_env_var *pme_env_vars(size_t *n)
{
    *n = sizeof(vars) / sizeof(vars[0]);
    return vars;
}

const struct pme_env_var *pme_env_var_find(const char *name)
{
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (!strcmp(vars[i].name, name))
            return &vars[i];
    return NULL;
}

static const char *word(int v, const char *const *names, int n)
{
    return v >= 0 && v < n ? names[v] : "?";
}

void pme_env_var_format(const struct pme_env_var *v, const struct pme_config *cfg, char *buf,
                        size_t len)
{
    static const char *const auth[] = {"none", "crc", "mac", "auto"};
    static const char *const wait[] = {"auto", "spin", "block"};
    static const char *const bypass[] = {"0", "1", "auto"};
    const char *p = (const char *)cfg + v->off;
    switch (v->kind) {
    case PME_VAR_UINT: snprintf(buf, len, "%u", *(const unsigned *)(const void *)p); break;
    case PME_VAR_U16: snprintf(buf, len, "0x%04x", *(const uint16_t *)(const void *)p); break;
    case PME_VAR_INT:
    case PME_VAR_BOOL: snprintf(buf, len, "%d", *(const int *)(const void *)p); break;
    case PME_VAR_SIZE: snprintf(buf, len, "%zu", *(const size_t *)(const void *)p); break;
    case PME_VAR_STR: {
        const char *s = *(const char *const *)(const void *)p;
        snprintf(buf, len, "%s", s ? s : "(none)");
        break;
    }
    case PME_VAR_AUTH:
        snprintf(buf, len, "%s", word(*(const int *)(const void *)p, auth, 4));
        break;
    case PME_VAR_WAIT: snprintf(buf, len, "%s", word(*(const int *)(const void *)p, wait, 3)); break;
    case PME_VAR_BYPASS:
        snprintf(buf, len, "%s", word(*(const int *)(const void *)p, bypass, 3));
        break;
    default: snprintf(buf, len, "%s", v->dflt); break;
    }
}

int pme_env_each_unknown(void (*fn)(const char *entry, const char *name, void *arg), void *arg)
{
    extern char **environ;
    int unknown = 0;
    for (char **e = environ; e && *e; e++) {
        char name[128];
        size_t n = strcspn(*e, "=");
        if (strncmp(*e, "PME_", 4) || n >= sizeof(name))
            continue;
        memcpy(name, *e, n);
        name[n] = 0;
        if (pme_env_var_find(name))
            continue;
        fn(*e, name, arg);
        unknown++;
    }
    return unknown;
}

static void warn(const char *entry, const char *name, void *arg)
{
    (void)entry;
    (void)arg;
    fprintf(stderr, "PME: warning: %s is set but PME has no such variable, it is ignored "
                    "(pme_info --config lists them; PME_WARN_UNKNOWN=0 silences this)\n",
            name);
}

int pme_env_warn_unknown(void)
{
    static atomic_int done;
    const char *off = getenv("PME_WARN_UNKNOWN");
    if (atomic_exchange(&done, 1) || (off && !strcmp(off, "0")))
        return 0;
    return pme_env_each_unknown(warn, NULL);
}
