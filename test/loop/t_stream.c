// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_stream.c - messages over the loop wire arrive exactly once, in order and intact,
 * without faults and under each fault the loop device injects (fixed seeds). Where the
 * wire loses and reorders nothing (no faults, or only a device that takes part of a
 * batch), the sender's count of retransmissions is the receiver's count of duplicates:
 * every frame counted as sent again arrived again.
 *
 * And the round trip is measured in a stream that never fills its window (the
 * estimate is what keeps the retransmission timer above the time acknowledgements
 * spend queued behind data on a loaded link; such a stream had none).
 * pme-test: tier=default cpu=100 time=5
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "pme_test.h"

static const size_t small[] = {0, 1, 8, 64, 100, 1000};
static const size_t mixed[] = {0, 8, 4000, 8950, 8951, 20000, 32700, 32800, 100000, 300000};
static const size_t one_mib[] = {1u << 20};
static const size_t big[] = {64u << 20};

struct fault_case {
    const char *name;
    struct pme_loop_faults f;
};

static void run(const char *fault, const struct pme_loop_faults *f, const char *what,
                const size_t *sizes, size_t nsizes, size_t count)
{
    struct lp_pair lp;
    lp_open(&lp, f, NULL);
    struct lp_stream s = {.count = count, .sizes = sizes, .nsizes = nsizes,
                          .outstanding = 16,
                          .timeout_s = getenv("PME_TEST_TIMEOUT_S") ? atof(getenv("PME_TEST_TIMEOUT_S")) : 120};
    double t0 = now_s();
    lp_run_stream(&lp, &s);
    printf("%-14s %-22s ok in %.2fs\n", fault, what, now_s() - t0);
    if (getenv("PME_TEST_VERBOSE")) {
        lp_print_counters("  sender", lp.a);
        lp_print_counters("  receiver", lp.b);
    }
    if (!f->drop && !f->dup && !f->reorder && !f->corrupt && !f->delay) {
        /* A resend may still be on the wire when the stream is done: b takes it first. */
        struct pme_counters ca, cb;
        double t1 = now_s();
        do {
            lp_progress(&lp);
            pme_ep_counters(lp.a, &ca);
            pme_ep_counters(lp.b, &cb);
        } while (cb.rx_frames != ca.tx_frames && now_s() - t1 < 5);
        CHECK(cb.rx_frames == ca.tx_frames, "%s, %s: %llu frames sent, %llu arrived", fault,
              what, (unsigned long long)ca.tx_frames, (unsigned long long)cb.rx_frames);
        CHECK(ca.retransmits == cb.drop_duplicate,
              "%s, %s: %llu retransmissions counted, %llu duplicates arrived", fault, what,
              (unsigned long long)ca.retransmits, (unsigned long long)cb.drop_duplicate);
    }
    lp_close(&lp);
}

/* A window that never fills, and a timeout floor long enough that no frame goes again
 * even under valgrind: Karn's rule takes no sample from a frame sent twice, so spurious
 * timeouts would hide whether the frames sent once are timed. */
static void huge_window(struct pme_config *cfg)
{
    cfg->window = 4096;
    cfg->rto_us = 500000;
}

/* The largest srtt the sender's state dump shows while the last messages are under way. */
static void read_srtt(struct lp_pair *lp, uint64_t received, void *arg)
{
    long *srtt = arg;
    if (received < 6)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f, "open_memstream");
    pme_ep_dump(lp->a, f);
    fclose(f);
    const char *at = strstr(text, "srtt ");
    long v = at ? strtol(at + 5, NULL, 10) : -1;
    if (v > *srtt)
        *srtt = v;
    free(text);
}

static void rtt_without_full_window(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, huge_window);
    long srtt = -1;
    struct lp_stream s = {.count = 8, .sizes = one_mib, .nsizes = 1, .outstanding = 4,
                          .timeout_s = 120, .each_pass = read_srtt, .arg = &srtt};
    lp_run_stream(&lp, &s);
    CHECK(srtt >= 0, "the sender's dump never showed its rail while the stream was under way");
    CHECK(srtt > 0, "no round trip measured in six 1 MiB messages in a window of 4096 frames");
    struct pme_counters c;
    pme_ep_counters(lp.a, &c);
    CHECK(c.retransmits == 0, "%llu frames sent again on a wire that loses nothing",
          (unsigned long long)c.retransmits);
    printf("round trip measured with the window never full (srtt %ld us)\n", srtt);
    lp_close(&lp);
}

int main(void)
{
    int quick = getenv("PME_TEST_QUICK") != NULL;
    const struct fault_case cases[] = {
        {"none", {0}},
        {"drop 1%", {.seed = 11, .drop = 0.01}},
        {"drop 5%", {.seed = 12, .drop = 0.05}},
        {"drop 20%", {.seed = 13, .drop = 0.20}},
        {"duplicate 5%", {.seed = 14, .dup = 0.05}},
        {"reorder 5%", {.seed = 15, .reorder = 0.05}},
        {"corrupt 5%", {.seed = 16, .corrupt = 0.05}},
        {"delay 2%", {.seed = 17, .delay = 0.02, .delay_frames = 20}},
        {"device full 5%", {.seed = 19, .full = 0.05}},
        {"device full 60%", {.seed = 20, .full = 0.60}}, /* resends meet refusals */
        {"all mixed", {.seed = 18, .drop = 0.02, .dup = 0.02, .reorder = 0.02,
                       .corrupt = 0.02, .delay = 0.01, .delay_frames = 7}},
    };
    const char *only = getenv("PME_TEST_CASE");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct fault_case *c = &cases[i];
        if (only && strcmp(only, c->name))
            continue;
        run(c->name, &c->f, "5000 small", small, 6, quick ? 500 : 5000);
        run(c->name, &c->f, "mixed sizes", mixed, 10, quick ? 20 : 200);
        run(c->name, &c->f, "1 MiB x 8", one_mib, 1, quick ? 2 : 8);
        if (!quick)
            run(c->name, &c->f, "64 MiB", big, 1, 1);
    }
    rtt_without_full_window();
    printf("all streams intact\n");
    return 0;
}
