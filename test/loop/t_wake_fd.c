// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_wake_fd.c - the caller's own wake-up source (pme_ep_set_wake_fd): the netmod's
 * doorbell, rung by MPI's shared-memory senders, must end an idle sleep as a frame does.
 *   1. pme_ep_idle_sleeps says what pme_ep_idle does: sleep when waits block and the
 *      caller has been idle, return at once when waits spin;
 *   2. a readable wake descriptor ends an idle sleep long before its bound, and the
 *      sleep counts as one; the control: without it, the same sleep runs to its bound;
 *   3. pme_wait (a wait inside PME, whose loop does not drain the caller's descriptor)
 *      does not watch it, and a descriptor taken back (-1) is not watched either.
 * pme-test: tier=default cpu=30 time=1
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "pme_test.h"

#define IDLE_US 10000000ull /* long idle: the sleep is the caller's whole bound */

static void blocking(struct pme_config *cfg)
{
    cfg->wait_mode = PME_WAIT_BLOCK;
}

static void spinning(struct pme_config *cfg)
{
    cfg->wait_mode = PME_WAIT_SPIN;
}

static void test_sleeps_says_what_idle_does(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, blocking);
    CHECK(pme_ep_idle_sleeps(lp.b, IDLE_US, 1000),
          "a blocking endpoint idle for 10 s would not sleep");
    CHECK(!pme_ep_idle_sleeps(lp.b, IDLE_US, 0), "a sleep bounded to 0 us would still sleep");
    struct pme_counters before, after;
    pme_ep_counters(lp.b, &before);
    pme_ep_idle(lp.b, IDLE_US, 1000);
    pme_ep_counters(lp.b, &after);
    CHECK(after.wait_sleeps == before.wait_sleeps + 1, "pme_ep_idle slept %llu times, not once",
          (unsigned long long)(after.wait_sleeps - before.wait_sleeps));
    lp_close(&lp);

    lp_open(&lp, NULL, spinning);
    CHECK(!pme_ep_idle_sleeps(lp.b, IDLE_US, 1000), "a spinning endpoint would sleep");
    pme_ep_counters(lp.b, &before);
    pme_ep_idle(lp.b, IDLE_US, 1000);
    pme_ep_counters(lp.b, &after);
    CHECK(after.wait_sleeps == before.wait_sleeps, "a spinning endpoint slept");
    lp_close(&lp);
    printf("idle: pme_ep_idle_sleeps agrees with pme_ep_idle (blocking and spinning)\n");
}

/* Seconds one idle pass of ep took with a sleep bounded to bound_ms. */
static double idle_s(pme_ep_t *ep, unsigned bound_ms)
{
    double t0 = now_s();
    pme_ep_idle(ep, IDLE_US, bound_ms * 1000u);
    return now_s() - t0;
}

static void test_wake_fd_ends_sleep(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, blocking);
    int p[2];
    CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2 failed");
    pme_ep_set_wake_fd(lp.b, p[0]);

    double quiet = idle_s(lp.b, 300);
    CHECK(quiet >= 0.25, "with nothing to wake it, a sleep bounded to 300 ms took %.3f s", quiet);

    CHECK(write(p[1], "x", 1) == 1, "write to the pipe failed");
    struct pme_counters before, after;
    pme_ep_counters(lp.b, &before);
    double rung = idle_s(lp.b, 3000);
    pme_ep_counters(lp.b, &after);
    CHECK(rung < 1.5, "a readable wake descriptor did not end a sleep bounded to 3 s (%.3f s)",
          rung);
    CHECK(after.wait_sleeps == before.wait_sleeps + 1, "the woken sleep was not counted");

    /* Inside PME's own wait the descriptor (still readable: nobody drained it) is not
     * watched: pme_wait runs to its timeout instead of returning at once for ever. */
    double t0 = now_s();
    pme_wait(lp.b, 300);
    double waited = now_s() - t0;
    CHECK(waited >= 0.25, "pme_wait(300 ms) returned after %.3f s: it watched the wake descriptor",
          waited);

    pme_ep_set_wake_fd(lp.b, -1);
    double unwatched = idle_s(lp.b, 300);
    CHECK(unwatched >= 0.25, "a descriptor taken back still ended a sleep (%.3f s of 300 ms)",
          unwatched);
    close(p[0]);
    close(p[1]);
    lp_close(&lp);
    printf("wake descriptor: ends an idle sleep (%.3f s of a 3 s bound; %.3f s to the bound "
           "without it), not pme_wait's\n", rung, quiet);
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"sleeps_says_what_idle_does", test_sleeps_says_what_idle_does},
        {"wake_fd_ends_sleep", test_wake_fd_ends_sleep},
    };
    return run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
}
