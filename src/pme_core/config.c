// SPDX-License-Identifier: BSD-3-Clause
/*
 * config.c - the tunables, their defaults and their PME_* environment variables.
 *
 * The defaults are the ones measured best on a veth pair between namespaces (see
 * doc/benchmarks.md); every one can be overridden per job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pme_internal.h"

void pme_config_init(struct pme_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->device = PME_DEV_DEFAULT;
    cfg->iface = NULL;
    cfg->ep_id = -1;
    cfg->job_key = 0;
    cfg->auth = PME_AUTH_AUTO;
    cfg->hop_limit = PME_HOP_LIMIT_DEFAULT;
    cfg->ethertype = PME_ETHERTYPE_DEFAULT;
    cfg->mtu = 0;
    /* 68 KiB: a 64 KiB message and its headers go eagerly (MPICH's netmod caps the value
     * at its unexpected-message buffer, 68 KiB by default). Measured against 32 KiB,
     * same sizes both ways: MPI ping-pong of 32 and 64 KiB 0.70 and 0.81 of the time at
     * MTU 9000, streams 1.01 to 1.16 times faster; only a bidirectional stream of 64 KiB
     * messages at MTU 9000 lost (0.87), its two copies then sharing both cores. */
    cfg->eager_max = 69632;
    cfg->window = 64;
    /* Seven windows of 9000-byte frames, or one of 65535-byte frames: what a loss on
     * that many busy rails at once keeps. */
    cfg->hold_bytes = 4u << 20;
    cfg->rx_pool_bytes = 32u << 20;
    cfg->tx_pool_bytes = 32u << 20;
    cfg->credit_bytes = 256u << 10;
    /* A bundle is also bounded by one frame. 8 KiB fills a frame at MTU 1500 and most of
     * one at 9000, where messages of 1 and 2 KiB with MPI's header then go three and
     * seven to a bundle instead of alone or in twos: measured at MTU 9000, 1.6 and 2.1
     * times the message rate of 4 KiB bundles (doc/perf/history/2026-11-26-coalescing.md).
     * A smaller bundle holds less of the receiver's credit until its last message is
     * released, and delays its first message less on a slow link (8 KiB take 66 us at
     * 1 Gbit/s). */
    cfg->coalesce_bytes = 8192;
    /* Small messages leave at once until four frames to the peer wait for an answer: a
     * program that sends a message or two to each neighbour and then computes never
     * gathers, while one that sends faster than its peer acknowledges (a message-rate
     * loop, a many-to-one burst) gathers from the fifth frame on, the fourth asking for
     * the acknowledgement at once. Gathering waits for the caller's next call into PME
     * or at most coalesce_us (the helper): Nagle's algorithm held every message behind
     * any frame in flight until the next call, and a wavefront solver that sends and
     * then computes ran 1.6 times slower (doc/transport.md, "Coalescing small
     * messages"). */
    cfg->coalesce_after = 4;
    cfg->coalesce_us = 50;
    cfg->rto_us = 1000;
    cfg->peer_timeout_ms = 60000;
    cfg->link_down_ms = 2000;
    cfg->rail_timeout_ms = 3000;
    /* A peer never heard from is cut off (a filter, a lower MTU on the way, another
     * network) far more often than it is slow to start: an MPI job's ranks have all
     * started before they know each other, and the helper answers while they compute.
     * Ten seconds is several hundred handshake retransmissions. */
    cfg->hello_timeout_ms = 10000;
    cfg->wait_mode = PME_WAIT_AUTO;
    /* Polling costs nothing while the process has a core of its own, and a sleeper costs
     * its peers a wake-up per exchange (measured: an all-to-all bound sort kernel took 2x
     * as long when ranks slept after 100 us of quiet). A second of quiet means the peers
     * compute: then the core goes back. */
    cfg->spin_us = 1000000;
    cfg->yield_us = 100;
    cfg->sleep_slack_us = 4000; /* one scheduler tick at HZ=250, Debian's */
    cfg->local_procs = 0;
    cfg->ring_bytes = 16u << 20;
    /* Below this, pinning (or finding pinned) and arming cost more than the copy saves. */
    cfg->zc_min_bytes = 64u << 10;
    /* About 450 frames of 9000 bytes: several peers' windows. */
    cfg->tx_ring_bytes = 4u << 20;
    /* Off until it measures faster: see doc/perf/history/2026-11-24-tx-ring.md. */
    cfg->qdisc_bypass = PME_BYPASS_OFF;
    cfg->counters_shm = 1;
    cfg->helper = 0;
    cfg->helper_us = 10000;
}

int pme_secret_generate(uint8_t secret[PME_SECRET_BYTES])
{
    return pme_getrandom(secret, PME_SECRET_BYTES) ? PME_ERR_DEVICE : PME_OK;
}

void pme_secret_wipe(void *p, size_t len)
{
    explicit_bzero(p, len);
}

/* The job secret from a file of 32 hexadecimal digits (white space ignored) that is
 * ours and only we may read, as ssh insists for keys: a secret others can read is
 * none, and neither is one another user controls (they could read or replace it). A
 * regular file only: a FIFO would block the open, and a link is not followed. */
static int read_secret(struct pme_config *cfg, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (err)
            snprintf(err, errlen, "PME_JOB_SECRET_FILE=%s cannot be read: %s", path,
                     strerror(errno));
        if (fd >= 0)
            close(fd);
        return PME_ERR_INVAL;
    }
    const char *why = !S_ISREG(st.st_mode) ? "is not a regular file"
                      : st.st_uid != geteuid() ? "belongs to another user"
                      : st.st_mode & 077      ? "may be read by others"
                                              : NULL;
    if (why) {
        close(fd);
        if (err)
            snprintf(err, errlen, "PME_JOB_SECRET_FILE=%s %s (owner uid %u, mode %03o; this "
                     "process runs as uid %u): make a secret of your own, readable by you "
                     "only: pme_info --new-secret > FILE; chmod 600 FILE", path, why,
                     (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777), (unsigned)geteuid());
        return PME_ERR_INVAL;
    }
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    unsigned got = 0;
    for (ssize_t i = 0; n > 0 && i < n; i++) {
        char c = buf[i];
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
            continue;
        int v = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0 || got == 2 * PME_SECRET_BYTES) {
            got = 0;
            break;
        }
        cfg->secret[got / 2] = (uint8_t)(got % 2 ? cfg->secret[got / 2] | v : v << 4);
        got++;
    }
    if (got != 2 * PME_SECRET_BYTES) {
        if (err)
            snprintf(err, errlen, "PME_JOB_SECRET_FILE=%s must hold %d hexadecimal digits "
                     "(make one with: pme_info --new-secret > FILE)", path,
                     2 * PME_SECRET_BYTES);
        return PME_ERR_INVAL;
    }
    cfg->secret_len = PME_SECRET_BYTES;
    return PME_OK;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out, int sizes)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *s == '-')
        return -1;
    if (sizes && *end) {
        unsigned long long mul = 0;
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        }
        if (!mul || (end[1] && strcasecmp(end + 1, "b") && strcasecmp(end + 1, "ib")))
            return -1;
        if (v > max / mul)
            return -1;
        v *= mul;
        end = (char *)"";
    }
    if (*end || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") ||
        !strcasecmp(s, "true")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") ||
        !strcasecmp(s, "false")) {
        *out = 0;
        return 0;
    }
    return -1;
}

/* A value named by a word: the table ends with a NULL name. */
struct choice {
    const char *name;
    int value;
};

static int parse_choice(const char *s, const struct choice *c, int *out)
{
    for (; c->name; c++)
        if (!strcmp(s, c->name)) {
            *out = c->value;
            return 0;
        }
    return -1;
}

static int bad(char *err, size_t errlen, const char *var, const char *val, const char *want)
{
    if (err)
        snprintf(err, errlen, "%s=\"%s\" is not valid: expected %s", var, val, want);
    return PME_ERR_INVAL;
}

int pme_config_from_env(struct pme_config *cfg, char *err, size_t errlen)
{
    const char *v;
    uint64_t u;
    int b;

    if ((v = getenv("PME_DEVICE")) && *v) {
        if (!pme_dev_known(v))
            return bad(err, errlen, "PME_DEVICE", v, "auto, ring, pcap, kernel or loop");
        cfg->device = v;
    }
    if ((v = getenv("PME_IFACE")) && *v)
        cfg->iface = v;
#define NUM(var, field, max, sizes, want)                                   \
    if ((v = getenv(var)) && *v) {                                          \
        if (parse_u64(v, (max), &u, (sizes)))                               \
            return bad(err, errlen, var, v, want);                          \
        cfg->field = (__typeof__(cfg->field))u;                             \
    }
    if ((v = getenv("PME_EP_ID")) && *v) {
        if (parse_u64(v, PME_EP_ID_MAX, &u, 0))
            return bad(err, errlen, "PME_EP_ID", v, "an endpoint id from 0 to 65534");
        cfg->ep_id = (int)u;
    }
    NUM("PME_JOB_KEY", job_key, UINT32_MAX, 0, "a 32-bit number")
    static const struct choice auths[] = {{"auto", PME_AUTH_AUTO}, {"mac", PME_AUTH_MAC},
                                          {"crc", PME_AUTH_CRC}, {"none", PME_AUTH_NONE},
                                          {NULL, 0}};
    if ((v = getenv("PME_AUTH")) && *v && parse_choice(v, auths, &cfg->auth))
        return bad(err, errlen, "PME_AUTH", v, "auto, mac, crc or none");
    if ((v = getenv("PME_JOB_SECRET_FILE")) && *v) {
        int rc = read_secret(cfg, v, err, errlen);
        if (rc)
            return rc;
    }
    NUM("PME_NODE_ID", node_id, 0xFFFFFFFEu, 0, "a node id from 1 to 0xfffffffe")
    NUM("PME_HOP_LIMIT", hop_limit, 255, 0, "a number of hops from 1 to 255")
    if (!cfg->hop_limit)
        return bad(err, errlen, "PME_HOP_LIMIT", getenv("PME_HOP_LIMIT"),
                   "a number of hops from 1 to 255");
    NUM("PME_ETHERTYPE", ethertype, 0xFFFF, 0, "an EtherType such as 0x88b5")
    if (cfg->ethertype < 0x0600)
        return bad(err, errlen, "PME_ETHERTYPE", getenv("PME_ETHERTYPE"),
                   "a value of at least 0x0600 (smaller ones are frame lengths)");
    if ((v = getenv("PME_CHECKSUM")) && *v) {
        /* the tunable of versions before authentication: 0 meant no checksum */
        if (parse_bool(v, &b))
            return bad(err, errlen, "PME_CHECKSUM", v, "1 or 0");
        if (!b)
            cfg->auth = PME_AUTH_NONE;
    }
    NUM("PME_MTU", mtu, 65535, 1, "an MTU in bytes, at most 65535")
    NUM("PME_EAGER_MAX", eager_max, 1u << 30, 1, "a size such as 32k")
    NUM("PME_WINDOW", window, 4096, 0, "a number of frames from 1 to 4096")
    if (cfg->window < 1)
        return bad(err, errlen, "PME_WINDOW", getenv("PME_WINDOW"),
                   "a number of frames from 1 to 4096");
    NUM("PME_HOLD", hold_bytes, 1ull << 40, 1, "a size such as 4m, or 0 for Go-Back-N alone")
    NUM("PME_RX_POOL", rx_pool_bytes, 1ull << 40, 1, "a size such as 32m")
    NUM("PME_TX_POOL", tx_pool_bytes, 1ull << 40, 1, "a size such as 32m")
    NUM("PME_CREDITS", credit_bytes, UINT32_MAX / 4, 1, "a size such as 256k")
    NUM("PME_COALESCE", coalesce_bytes, 65535, 1, "a size such as 4k (at most 64k), or 0 for never")
    NUM("PME_COALESCE_AFTER", coalesce_after, 4096, 0,
        "a number of frames from 0 to 4096 (0: gather only when the link cannot send)")
    NUM("PME_COALESCE_US", coalesce_us, 1000000, 0, "microseconds, at most 1000000")
    NUM("PME_RTO_US", rto_us, 10000000, 0, "microseconds, at most 10000000")
    NUM("PME_PEER_TIMEOUT_MS", peer_timeout_ms, 86400000, 0, "milliseconds")
    NUM("PME_LINK_DOWN_MS", link_down_ms, 86400000, 0, "milliseconds (0: never)")
    NUM("PME_RAIL_TIMEOUT_MS", rail_timeout_ms, 86400000, 0, "milliseconds")
    NUM("PME_HELLO_TIMEOUT_MS", hello_timeout_ms, 86400000, 0,
        "milliseconds (0: only the peer timeout)")
    if (!cfg->rail_timeout_ms)
        return bad(err, errlen, "PME_RAIL_TIMEOUT_MS", "0", "milliseconds, at least 1");
    static const struct choice waits[] = {{"auto", PME_WAIT_AUTO}, {"spin", PME_WAIT_SPIN},
                                          {"block", PME_WAIT_BLOCK}, {NULL, 0}};
    if ((v = getenv("PME_WAIT")) && *v && parse_choice(v, waits, &cfg->wait_mode))
        return bad(err, errlen, "PME_WAIT", v, "auto, spin or block");
    NUM("PME_SPIN_US", spin_us, 100000000, 0, "microseconds")
    NUM("PME_YIELD_US", yield_us, 10000000, 0, "microseconds")
    NUM("PME_SLEEP_SLACK_US", sleep_slack_us, 1000000, 0, "microseconds, at most 1000000")
    NUM("PME_RING", ring_bytes, 1ull << 32, 1, "a size such as 16m")
    NUM("PME_ZC_MIN", zc_min_bytes, 1ull << 40, 1, "a size such as 64k, or 0 for never")
    NUM("PME_TX_RING", tx_ring_bytes, 1ull << 30, 1, "a size such as 4m, or 0")
    static const struct choice bypass[] = {{"auto", PME_BYPASS_AUTO}, {"1", PME_BYPASS_ON},
                                           {"0", PME_BYPASS_OFF}, {NULL, 0}};
    if ((v = getenv("PME_QDISC_BYPASS")) && *v && parse_choice(v, bypass, &cfg->qdisc_bypass))
        return bad(err, errlen, "PME_QDISC_BYPASS", v, "auto, 1 or 0");
    if ((v = getenv("PME_COUNTERS")) && *v) {
        if (parse_bool(v, &b))
            return bad(err, errlen, "PME_COUNTERS", v, "1 or 0");
        cfg->counters_shm = b;
    }
    if ((v = getenv("PME_HELPER")) && *v) {
        if (parse_bool(v, &b))
            return bad(err, errlen, "PME_HELPER", v, "1 or 0");
        cfg->helper = b;
    }
    NUM("PME_HELPER_US", helper_us, 10000000, 0, "microseconds, at most 10000000")
#undef NUM
    return PME_OK;
}
