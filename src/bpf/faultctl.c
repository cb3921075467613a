// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_faultctl - load, set and read the PME fault injector (pme_faults.bpf.c) on one
 * interface of the current network namespace. maint/faults is the user interface; this
 * program does the BPF part of it.
 *
 *   pme_faultctl attach IFACE           load the program and attach it at TC egress
 *   pme_faultctl detach IFACE
 *   pme_faultctl set IFACE SETTING...   drop=P% dup=P% corrupt=P% delay=P%[:TIME]
 *                                       reorder=P%[:TIME] seed=N salt=N ethertype=X
 *                                       clear (every probability 0) reset (counters and
 *                                       the PRNG's position back to 0)
 *   pme_faultctl show IFACE [--kv]      settings and counters (--kv: one key=value line)
 *   pme_faultctl needs-line IFACE       "yes" if delay or reorder is on (they need the
 *                                       delay line), "no" if not
 *   pme_faultctl line IFACE             run the delay line (see pme_faults.h) until the
 *                                       program is detached
 *
 * A new seed also restarts the PRNG at frame 0, so "set IFACE seed=N" before a run makes
 * the run's faults repeatable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "faultline.h"
#include "pme_faults.h"
#include "pme_faults.skel.h"
#include "pme_wire.h"
#include "tc_hook.h"

#define PROG_NAME "pme_faults"
#define DEFAULT_TIME_NS 1000000ull /* delay and reorder: 1 ms unless told */

static char err[512];

static int die(const char *msg)
{
    fprintf(stderr, "pme_faultctl: %s\n", msg);
    return 1;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: pme_faultctl attach|detach|show|needs-line|line IFACE\n"
            "       pme_faultctl set IFACE [drop=P%%] [dup=P%%] [corrupt=P%%] [delay=P%%[:TIME]]\n"
            "                    [reorder=P%%[:TIME]] [seed=N] [salt=N] [ethertype=X] [clear] [reset]\n"
            "P is a percentage with up to 4 decimals (1%%, 0.05%%); TIME is e.g. 500us, 2ms\n");
    return 2;
}

/* ---------------------------------------------------------------- values */

/* "1%", "0.5%", "100%" -> parts per million. */
static int parse_ppm(const char *s, __u32 *ppm)
{
    uint64_t whole = 0, frac = 0;
    int digits = 0, fdigits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++)
        whole = whole * 10 + (uint64_t)(*s - '0');
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, fdigits++)
            frac = frac * 10 + (uint64_t)(*s - '0');
    if (!digits && !fdigits)
        return -1;
    if (strcmp(s, "%") || fdigits > 4 || whole > 100)
        return -1;
    for (; fdigits < 4; fdigits++)
        frac *= 10;
    uint64_t v = whole * 10000 + frac;
    if (v > PME_FAULTS_PPM)
        return -1;
    *ppm = (uint32_t)v;
    return 0;
}

/* "500us", "2ms", "1s", "100ns" -> nanoseconds. */
static int parse_time(const char *s, __u64 *ns)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    uint64_t unit;
    if (!strcmp(end, "ns"))
        unit = 1;
    else if (!strcmp(end, "us"))
        unit = 1000;
    else if (!strcmp(end, "ms"))
        unit = 1000000;
    else if (!strcmp(end, "s"))
        unit = 1000000000;
    else
        return -1;
    if (v > PME_FAULTS_MAX_DELAY_NS / unit)
        return -1;
    *ns = v * unit;
    return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (end == s || *end || errno || *s == '-')
        return -1;
    *v = x;
    return 0;
}

static void fmt_ppm(char *out, size_t len, uint32_t ppm)
{
    int n = snprintf(out, len, "%u.%04u", ppm / 10000, ppm % 10000);
    while (n > 0 && out[n - 1] == '0')
        out[--n] = 0;
    if (n > 0 && out[n - 1] == '.')
        out[--n] = 0;
    snprintf(out + n, len - (size_t)n, "%%");
}

static void fmt_time(char *out, size_t len, uint64_t ns)
{
    if (ns && ns % 1000000000 == 0)
        snprintf(out, len, "%" PRIu64 "s", ns / 1000000000);
    else if (ns && ns % 1000000 == 0)
        snprintf(out, len, "%" PRIu64 "ms", ns / 1000000);
    else if (ns && ns % 1000 == 0)
        snprintf(out, len, "%" PRIu64 "us", ns / 1000);
    else
        snprintf(out, len, "%" PRIu64 "ns", ns);
}

/* ---------------------------------------------------------------- maps */

struct fault_maps {
    uint32_t prog_id;
    int cfg, state, cnt, line;
};

static void close_maps(struct fault_maps *m)
{
    if (m->cfg >= 0)
        close(m->cfg);
    if (m->state >= 0)
        close(m->state);
    if (m->cnt >= 0)
        close(m->cnt);
    if (m->line >= 0)
        close(m->line);
}

/* open_maps: the maps of the program attached to ifname, or an error message. */
static int open_maps(const char *ifname, struct fault_maps *m)
{
    m->cfg = m->state = m->cnt = m->line = -1;
    int rc = pme_tc_query(ifname, PME_TC_EGRESS, PME_TC_PRIO_FAULTS, &m->prog_id, err,
                          sizeof(err));
    if (rc)
        return rc;
    if (!m->prog_id) {
        snprintf(err, sizeof(err),
                 "no fault injector on %s: attach it first (maint/faults attach %s)", ifname,
                 ifname);
        return -ENOENT;
    }
    m->cfg = pme_tc_prog_map(m->prog_id, PROG_NAME, "faults_cfg", err, sizeof(err));
    if (m->cfg >= 0)
        m->state = pme_tc_prog_map(m->prog_id, PROG_NAME, "faults_state", err, sizeof(err));
    if (m->state >= 0)
        m->cnt = pme_tc_prog_map(m->prog_id, PROG_NAME, "faults_cnt", err, sizeof(err));
    if (m->cnt >= 0)
        m->line = pme_tc_prog_map(m->prog_id, PROG_NAME, "faults_lstate", err, sizeof(err));
    if (m->line < 0) {
        close_maps(m);
        return -ENOENT;
    }
    return 0;
}

static int map_io(int rc, const char *what)
{
    if (rc)
        snprintf(err, sizeof(err), "cannot %s: %s", what, strerror(errno));
    return rc;
}

static int reset_state(const struct fault_maps *m)
{
    uint32_t zero = 0;
    struct pme_faults_state st;
    memset(&st, 0, sizeof(st));
    return map_io(bpf_map_update_elem(m->state, &zero, &st, BPF_ANY), "reset the PRNG position");
}

static int reset_counters(const struct fault_maps *m)
{
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0)
        return map_io(-1, "count the CPUs");
    uint64_t *zeros = calloc((size_t)ncpu, sizeof(uint64_t));
    if (!zeros)
        return map_io(-1, "allocate");
    int rc = 0;
    for (uint32_t i = 0; i < PME_FC_COUNT && !rc; i++)
        rc = map_io(bpf_map_update_elem(m->cnt, &i, zeros, BPF_ANY), "reset the counters");
    free(zeros);
    return rc;
}

static int read_counters(const struct fault_maps *m, uint64_t sums[PME_FC_COUNT])
{
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0)
        return map_io(-1, "count the CPUs");
    uint64_t *v = calloc((size_t)ncpu, sizeof(uint64_t));
    if (!v)
        return map_io(-1, "allocate");
    int rc = 0;
    for (uint32_t i = 0; i < PME_FC_COUNT && !rc; i++) {
        rc = map_io(bpf_map_lookup_elem(m->cnt, &i, v), "read the counters");
        sums[i] = 0;
        for (int c = 0; c < ncpu && !rc; c++)
            sums[i] += v[c];
    }
    free(v);
    return rc;
}

/* ---------------------------------------------------------------- commands */

static int cmd_attach(const char *ifname)
{
    uint32_t id;
    if (pme_tc_query(ifname, PME_TC_EGRESS, PME_TC_PRIO_FAULTS, &id, err, sizeof(err)))
        return die(err);
    if (id) {
        printf("%s: fault injector already attached (program id %u)\n", ifname, id);
        return 0;
    }
    struct pme_faults_bpf *skel = pme_faults_bpf__open();
    int ncpu = libbpf_num_possible_cpus();
    if (skel && ncpu > 0)
        bpf_map__set_max_entries(skel->maps.faults_slot, (uint32_t)ncpu);
    if (!skel || pme_faults_bpf__load(skel)) {
        pme_faults_bpf__destroy(skel);
        snprintf(err, sizeof(err), "cannot load the fault program: %s%s", strerror(errno),
                 errno == EPERM ? " (run as root)" : "");
        return die(err);
    }
    uint32_t zero = 0;
    struct pme_faults_cfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ethertype = PME_ETHERTYPE_DEFAULT;
    cfg.delay_ns = cfg.reorder_ns = DEFAULT_TIME_NS;
    int rc = bpf_map_update_elem(bpf_map__fd(skel->maps.faults_cfg), &zero, &cfg, BPF_ANY);
    if (rc)
        snprintf(err, sizeof(err), "cannot write the settings: %s", strerror(errno));
    else
        rc = pme_tc_attach(ifname, PME_TC_EGRESS, PME_TC_PRIO_FAULTS,
                           bpf_program__fd(skel->progs.pme_faults), err, sizeof(err));
    pme_faults_bpf__destroy(skel); /* the attached program keeps itself and its maps */
    if (rc)
        return die(err);
    printf("%s: fault injector attached at TC egress (no faults until set)\n", ifname);
    return 0;
}

static int cmd_detach(const char *ifname)
{
    int rc = pme_tc_detach(ifname, PME_TC_EGRESS, PME_TC_PRIO_FAULTS, err, sizeof(err));
    if (rc == -ENOENT) {
        printf("%s: no fault injector attached\n", ifname);
        return 0;
    }
    if (rc)
        return die(err);
    printf("%s: fault injector detached\n", ifname);
    return 0;
}

/* apply_setting: one SETTING word onto cfg; *restart is set when the PRNG restarts. */
static int apply_setting(const char *word, struct pme_faults_cfg *cfg, int *restart,
                         int *reset)
{
    const char *eq = strchr(word, '=');
    if (!eq) {
        if (!strcmp(word, "clear")) {
            cfg->drop_ppm = cfg->dup_ppm = cfg->corrupt_ppm = 0;
            cfg->delay_ppm = cfg->reorder_ppm = 0;
            return 0;
        }
        if (!strcmp(word, "reset")) {
            *reset = *restart = 1;
            return 0;
        }
        snprintf(err, sizeof(err), "unknown setting '%s' (expected KEY=VALUE, clear or reset)",
                 word);
        return -1;
    }
    size_t klen = (size_t)(eq - word);
    const char *val = eq + 1;
    char key[32];
    if (klen >= sizeof(key))
        klen = sizeof(key) - 1;
    memcpy(key, word, klen);
    key[klen] = 0;

    struct { const char *name; __u32 *ppm; __u64 *ns; } kinds[] = {
        {"drop", &cfg->drop_ppm, NULL},     {"dup", &cfg->dup_ppm, NULL},
        {"corrupt", &cfg->corrupt_ppm, NULL}, {"delay", &cfg->delay_ppm, &cfg->delay_ns},
        {"reorder", &cfg->reorder_ppm, &cfg->reorder_ns},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(key, kinds[i].name))
            continue;
        char pct[32];
        const char *colon = strchr(val, ':');
        size_t plen = colon ? (size_t)(colon - val) : strlen(val);
        if (plen >= sizeof(pct) || (colon && !kinds[i].ns))
            goto bad_pct;
        memcpy(pct, val, plen);
        pct[plen] = 0;
        if (parse_ppm(pct, kinds[i].ppm))
            goto bad_pct;
        if (colon && parse_time(colon + 1, kinds[i].ns)) {
            snprintf(err, sizeof(err),
                     "%s: bad time '%s': a whole number of ns, us, ms or s, at most 1s "
                     "(e.g. %s=5%%:2ms)", word, colon + 1, key);
            return -1;
        }
        return 0;
    bad_pct:
        snprintf(err, sizeof(err),
                 "%s: expected a percentage from 0%% to 100%% with at most 4 decimals%s "
                 "(e.g. %s=0.5%%%s)", word, kinds[i].ns ? " and an optional :TIME" : "", key,
                 kinds[i].ns ? ":2ms" : "");
        return -1;
    }
    uint64_t v;
    if (!strcmp(key, "seed") || !strcmp(key, "salt")) {
        if (parse_u64(val, &v)) {
            snprintf(err, sizeof(err), "%s: expected a non-negative integer", word);
            return -1;
        }
        if (!strcmp(key, "seed"))
            cfg->seed = v;
        else
            cfg->salt = v;
        *restart = 1;
        return 0;
    }
    if (!strcmp(key, "ethertype")) {
        if (parse_u64(val, &v) || v < 0x600 || v > 0xFFFF) {
            snprintf(err, sizeof(err),
                     "%s: expected an EtherType from 0x0600 to 0xffff, e.g. ethertype=0x88b5",
                     word);
            return -1;
        }
        cfg->ethertype = (uint16_t)v;
        return 0;
    }
    snprintf(err, sizeof(err),
             "unknown setting '%s' (known: drop dup corrupt delay reorder seed salt ethertype "
             "clear reset)", key);
    return -1;
}

static int cmd_set(const char *ifname, int nwords, char **words)
{
    struct fault_maps m;
    if (open_maps(ifname, &m))
        return die(err);
    uint32_t zero = 0;
    struct pme_faults_cfg cfg;
    int restart = 0, reset = 0, rc = 0;
    if (map_io(bpf_map_lookup_elem(m.cfg, &zero, &cfg), "read the settings"))
        rc = -1;
    for (int i = 0; i < nwords && !rc; i++)
        rc = apply_setting(words[i], &cfg, &restart, &reset);
    if (!rc)
        rc = map_io(bpf_map_update_elem(m.cfg, &zero, &cfg, BPF_ANY), "write the settings");
    if (!rc && restart)
        rc = reset_state(&m);
    if (!rc && reset)
        rc = reset_counters(&m);
    close_maps(&m);
    return rc ? die(err) : 0;
}

static int cmd_show(const char *ifname, int kv, int line_query)
{
    struct fault_maps m;
    if (open_maps(ifname, &m))
        return die(err);
    uint32_t zero = 0;
    struct pme_faults_cfg cfg;
    struct pme_faults_state st;
    struct pme_faults_line_state ls;
    uint64_t c[PME_FC_COUNT];
    int rc = map_io(bpf_map_lookup_elem(m.cfg, &zero, &cfg), "read the settings");
    if (!rc)
        rc = map_io(bpf_map_lookup_elem(m.state, &zero, &st), "read the state");
    if (!rc)
        rc = map_io(bpf_map_lookup_elem(m.line, &zero, &ls), "read the delay line's state");
    if (!rc)
        rc = read_counters(&m, c);
    close_maps(&m);
    if (rc)
        return die(err);
    if (line_query) {
        printf("%s\n", cfg.delay_ppm || cfg.reorder_ppm ? "yes" : "no");
        return 0;
    }

    char drop[32], dup[32], cor[32], del[32], reo[32], dt[32], rt[32];
    fmt_ppm(drop, sizeof(drop), cfg.drop_ppm);
    fmt_ppm(dup, sizeof(dup), cfg.dup_ppm);
    fmt_ppm(cor, sizeof(cor), cfg.corrupt_ppm);
    fmt_ppm(del, sizeof(del), cfg.delay_ppm);
    fmt_ppm(reo, sizeof(reo), cfg.reorder_ppm);
    fmt_time(dt, sizeof(dt), cfg.delay_ns);
    fmt_time(rt, sizeof(rt), cfg.reorder_ns);
    static const char *names[] = PME_FAULTS_COUNTER_NAMES;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    const char *line = now_ns - ls.alive_ns < PME_FAULTS_LINE_STALE_NS ? "up" : "down";
    uint64_t held = ls.handed - ls.released;
    if (kv) {
        printf("iface=%s prog_id=%u ethertype=0x%04x seed=%" PRIu64 " salt=%" PRIu64
               " position=%" PRIu64 " drop=%s dup=%s corrupt=%s delay=%s:%s reorder=%s:%s"
               " line=%s line_held=%" PRIu64, ifname, m.prog_id, cfg.ethertype,
               (uint64_t)cfg.seed, (uint64_t)cfg.salt, (uint64_t)st.frames, drop, dup, cor,
               del, dt, reo, rt, line, held);
        for (int i = 0; i < PME_FC_COUNT; i++)
            printf(" %s=%" PRIu64, names[i], c[i]);
        printf("\n");
        return 0;
    }
    printf("%s: fault injector (program id %u) on frames of EtherType 0x%04x, seed %" PRIu64
           " salt %" PRIu64 "\n", ifname, m.prog_id, cfg.ethertype, (uint64_t)cfg.seed,
           (uint64_t)cfg.salt);
    printf("  settings: drop %s, dup %s, corrupt %s, delay %s by %s, reorder %s by %s\n", drop,
           dup, cor, del, dt, reo, rt);
    printf("  delay line: %s, holding %" PRIu64 " in-order frames\n", line, held);
    printf("  counters:");
    for (int i = 0; i < PME_FC_COUNT; i++)
        printf("%s %s %" PRIu64, i ? "," : "", names[i], c[i]);
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    const char *cmd = argv[1], *ifname = argv[2];
    pme_tc_quiet_libbpf();
    if (!strcmp(cmd, "attach") && argc == 3)
        return cmd_attach(ifname);
    if (!strcmp(cmd, "detach") && argc == 3)
        return cmd_detach(ifname);
    if (!strcmp(cmd, "set") && argc >= 4)
        return cmd_set(ifname, argc - 3, argv + 3);
    if (!strcmp(cmd, "show") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "--kv"))))
        return cmd_show(ifname, argc == 4, 0);
    if (!strcmp(cmd, "needs-line") && argc == 3)
        return cmd_show(ifname, 0, 1);
    if (!strcmp(cmd, "line") && argc == 3)
        return faultline_run(ifname, err, sizeof(err)) ? die(err) : 0;
    return usage();
}
