// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_rails.c - an endpoint of two interfaces (two loop devices, each on a wire of its
 * own, as two switches are) talks to another such endpoint over two rails:
 *   small    small messages take one rail; the other carries only its handshake;
 *   stripe   1 MiB messages are striped over both rails and arrive intact, in order;
 *   loss     loss on one rail is repaired on that rail alone: the clean rail resends
 *            nothing;
 *   cut      a rail whose link goes down mid-stream is dropped with one warning and
 *            the stream finishes over the other;
 *   silent   a rail that stops answering (its wire drops everything) is dropped once
 *            the peer answered on the other for PME_RAIL_TIMEOUT_MS;
 *   primary  the rail carrying the in-order messages goes down mid-stream: they go
 *            again over the other rail and each arrives once, in order;
 *   last     when the last rail goes down too, the peer fails with the link-down
 *            error naming both nodes;
 *   rma      one-sided accumulates of several frames each while the rail that carries
 *            them goes down: the target combines each exactly once.
 * Every fault is deterministic (seeded loop wires); only the rails' timers are clocks.
 * pme-test: tier=default cpu=100 time=2
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

/* Under valgrind (PME_TEST_QUICK) everything runs ten times slower or more: so do the
 * timers, and the streams are shorter. */
static unsigned slow(void)
{
    return getenv("PME_TEST_QUICK") ? 10 : 1;
}
static size_t count(size_t n)
{
    return getenv("PME_TEST_QUICK") ? (n + 3) / 4 : n;
}
#define LINK_DOWN_MS (100 * slow())
#define RAIL_TIMEOUT_MS (300 * slow())

static const size_t small[] = {0, 8, 64, 100, 1000};
static const size_t one_mib[] = {1u << 20};
static const size_t mixed[] = {8, 1u << 20, 100, 300000, 4000};

struct rails {
    struct lp_pair lp;
    struct pme_loop_wire *wires[2];
};

static void open_rails(struct rails *t, const struct pme_loop_faults *rail1_faults)
{
    char err[256], addr[PME_ADDR_MAX];
    struct pme_config cfg;
    memset(t, 0, sizeof(*t));
    CHECK_OK(pme_loop_wire_create(NULL, &t->wires[0]));
    CHECK_OK(pme_loop_wire_create(rail1_faults, &t->wires[1]));
    t->lp.wire = t->wires[0];
    lp_config(&cfg, t->wires[0]);
    cfg.iface = "r0,r1";
    cfg.loop_wires[0] = t->wires[0];
    cfg.loop_wires[1] = t->wires[1];
    /* Timers that a loaded machine does not fire by accident: only real losses resend. */
    cfg.rto_us = 20000 * slow();
    cfg.link_down_ms = LINK_DOWN_MS;
    cfg.rail_timeout_ms = RAIL_TIMEOUT_MS;
    CHECK(pme_ep_open(&cfg, &t->lp.a, err, sizeof(err)) == 0, "open a: %s", err);
    CHECK(pme_ep_open(&cfg, &t->lp.b, err, sizeof(err)) == 0, "open b: %s", err);
    CHECK_OK(pme_ep_addr(t->lp.b, addr, sizeof(addr)));
    CHECK(strchr(addr, ','), "the address of an endpoint of two rails names one MAC: %s", addr);
    CHECK_OK(pme_ep_add_peer(t->lp.a, addr, &t->lp.a_to_b));
    CHECK_OK(pme_ep_addr(t->lp.a, addr, sizeof(addr)));
    CHECK_OK(pme_ep_add_peer(t->lp.b, addr, &t->lp.b_to_a));
}

static void close_rails(struct rails *t)
{
    pme_ep_close(t->lp.a);
    pme_ep_close(t->lp.b);
    pme_loop_wire_destroy(t->wires[0]);
    pme_loop_wire_destroy(t->wires[1]);
}

static struct pme_iface_counters iface(pme_ep_t *ep, unsigned i)
{
    struct pme_iface_counters c;
    char name[16];
    CHECK_OK(pme_ep_iface_counters(ep, i, name, sizeof(name), &c));
    CHECK(!strcmp(name, i ? "r1" : "r0"), "interface %u is called %s", i, name);
    return c;
}

static uint64_t counter(pme_ep_t *ep, size_t offset)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return *(const uint64_t *)((const char *)&c + offset);
}
#define COUNTER(ep, name) counter(ep, offsetof(struct pme_counters, name))

static void stream(struct rails *t, const size_t *sizes, size_t nsizes, size_t n,
                   void (*each_pass)(struct lp_pair *, uint64_t, void *), void *arg)
{
    struct lp_stream s = {.count = n, .sizes = sizes, .nsizes = nsizes, .outstanding = 16,
                          .timeout_s = 60.0 * slow(), .each_pass = each_pass, .arg = arg};
    lp_run_stream(&t->lp, &s);
}

static void test_small(void)
{
    struct rails t;
    open_rails(&t, NULL);
    stream(&t, small, 5, count(2000), NULL, NULL);
    struct pme_iface_counters r0 = iface(t.lp.a, 0), r1 = iface(t.lp.a, 1);
    printf("small: %zu messages: rail 0 sent %llu frames, rail 1 %llu\n",
           count(2000), (unsigned long long)r0.tx_frames, (unsigned long long)r1.tx_frames);
    /* Every message alone, or every bundle of them (PME_COALESCE), is a frame at least. */
    uint64_t items = count(2000) - COUNTER(t.lp.a, tx_bundled) + COUNTER(t.lp.a, tx_bundles);
    CHECK(r0.tx_frames >= items, "rail 0 carried %llu frames for %llu messages and bundles",
          (unsigned long long)r0.tx_frames, (unsigned long long)items);
    /* Rail 1: its HELLO, and perhaps a repeat or an ACK of the peer's HELLO. */
    CHECK(r1.tx_frames <= 4, "small messages went over rail 1 too (%llu frames)",
          (unsigned long long)r1.tx_frames);
    close_rails(&t);
}

static void test_stripe(void)
{
    struct rails t;
    open_rails(&t, NULL);
    stream(&t, one_mib, 1, count(16), NULL, NULL);
    stream(&t, mixed, 5, count(50), NULL, NULL);
    struct pme_iface_counters r0 = iface(t.lp.a, 0), r1 = iface(t.lp.a, 1);
    struct pme_iface_counters b0 = iface(t.lp.b, 0), b1 = iface(t.lp.b, 1);
    uint64_t sum = r0.tx_frames + r1.tx_frames;
    printf("stripe: rail 0 sent %llu frames, rail 1 %llu (%.0f%%); received %llu and %llu\n",
           (unsigned long long)r0.tx_frames, (unsigned long long)r1.tx_frames,
           100.0 * (double)r1.tx_frames / (double)sum, (unsigned long long)b0.rx_frames,
           (unsigned long long)b1.rx_frames);
    CHECK(r1.tx_frames * 10 >= sum * 4 && r0.tx_frames * 10 >= sum * 4,
          "the rails did not share the stream: %llu and %llu frames",
          (unsigned long long)r0.tx_frames, (unsigned long long)r1.tx_frames);
    CHECK(b1.rx_frames * 10 >= (b0.rx_frames + b1.rx_frames) * 4,
          "the receiver took few frames on rail 1");
    /* Striping must not look like loss: the receiver named no gap. A timeout on a slow
     * host (ASan, a busy machine) may still send frames again. */
    CHECK(COUNTER(t.lp.a, lose_rx) == 0, "the receiver took the stripes for losses (%llu LOSEs)",
          (unsigned long long)COUNTER(t.lp.a, lose_rx));
    CHECK(COUNTER(t.lp.a, retransmits) == 0 || COUNTER(t.lp.a, rto_fired) > 0,
          "a clean stream was resent without a timeout");
    close_rails(&t);
}

static void test_loss(void)
{
    struct rails t;
    struct pme_loop_faults f = {.seed = 21, .drop = 0.05};
    open_rails(&t, &f);
    stream(&t, one_mib, 1, count(24), NULL, NULL);
    /* A lost handshake on rail 1 keeps it waiting for its timer (ten times longer with
     * PME_TEST_QUICK) while rail 0 carries the whole short stream: stream on until rail
     * 1 has carried some. Bounded by time, not by rounds: without valgrind's slowness
     * ten rounds ended before the timer fired. */
    double t0 = now_s();
    while (iface(t.lp.a, 1).tx_frames < 100 && now_s() - t0 < 30)
        stream(&t, one_mib, 1, count(24), NULL, NULL);
    struct pme_iface_counters r0 = iface(t.lp.a, 0), r1 = iface(t.lp.a, 1);
    printf("loss: 5%% drop on rail 1: rail 0 sent %llu frames (%llu again), rail 1 %llu "
           "(%llu again)\n",
           (unsigned long long)r0.tx_frames, (unsigned long long)r0.retransmits,
           (unsigned long long)r1.tx_frames, (unsigned long long)r1.retransmits);
    CHECK(r1.retransmits > 0, "no frame of the lossy rail was sent again");
    CHECK(r0.retransmits == 0, "the clean rail resent %llu frames for the other's losses",
          (unsigned long long)r0.retransmits);
    close_rails(&t);
}

/* Redirect stderr into a file while a scenario runs, to read the warnings back. */
static int grab_stderr(char *path, size_t len)
{
    snprintf(path, len, "/tmp/pme-t_rails.XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static void give_back_stderr(int saved, const char *path, char *out, size_t len)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    out[n] = 0;
    if (f)
        fclose(f);
    unlink(path);
    fputs(out, stderr);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

struct cut {
    uint64_t at;            /* messages received when the cut happens */
    pme_ep_t *ep;
    unsigned iface;
    int done;
    struct pme_loop_wire *silence; /* instead of a cut: this wire drops everything */
};

static void cut_when(struct lp_pair *lp, uint64_t received, void *arg)
{
    struct cut *c = arg;
    if (c->done || received < c->at)
        return;
    c->done = 1;
    if (c->silence) {
        struct pme_loop_faults all = {.seed = 5, .drop = 1.0};
        pme_loop_wire_set_faults(c->silence, &all);
    } else {
        pme_loop_wire_cut_iface(lp->wire, c->ep, c->iface);
    }
}

static void test_cut(void)
{
    struct rails t;
    char path[64], err[4096];
    open_rails(&t, NULL);
    int saved = grab_stderr(path, sizeof(path));
    struct cut c = {.at = 3, .ep = t.lp.a, .iface = 1};
    double t0 = now_s();
    stream(&t, one_mib, 1, 16, cut_when, &c);
    give_back_stderr(saved, path, err, sizeof(err));
    printf("cut: rail 1 of the sender cut after 3 of 16 messages: all arrived in %.2fs\n",
           now_s() - t0);
    CHECK(c.done, "the stream ended before the cut");
    CHECK(COUNTER(t.lp.a, rails_dropped) == 1, "the sender dropped %llu rails",
          (unsigned long long)COUNTER(t.lp.a, rails_dropped));
    CHECK(count_of(err, "pme: warning:") == 1 && strstr(err, "dropped rail 1 (r1)") &&
              strstr(err, "interface r1 is cut"),
          "not one warning naming the rail and why: \"%s\"", err);
    /* Later messages go over rail 0 alone. */
    uint64_t before = iface(t.lp.a, 1).tx_frames;
    stream(&t, one_mib, 1, count(4), NULL, NULL);
    CHECK(iface(t.lp.a, 1).tx_frames == before, "frames still went over the dropped rail");
    close_rails(&t);
}

static void test_silent(void)
{
    struct rails t;
    char path[64], err[4096];
    open_rails(&t, NULL);
    int saved = grab_stderr(path, sizeof(path));
    struct cut c = {.at = 2, .silence = t.wires[1]};
    stream(&t, one_mib, 1, 12, cut_when, &c);
    give_back_stderr(saved, path, err, sizeof(err));
    CHECK(c.done, "the stream ended before rail 1 fell silent");
    CHECK(COUNTER(t.lp.a, rails_dropped) == 1, "the sender dropped %llu rails",
          (unsigned long long)COUNTER(t.lp.a, rails_dropped));
    CHECK(strstr(err, "dropped rail 1") && strstr(err, "PME_RAIL_TIMEOUT_MS"),
          "no warning of the silent rail: \"%s\"", err);
    printf("silent: rail 1 dropped everything after 2 of 12 messages: all arrived\n");
    close_rails(&t);
}

static void test_primary(void)
{
    struct rails t;
    char path[64], err[4096];
    open_rails(&t, NULL);
    int saved = grab_stderr(path, sizeof(path));
    struct cut c = {.at = count(700), .ep = t.lp.a, .iface = 0};
    static const size_t eager_and_big[] = {8, 100, 20000, 4000, 300000, 64};
    stream(&t, eager_and_big, 6, count(3000), cut_when, &c);
    give_back_stderr(saved, path, err, sizeof(err));
    CHECK(c.done, "the stream ended before the cut");
    CHECK(COUNTER(t.lp.a, rails_dropped) == 1, "the sender dropped %llu rails",
          (unsigned long long)COUNTER(t.lp.a, rails_dropped));
    CHECK(strstr(err, "dropped rail 0 (r0)"), "no warning of rail 0: \"%s\"", err);
    printf("primary: rail 0 cut after %zu of %zu messages: each arrived once, in order "
           "(%llu duplicates skipped)\n", count(700), count(3000),
           (unsigned long long)COUNTER(t.lp.b, drop_duplicate));
    close_rails(&t);
}

static void test_rma(void)
{
    enum { WORDS = 6000 }; /* 24000 bytes: several frames at the loop's frame size */
    static uint32_t win[WORDS], ones[WORDS];
    const size_t ops = count(200);
    struct rails t;
    char path[64], err[4096];
    uint32_t key;
    open_rails(&t, NULL);
    for (size_t i = 0; i < WORDS; i++)
        ones[i] = 1;
    memset(win, 0, sizeof(win));
    CHECK_OK(pme_rma_expose(t.lp.b, win, sizeof(win), &key));
    stream(&t, small, 5, 20, NULL, NULL); /* both rails open */
    int saved = grab_stderr(path, sizeof(path));
    /* All queued at once: the first window's frames end inside an accumulate. */
    for (size_t i = 0; i < ops; i++)
        CHECK_OK(pme_rma_acc(t.lp.a, t.lp.a_to_b, key, 0, ones, NULL, sizeof(ones), PME_AOP_SUM,
                             PME_DT_U32, 0));
    lp_progress(&t.lp);
    pme_loop_wire_cut_iface(t.lp.wire, t.lp.a, 0); /* the primary, mid-stream */
    double t0 = now_s();
    while (pme_rma_pending(t.lp.a, t.lp.a_to_b)) {
        CHECK(now_s() - t0 < 30 * slow(), "%u accumulates still pending",
              pme_rma_pending(t.lp.a, t.lp.a_to_b));
        lp_progress(&t.lp);
    }
    give_back_stderr(saved, path, err, sizeof(err));
    int failed = pme_rma_error(t.lp.a, t.lp.a_to_b);
    CHECK(failed == PME_OK, "an accumulate failed: %s", pme_strerror(failed));
    CHECK(COUNTER(t.lp.a, rails_dropped) == 1, "the origin dropped %llu rails",
          (unsigned long long)COUNTER(t.lp.a, rails_dropped));
    size_t wrong = 0;
    for (size_t i = 0; i < WORDS; i++)
        wrong += win[i] != ops;
    CHECK(!wrong, "%zu of %d words are not %zu (word 0: %u)", wrong, WORDS, ops, win[0]);
    int rc;
    t0 = now_s();
    while ((rc = pme_rma_withdraw(t.lp.b, key)) == PME_EAGAIN && now_s() - t0 < 5 * slow())
        lp_progress(&t.lp);
    CHECK(rc == PME_OK, "withdraw: %s", pme_strerror(rc));
    printf("rma: %zu accumulates of %zu bytes, rail 0 cut after the first window: each "
           "combined once\n", ops, sizeof(ones));
    close_rails(&t);
}

static void test_last(void)
{
    struct rails t;
    char path[64], err[4096];
    open_rails(&t, NULL);
    stream(&t, one_mib, 1, 2, NULL, NULL);
    int saved = grab_stderr(path, sizeof(path));
    pme_loop_wire_cut_iface(t.lp.wire, t.lp.a, 1);
    pme_loop_wire_cut_iface(t.lp.wire, t.lp.a, 0);
    static uint8_t big[1 << 20];
    struct iovec iov = {big, sizeof(big)};
    CHECK_OK(pme_send(t.lp.a, t.lp.a_to_b, "x", 1, &iov, 1, 0, NULL));
    double t0 = now_s();
    int failed = 0;
    while (!failed && now_s() - t0 < 10 * slow()) {
        lp_progress(&t.lp);
        struct pme_event ev;
        while (pme_next_event(t.lp.a, &ev))
            if (ev.type == PME_EV_PEER_FAILED) {
                CHECK(ev.status == PME_ERR_LINK_DOWN, "failed with %d", ev.status);
                failed = 1;
            }
    }
    give_back_stderr(saved, path, err, sizeof(err));
    CHECK(failed, "the peer did not fail with both rails down");
    const char *why = pme_ep_last_error(t.lp.a);
    printf("last: both rails down: rail dropped, then the peer failed after %.2fs: %.70s...\n",
           now_s() - t0, why);
    CHECK(strstr(why, "the link from node") && strstr(why, "is down: interface r"),
          "the error does not name the link: %s", why);
    CHECK(count_of(err, "pme: warning:") == 1, "expected one warning before the failure: %s", err);
    close_rails(&t);
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"small", test_small}, {"stripe", test_stripe},   {"loss", test_loss},
        {"cut", test_cut},     {"silent", test_silent},   {"primary", test_primary},
        {"last", test_last},   {"rma", test_rma},
    };
    run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
    printf("rails: all scenarios passed\n");
    return 0;
}
