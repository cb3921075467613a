/*
 * t_stream.c - messages over the loop wire arrive exactly once, in order and intact,
 * without faults and under each fault the loop device injects (fixed seeds). Where the
 * wire loses and reorders nothing (no faults, or only a device that takes part of a
 * batch), the sender's count of retransmissions is the receiver's count of duplicates:
 * every frame counted as sent again arrived again.
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
    printf("all streams intact\n");
    return 0;
}
