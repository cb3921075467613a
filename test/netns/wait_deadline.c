// SPDX-License-Identifier: BSD-3-Clause
/*
 * wait_deadline - pme_wait keeps the caller's deadline on a real device, sleeping on it.
 *
 *   wait_deadline IFACE        (run by t-wait.sh as root, inside a network namespace)
 *
 * An endpoint with nothing to do returns 0 from pme_wait(ep, ms) no sooner than ms and
 * no later than twice ms (the slack PME allows a caller's deadline is at most its own
 * length) plus a margin for a loaded machine; it sleeps on the device, without polling
 * in block mode, and after PME_SPIN_US of polling in auto mode. PME aims its sleeps at
 * the scheduler tick instead of changing the thread's timer slack: the caller's slack is
 * the same afterwards.
 */
#include <sys/prctl.h>

#include "pme_test.h"

#define MARGIN_MS 250.0 /* scheduling delay on a loaded machine, not PME's doing */
#define CALLER_SLACK_NS 123457

static void wait_for(pme_ep_t *ep, int ms, int wait_mode, const char *mode)
{
    struct pme_counters before, after;
    pme_ep_counters(ep, &before);
    double t0 = now_s();
    int rc = pme_wait(ep, ms);
    double took_ms = (now_s() - t0) * 1e3;
    pme_ep_counters(ep, &after);
    printf("%s: pme_wait(%d ms) took %.3f ms, %llu sleeps, %llu spins\n", mode, ms, took_ms,
           (unsigned long long)(after.wait_sleeps - before.wait_sleeps),
           (unsigned long long)(after.wait_spins - before.wait_spins));
    CHECK(rc == 0, "%s: pme_wait returned %d with nothing to do", mode, rc);
    CHECK(took_ms >= ms, "%s: pme_wait(%d) returned after %.3f ms, before its deadline", mode,
          ms, took_ms);
    CHECK(took_ms <= 2.0 * ms + MARGIN_MS, "%s: pme_wait(%d) returned after %.3f ms", mode, ms,
          took_ms);
    CHECK(after.wait_sleeps > before.wait_sleeps, "%s: pme_wait(%d) never slept", mode, ms);
    if (wait_mode == PME_WAIT_BLOCK)
        CHECK(after.wait_spins == before.wait_spins, "block: pme_wait(%d) polled %llu times",
              ms, (unsigned long long)(after.wait_spins - before.wait_spins));
}

static void run(const char *iface, int wait_mode, const char *mode)
{
    struct pme_config cfg;
    char err[512];
    pme_config_init(&cfg);
    CHECK(pme_config_from_env(&cfg, err, sizeof(err)) == 0, "%s", err);
    cfg.iface = iface;
    cfg.wait_mode = wait_mode;
    /* Auto mode polls for a second by default before it sleeps: shorter here, so that
     * the sleeps that follow the polling are what is checked. */
    if (wait_mode == PME_WAIT_AUTO)
        cfg.spin_us = 200;
    pme_ep_t *ep;
    int rc = pme_ep_open(&cfg, &ep, err, sizeof(err));
    CHECK(rc == 0, "pme_ep_open: %s", err);
    CHECK(pme_ep_fd(ep) >= 0, "device %s has no descriptor to sleep on", pme_ep_device(ep));
    printf("%s: device %s\n", mode, pme_ep_device(ep));
    /* Deadlines below one tick, around one, and of several. */
    static const int deadlines_ms[] = {1, 3, 5, 10, 40};
    for (size_t i = 0; i < sizeof(deadlines_ms) / sizeof(deadlines_ms[0]); i++)
        wait_for(ep, deadlines_ms[i], wait_mode, mode);
    pme_ep_close(ep);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: wait_deadline IFACE\n");
        return 2;
    }
    CHECK(prctl(PR_SET_TIMERSLACK, CALLER_SLACK_NS, 0, 0, 0) == 0, "cannot set timer slack");
    run(argv[1], PME_WAIT_BLOCK, "block");
    run(argv[1], PME_WAIT_AUTO, "auto");
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    CHECK(slack == CALLER_SLACK_NS, "the thread's timer slack is %d after PME's sleeps, was %d",
          slack, CALLER_SLACK_NS);
    printf("timer slack of the thread unchanged (%d ns)\n", slack);
    return 0;
}
