// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_peer_dead.c - a peer that vanishes: operations fail with PME_ERR_PEER_DEAD after
 * the peer timeout, never hang and never deliver garbage.
 *   1. the sender has frames in flight to a dead receiver;
 *   2. the sender waits for the answer to a rendezvous offer that will never come;
 *   3. the receiver accepted a rendezvous and the sender dies mid-stream.
 * pme-test: tier=default cpu=100 time=1
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "pme_test.h"

#define TIMEOUT_MS 300

static void short_timeout(struct pme_config *cfg)
{
    cfg->peer_timeout_ms = TIMEOUT_MS;
}

/* Progress both until ep reports the peer failed; check the time it took. */
static void expect_failure(struct lp_pair *lp, pme_ep_t *ep, double t0, int *send_fail,
                           int *recv_fail)
{
    int failed = 0;
    while (!failed) {
        lp_progress(lp);
        struct pme_event ev;
        while (pme_next_event(ep, &ev)) {
            if (ev.type == PME_EV_PEER_FAILED) {
                CHECK(ev.status == PME_ERR_PEER_DEAD, "status %d", ev.status);
                failed = 1;
            } else if (ev.type == PME_EV_SEND_DONE && ev.status == PME_ERR_PEER_DEAD) {
                (*send_fail)++;
            } else if (ev.type == PME_EV_RECV_DONE) {
                CHECK(ev.status == PME_ERR_PEER_DEAD, "receive ended with %d", ev.status);
                (*recv_fail)++;
            } else if (ev.type == PME_EV_MSG) {
                pme_event_release(ep, &ev);
            }
        }
        CHECK(now_s() - t0 < TIMEOUT_MS / 1000.0 * 3 + 2, "no failure after %.1fs",
              now_s() - t0);
    }
    double took = now_s() - t0;
    CHECK(took >= TIMEOUT_MS / 1000.0 * 0.9, "declared dead too early (%.3fs)", took);
    printf("  failed after %.3fs (timeout %d ms): %s\n", took, TIMEOUT_MS, pme_ep_last_error(ep));
    CHECK(strstr(pme_ep_last_error(ep), "PME_PEER_TIMEOUT_MS"), "message does not name the knob");
}

static void test_inflight(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, short_timeout);
    static uint8_t big[1 << 20];
    struct iovec iov = {big, sizeof(big)};
    /* Warm up the connection, then cut the receiver and send more. */
    CHECK(pme_send(lp.a, lp.a_to_b, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    for (int i = 0; i < 100; i++)
        lp_progress(&lp);
    pme_loop_wire_cut(lp.wire, lp.b);
    double t0 = now_s();
    for (int i = 0; i < 10; i++)
        CHECK(pme_send(lp.a, lp.a_to_b, "y", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
              "eager");
    CHECK_OK(pme_send(lp.a, lp.a_to_b, "z", 1, &iov, 1, 0, NULL));
    int sf = 0, rf = 0;
    printf("sender with frames in flight:\n");
    expect_failure(&lp, lp.a, t0, &sf, &rf);
    CHECK(sf == 1, "the rendezvous send did not fail (%d)", sf);
    CHECK(pme_send(lp.a, lp.a_to_b, "w", 1, NULL, 0, 0, NULL) == PME_ERR_PEER_DEAD,
          "new sends must fail at once");
    lp_close(&lp);
}

static void test_offer_unanswered(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, short_timeout);
    static uint8_t big[1 << 20];
    struct iovec iov = {big, sizeof(big)};
    CHECK_OK(pme_send(lp.a, lp.a_to_b, "o", 1, &iov, 1, 0, NULL));
    /* The offer arrives and is acknowledged; the receiver's program never answers. */
    for (int i = 0; i < 2000; i++)
        lp_progress(&lp);
    pme_loop_wire_cut(lp.wire, lp.b);
    double t0 = now_s();
    int sf = 0, rf = 0;
    printf("sender waiting for an answer:\n");
    expect_failure(&lp, lp.a, t0, &sf, &rf);
    CHECK(sf == 1, "the waiting send did not fail");
    lp_close(&lp);
}

static void test_stream_cut(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, short_timeout);
    static uint8_t big[16 << 20], dst[16 << 20];
    struct iovec iov = {big, sizeof(big)};
    CHECK_OK(pme_send(lp.a, lp.a_to_b, "s", 1, &iov, 1, 0, NULL));
    struct iovec d = {dst, sizeof(dst)};
    lp_accept_offer(&lp, &d, 1, -1);
    for (int i = 0; i < 3; i++)
        lp_progress(&lp); /* the stream starts: a few windows of 16 MiB */
    pme_loop_wire_cut(lp.wire, lp.a);
    double t0 = now_s();
    int sf = 0, rf = 0;
    printf("receiver of a stream whose sender died:\n");
    expect_failure(&lp, lp.b, t0, &sf, &rf);
    CHECK(rf == 1, "the receive did not fail");
    lp_close(&lp);
}

int main(void)
{
    test_inflight();
    test_offer_unanswered();
    test_stream_cut();
    printf("dead peers detected\n");
    return 0;
}
