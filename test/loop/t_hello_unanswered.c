// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_hello_unanswered.c - a peer that never answers the handshake fails early, with its
 * own message, not after the peer timeout as if it had died:
 *   1. the wire to the peer is cut before the first frame: the peer fails with
 *      PME_ERR_NO_ANSWER after PME_HELLO_TIMEOUT_MS (200 ms here, the peer timeout
 *      being 60 s), its text names pme_info --check --probe, and the message
 *      says the handshake went unanswered, names the knob, the likely causes and
 *      pme_info --check --probe;
 *   2. the same with the handshake timeout off (0): nothing fails within a second;
 *   3. a peer that answered once and then went silent is judged by the peer timeout
 *      (300 ms here, with a handshake timeout of 100 ms): PME_ERR_PEER_DEAD, with the
 *      peer timeout's message.
 * pme-test: tier=default cpu=100 time=3
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "pme_test.h"

static unsigned hello_ms, peer_ms;

static void timeouts(struct pme_config *cfg)
{
    cfg->hello_timeout_ms = hello_ms;
    cfg->peer_timeout_ms = peer_ms;
}

/* Progress until a's peer fails or limit seconds pass; returns the seconds it took, or
 * -1 when nothing failed. */
static double wait_failure(struct lp_pair *lp, double limit, int want)
{
    double t0 = now_s();
    while (now_s() - t0 < limit) {
        lp_progress(lp);
        struct pme_event ev;
        while (pme_next_event(lp->a, &ev)) {
            if (ev.type == PME_EV_PEER_FAILED) {
                CHECK(ev.status == want, "status %d, not %d", ev.status, want);
                return now_s() - t0;
            }
            if (ev.type == PME_EV_MSG)
                pme_event_release(lp->a, &ev);
        }
    }
    return -1;
}

/* A pair with these timeouts whose b never hears a frame: a sends it a message. */
static void open_cut(struct lp_pair *lp, unsigned hello, unsigned peer)
{
    hello_ms = hello;
    peer_ms = peer;
    lp_open(lp, NULL, timeouts);
    pme_loop_wire_cut(lp->wire, lp->b);
    CHECK(pme_send(lp->a, lp->a_to_b, "x", 1, NULL, 0, 0, NULL) >= 0, "send");
}

static void never_heard(void)
{
    struct lp_pair lp;
    open_cut(&lp, 200, 60000);
    double took = wait_failure(&lp, 5, PME_ERR_NO_ANSWER);
    const char *e = pme_ep_last_error(lp.a);
    printf("  unanswered handshake failed after %.3fs: %s\n", took, e);
    CHECK(took >= 0.18 && took < 3, "failure after %.3fs, not about 0.2s", took);
    CHECK(strstr(e, "never answered the handshake in 200 ms (PME_HELLO_TIMEOUT_MS)"),
          "the message does not say so");
    CHECK(strstr(e, "drops EtherType 0x88b5") && strstr(e, "MTU below"),
          "the message does not name the likely causes");
    CHECK(strstr(e, "pme_info --check --probe"), "the message does not name the probe");
    CHECK(!strstr(e, "PME_PEER_TIMEOUT_MS"), "the liveness verdict, not the handshake's");
    CHECK(strstr(pme_strerror(PME_ERR_NO_ANSWER), "pme_info --check --probe"),
          "the status text does not name the probe");
    lp_close(&lp);
}

static void hello_timeout_off(void)
{
    struct lp_pair lp;
    open_cut(&lp, 0, 60000);
    double took = wait_failure(&lp, 1, PME_ERR_NO_ANSWER);
    CHECK(took < 0, "failed after %.3fs with PME_HELLO_TIMEOUT_MS=0: %s", took,
          pme_ep_last_error(lp.a));
    printf("  handshake timeout off: no failure within 1s\n");
    lp_close(&lp);
}

static void answered_then_silent(void)
{
    struct lp_pair lp;
    hello_ms = 100;
    peer_ms = 300;
    lp_open(&lp, NULL, timeouts);
    CHECK(pme_send(lp.a, lp.a_to_b, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
          "send");
    for (int i = 0; i < 100; i++)
        lp_progress(&lp);
    pme_loop_wire_cut(lp.wire, lp.b);
    CHECK(pme_send(lp.a, lp.a_to_b, "y", 1, NULL, 0, 0, NULL) >= 0, "send");
    double took = wait_failure(&lp, 5, PME_ERR_PEER_DEAD);
    const char *e = pme_ep_last_error(lp.a);
    printf("  a peer that answered once failed after %.3fs: %s\n", took, e);
    CHECK(took >= 0.27, "failure after %.3fs, before the peer timeout", took);
    CHECK(strstr(e, "PME_PEER_TIMEOUT_MS") && !strstr(e, "handshake"),
          "not the peer timeout's message");
    lp_close(&lp);
}

int main(void)
{
    never_heard();
    hello_timeout_off();
    answered_then_silent();
    printf("an unanswered handshake fails early, with its own message\n");
    return 0;
}
