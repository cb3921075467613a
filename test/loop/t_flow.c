// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_flow.c - flow control.
 *
 * Credits: a receiver that does not consume its messages makes the sender wait for
 * credit; no eager frame is ever refused for want of a buffer, and once the receiver
 * consumes, everything arrives.
 * STOP/GO: when rendezvous offers fill the receive pool, the receiver answers STOP and
 * discards; once it answers the offers it sends GO; every message still arrives, once
 * and in order.
 * pme-test: tier=default cpu=110 time=1
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "pme_test.h"

static struct pme_counters counters(pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return c;
}

static void small_credit(struct pme_config *cfg)
{
    cfg->credit_bytes = 8192;
}

static void test_credits(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, small_credit);
    enum { N = 400 };
    uint8_t payload[100];
    struct pme_event held[N], ev;
    int nheld = 0;
    /* Send far more than the credit covers, without the receiver releasing. */
    for (int i = 0; i < N; i++) {
        pattern_fill(payload, sizeof(payload), (uint32_t)i);
        struct iovec iov = {payload, sizeof(payload)};
        CHECK(pme_send(lp.a, lp.a_to_b, &i, sizeof(i), &iov, 1, PME_SEND_NO_EVENT, NULL) ==
                  PME_DONE, "eager send %d", i);
    }
    for (int spin = 0; spin < 20000; spin++) {
        lp_progress(&lp);
        while (pme_next_event(lp.b, &ev))
            held[nheld++] = ev;
    }
    struct pme_counters ca = counters(lp.a), cb = counters(lp.b);
    /* 8 KiB of credit, 192 bytes a message: about 42 messages, then the sender waits. */
    CHECK(nheld > 0 && nheld < N, "%d of %d arrived without credit being returned", nheld, N);
    CHECK(ca.credit_stalls > 0, "the sender never waited for credit");
    CHECK(cb.drop_no_buffer == 0 && cb.stop_tx == 0,
          "the receiver had to refuse frames (%llu) although credit should prevent it",
          (unsigned long long)cb.drop_no_buffer);
    printf("credits: %d of %d delivered before the receiver consumed; sender stalled %llu times\n",
           nheld, N, (unsigned long long)ca.credit_stalls);
    /* Consume; credit flows back; the rest arrives in order. */
    int next = 0;
    for (int i = 0; i < nheld; i++) {
        int idx;
        memcpy(&idx, held[i].hdr, sizeof(idx));
        CHECK(idx == next, "message %d arrived when %d was due", idx, next);
        CHECK(pattern_check(held[i].data, held[i].data_len, (uint32_t)idx) < 0, "data %d", idx);
        next++;
        pme_event_release(lp.b, &held[i]);
    }
    for (int spin = 0; spin < 200000 && next < N; spin++) {
        lp_progress(&lp);
        while (pme_next_event(lp.b, &ev)) {
            int idx;
            memcpy(&idx, ev.hdr, sizeof(idx));
            CHECK(idx == next, "message %d arrived when %d was due", idx, next);
            CHECK(pattern_check(ev.data, ev.data_len, (uint32_t)idx) < 0, "data %d", idx);
            next++;
            pme_event_release(lp.b, &ev);
        }
    }
    CHECK(next == N, "only %d of %d arrived after releasing", next, N);
    cb = counters(lp.b);
    CHECK(cb.drop_no_buffer == 0, "frames refused");
    lp_close(&lp);
}

static void tiny_pool(struct pme_config *cfg)
{
    cfg->credit_bytes = 0; /* no eager credit: every message is offered */
    cfg->rx_pool_bytes = 4096;
}

static void test_stop_go(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, tiny_pool);
    enum { N = 60, SIZE = 3000 };
    static uint8_t out[N][SIZE], in[N][SIZE];
    uint8_t hdr[200];
    for (int i = 0; i < N; i++) {
        pattern_fill(out[i], SIZE, (uint32_t)i);
        memset(hdr, i, sizeof(hdr));
        struct iovec iov = {out[i], SIZE};
        CHECK_OK(pme_send(lp.a, lp.a_to_b, hdr, sizeof(hdr), &iov, 1, 0, (void *)(intptr_t)i));
    }
    /* The receiver does not answer the offers: their headers fill the pool. */
    struct pme_event offers[N], ev;
    int noffers = 0;
    for (int spin = 0; spin < 20000; spin++) {
        lp_progress(&lp);
        while (pme_next_event(lp.b, &ev)) {
            CHECK(ev.type == PME_EV_RTS, "expected an offer, got %d", ev.type);
            offers[noffers++] = ev;
        }
    }
    struct pme_counters cb = counters(lp.b), ca = counters(lp.a);
    CHECK(noffers > 0 && noffers < N, "%d offers fit a 4 KiB pool", noffers);
    CHECK(cb.stop_tx > 0 && ca.stop_rx > 0, "no STOP (sent %llu, received %llu)",
          (unsigned long long)cb.stop_tx, (unsigned long long)ca.stop_rx);
    CHECK(cb.drop_no_buffer > 0, "nothing was refused");
    printf("stop/go: %d offers filled the pool; STOP sent %llu times\n", noffers,
           (unsigned long long)cb.stop_tx);
    /* Answer the offers: the pool empties, GO lets the rest come. */
    int accepted = 0, landed = 0, sent = 0;
    for (int i = 0; i < noffers; i++) {
        CHECK(((const uint8_t *)offers[i].hdr)[0] == (uint8_t)i, "offer %d out of order", i);
        struct iovec iov = {in[i], SIZE};
        CHECK_OK(pme_rndv_accept(lp.b, offers[i].rndv, &iov, 1, (void *)(intptr_t)i));
        accepted++;
    }
    for (int spin = 0; spin < 400000 && (landed < N || sent < N); spin++) {
        lp_progress(&lp);
        while (pme_next_event(lp.b, &ev)) {
            if (ev.type == PME_EV_RTS) {
                CHECK(((const uint8_t *)ev.hdr)[0] == (uint8_t)accepted,
                      "offer %d arrived when %d was due", ((const uint8_t *)ev.hdr)[0],
                      accepted);
                struct iovec iov = {in[accepted], SIZE};
                CHECK_OK(pme_rndv_accept(lp.b, ev.rndv, &iov, 1, (void *)(intptr_t)accepted));
                accepted++;
            } else {
                CHECK(ev.type == PME_EV_RECV_DONE && ev.status == PME_OK, "receive failed");
                int i = (int)(intptr_t)ev.ctx;
                CHECK(pattern_check(in[i], SIZE, (uint32_t)i) < 0, "message %d corrupt", i);
                landed++;
            }
        }
        while (pme_next_event(lp.a, &ev)) {
            CHECK(ev.type == PME_EV_SEND_DONE && ev.status == PME_OK, "send failed");
            sent++;
        }
    }
    cb = counters(lp.b);
    ca = counters(lp.a);
    CHECK(landed == N && sent == N, "landed %d, sent %d of %d", landed, sent, N);
    CHECK(cb.go_tx > 0 && ca.go_rx > 0, "no GO (sent %llu, received %llu)",
          (unsigned long long)cb.go_tx, (unsigned long long)ca.go_rx);
    lp_print_counters("receiver", lp.b);
    lp_close(&lp);
}

int main(void)
{
    test_credits();
    test_stop_go();
    printf("flow control holds\n");
    return 0;
}
