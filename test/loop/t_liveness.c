// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_liveness.c - a peer is dead only when it stops answering, never because it was
 * quiet or because we were busy:
 *   1. two endpoints that exchanged nothing for longer than the peer timeout talk again
 *      while the receiver is busy for a moment: nobody fails;
 *   2. a sender that computed (made no progress) for longer than the timeout, while the
 *      acknowledgement of its last frame waited in its device, finds the
 *      acknowledgement before any timer may call the peer dead (blocking wait, which
 *      sleeps on the device's descriptor);
 *   3. the control: a peer that really vanished is still declared dead after the
 *      timeout, and not much sooner;
 *   4. a receiver that goes to sleep acknowledges first: a delayed ACK waits for a reply
 *      to carry it, and a sleeper sends none (its timer, stretched to the scheduler
 *      tick, outlived the sender's retransmission timeout).
 * pme-test: tier=default cpu=40 time=2
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "pme_test.h"

#define TIMEOUT_MS 300

static void short_timeout(struct pme_config *cfg)
{
    cfg->peer_timeout_ms = TIMEOUT_MS;
}

static void short_timeout_block(struct pme_config *cfg)
{
    cfg->peer_timeout_ms = TIMEOUT_MS;
    cfg->wait_mode = PME_WAIT_BLOCK;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Progress ep alone for ms milliseconds. */
static void progress_alone(pme_ep_t *ep, unsigned ms)
{
    double end = now_s() + ms / 1000.0;
    while (now_s() < end)
        pme_progress(ep);
}

/* Drain ep's events; fail the test on a PEER_FAILED; count eager messages. */
static int drain(pme_ep_t *ep, const char *who)
{
    struct pme_event ev;
    int msgs = 0;
    while (pme_next_event(ep, &ev)) {
        CHECK(ev.type != PME_EV_PEER_FAILED, "%s declared its peer dead (%s): %s", who,
              pme_strerror(ev.status), pme_ep_last_error(ep));
        if (ev.type == PME_EV_MSG) {
            msgs++;
            pme_event_release(ep, &ev);
        }
    }
    return msgs;
}

/* Progress both for ms milliseconds: delayed acknowledgements leave, everything
 * outstanding is acknowledged. */
static void settle(struct lp_pair *lp, unsigned ms)
{
    double end = now_s() + ms / 1000.0;
    while (now_s() < end) {
        lp_progress(lp);
        drain(lp->a, "a");
        drain(lp->b, "b");
    }
}

static void send_one(pme_ep_t *ep, pme_peer_t peer, const char *what)
{
    CHECK(pme_send(ep, peer, what, strlen(what), NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
          "send %s", what);
}

static void test_quiet_spell(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, short_timeout);
    send_one(lp.a, lp.a_to_b, "hello");
    int got = 0;
    for (int i = 0; i < 200 && !got; i++) {
        lp_progress(&lp);
        got += drain(lp.b, "b");
        drain(lp.a, "a");
    }
    CHECK(got == 1, "first message not delivered");
    settle(&lp, 20);

    /* Nothing to say for 1.5 timeouts: both simply sleep. */
    sleep_ms(TIMEOUT_MS * 3 / 2);
    send_one(lp.a, lp.a_to_b, "again");
    progress_alone(lp.a, 20); /* the receiver is busy for 20 ms: a's timer fires */
    drain(lp.a, "a");
    double end = now_s() + 0.2;
    got = 0;
    while (now_s() < end) {
        lp_progress(&lp);
        got += drain(lp.b, "b");
        drain(lp.a, "a");
    }
    CHECK(got == 1, "the message after the quiet spell was not delivered (%d)", got);
    lp_close(&lp);
    printf("quiet spell: peers stay alive\n");
}

/* Open a pair that can sleep on its devices, deliver a first message and let the pair
 * settle for settle_ms, then send a second one, not yet read. */
static void open_and_send_second(struct lp_pair *lp, void (*tune)(struct pme_config *),
                                 unsigned settle_ms)
{
    lp_open(lp, NULL, tune);
    CHECK(pme_ep_fd(lp->a) >= 0 && pme_ep_fd(lp->b) >= 0,
          "the loop device has no descriptor to sleep on");
    send_one(lp->a, lp->a_to_b, "first");
    settle(lp, settle_ms);
    send_one(lp->a, lp->a_to_b, "second");
}

static void test_busy_sender_finds_ack(void)
{
    struct lp_pair lp;
    /* a sends, b receives and acknowledges (its delayed ACK leaves within ms), but a
     * computes and makes no progress for longer than the timeout. */
    open_and_send_second(&lp, short_timeout_block, 20);
    int got = 0;
    double end = now_s() + 0.05;
    while (now_s() < end) {
        pme_progress(lp.b);
        got += drain(lp.b, "b");
    }
    CHECK(got == 1, "b did not get the second message");
    sleep_ms(TIMEOUT_MS * 3 / 2);
    /* a comes back and waits: the ACK is waiting in its device. */
    pme_wait(lp.a, 5);
    drain(lp.a, "a");
    for (int i = 0; i < 50; i++) {
        pme_wait(lp.a, 1);
        drain(lp.a, "a");
    }
    lp_close(&lp);
    printf("busy sender: the waiting acknowledgement is seen before any verdict\n");
}

static void test_dead_peer_still_detected(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, short_timeout);
    send_one(lp.a, lp.a_to_b, "x");
    settle(&lp, 20);
    sleep_ms(TIMEOUT_MS * 3 / 2); /* a quiet spell first: the clock starts at the send */
    pme_loop_wire_cut(lp.wire, lp.b);
    double t0 = now_s();
    send_one(lp.a, lp.a_to_b, "y");
    int failed = 0;
    while (!failed) {
        pme_progress(lp.a);
        struct pme_event ev;
        while (pme_next_event(lp.a, &ev))
            if (ev.type == PME_EV_PEER_FAILED)
                failed = 1;
        CHECK(now_s() - t0 < TIMEOUT_MS / 1000.0 * 3 + 2, "a dead peer was never detected");
    }
    double took = now_s() - t0;
    CHECK(took >= TIMEOUT_MS / 1000.0 * 0.9, "declared dead %.3fs after the send, before the "
          "timeout", took);
    printf("vanished peer: dead after %.3fs (timeout %d ms)\n", took, TIMEOUT_MS);
    lp_close(&lp);
}

/* A delayed ACK due 100 ms after a frame: far later than the sleep below. */
static void long_ack_delay_block(struct pme_config *cfg)
{
    cfg->wait_mode = PME_WAIT_BLOCK;
    cfg->rto_us = 400000;
}

static void test_sleeper_acks_first(void)
{
    struct lp_pair lp;
    open_and_send_second(&lp, long_ack_delay_block, 300);
    int got = 0;
    for (int i = 0; i < 1000 && !got; i++) {
        pme_progress(lp.b);
        got += drain(lp.b, "b");
    }
    CHECK(got == 1, "b did not get the second message");
    struct pme_counters before, after;
    pme_ep_counters(lp.b, &before);
    pme_wait(lp.b, 20);
    pme_ep_counters(lp.b, &after);
    CHECK(after.wait_sleeps > before.wait_sleeps, "b did not sleep in pme_wait");
    CHECK(after.ack_tx > before.ack_tx,
          "b slept 20 ms with the ACK of a frame held back (its delayed ACK was due later)");
    pme_ep_counters(lp.a, &before);
    after = before;
    for (int i = 0; i < 1000 && after.ack_rx == before.ack_rx; i++) {
        pme_progress(lp.a);
        drain(lp.a, "a");
        pme_ep_counters(lp.a, &after);
    }
    CHECK(after.ack_rx > before.ack_rx, "a never got b's ACK");
    CHECK(after.retransmits == before.retransmits, "a retransmitted");
    lp_close(&lp);
    printf("sleeping receiver: acknowledged before it slept\n");
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"quiet_spell", test_quiet_spell},
        {"busy_sender_finds_ack", test_busy_sender_finds_ack},
        {"dead_peer_still_detected", test_dead_peer_still_detected},
        {"sleeper_acks_first", test_sleeper_acks_first},
    };
    return run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
}
