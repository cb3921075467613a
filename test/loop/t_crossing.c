// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_crossing.c - large messages both ways at once: an endpoint's answer to its peer's
 * offer (the CTS) leaves between pieces of its own streams, not after all of them.
 *
 * a offers N rendezvous messages of 1 MiB to b and b accepts each, so a has N streams
 * queued when b's own offer reaches it (b's answers and b's offer travel in that order
 * on one rail). b's message must then be done while most of a's messages are still on
 * their way: were a's answer queued behind a's streams, b's data could not leave until
 * a had sent every byte of them, and the two directions of an exchange would take
 * turns instead of sharing the link (MPI's bidirectional bandwidth was that of one
 * direction). Every message arrives intact and each send completes once.
 * pme-test: tier=default cpu=90 time=1
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pme_test.h"

enum { N = 8, SIZE = 1 << 20, B_SEED = 1000 };

struct side {
    int offers, recv_done, send_done;
};

/* b's message number in the header is N; a's are 0..N-1. */
static void on_event(pme_ep_t *ep, const struct pme_event *ev, struct side *s, uint8_t **in)
{
    int idx = -1;
    switch (ev->type) {
    case PME_EV_RTS:
        CHECK(ev->hdr_len == sizeof(idx), "offer header of %zu bytes", ev->hdr_len);
        memcpy(&idx, ev->hdr, sizeof(idx));
        CHECK(idx >= 0 && idx <= N && in[idx], "offer of message %d", idx);
        CHECK(ev->total == SIZE, "offer of %llu bytes", (unsigned long long)ev->total);
        struct iovec iov = {in[idx], SIZE};
        CHECK_OK(pme_rndv_accept(ep, ev->rndv, &iov, 1, (void *)(uintptr_t)(idx + 1)));
        s->offers++;
        break;
    case PME_EV_RECV_DONE:
        idx = (int)(uintptr_t)ev->ctx - 1;
        CHECK(ev->status == PME_OK && ev->data_len == SIZE, "message %d landed with %d, %zu bytes",
              idx, ev->status, ev->data_len);
        long bad = pattern_check(in[idx], SIZE, idx == N ? B_SEED : (uint32_t)idx);
        CHECK(bad < 0, "message %d wrong at byte %ld", idx, bad);
        s->recv_done++;
        break;
    case PME_EV_SEND_DONE:
        CHECK(ev->status == PME_OK, "a send ended with %d", ev->status);
        s->send_done++;
        break;
    default:
        CHECK(0, "unexpected event %d", ev->type);
    }
}

static void drain(pme_ep_t *ep, struct side *s, uint8_t **in)
{
    struct pme_event ev;
    while (pme_next_event(ep, &ev)) {
        on_event(ep, &ev, s, in);
        pme_event_release(ep, &ev);
    }
}

int main(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, NULL);
    uint8_t *a_out[N], *b_in[N + 1] = {0}, *a_in[N + 1] = {0};
    uint8_t *b_out = malloc(SIZE);
    CHECK(b_out, "out of memory");
    pattern_fill(b_out, SIZE, B_SEED);
    a_in[N] = calloc(1, SIZE);
    CHECK(a_in[N], "out of memory");
    for (int i = 0; i < N; i++) {
        a_out[i] = malloc(SIZE);
        b_in[i] = calloc(1, SIZE);
        CHECK(a_out[i] && b_in[i], "out of memory");
        pattern_fill(a_out[i], SIZE, (uint32_t)i);
        struct iovec iov = {a_out[i], SIZE};
        CHECK_OK(pme_send(lp.a, lp.a_to_b, &i, sizeof(i), &iov, 1, 0, NULL));
    }
    struct side a = {0}, b = {0};
    double deadline = now_s() + 60;
    while (b.offers < N) {
        CHECK(now_s() < deadline, "b took %d of %d offers in 60 s", b.offers, N);
        lp_progress(&lp);
        drain(lp.a, &a, a_in);
        drain(lp.b, &b, b_in);
    }
    int mine = N;
    struct iovec iov = {b_out, SIZE};
    CHECK_OK(pme_send(lp.b, lp.b_to_a, &mine, sizeof(mine), &iov, 1, 0, NULL));
    int a_landed_then = -1;
    while (b.send_done < 1 || a.recv_done < 1 || b.recv_done < N || a.send_done < N) {
        CHECK(now_s() < deadline, "after 60 s: b sent %d of 1, a took %d of 1; a sent %d of %d, "
              "b took %d", b.send_done, a.recv_done, a.send_done, N, b.recv_done);
        lp_progress(&lp);
        drain(lp.a, &a, a_in);
        drain(lp.b, &b, b_in);
        if (b.send_done && a_landed_then < 0)
            a_landed_then = b.recv_done;
    }
    for (int i = 0; i < 1000; i++) { /* nothing more may come */
        lp_progress(&lp);
        drain(lp.a, &a, a_in);
        drain(lp.b, &b, b_in);
    }
    CHECK(a.send_done == N && b.recv_done == N && b.send_done == 1 && a.recv_done == 1,
          "completions: a sent %d and b took %d of %d; b sent %d and a took %d of 1",
          a.send_done, b.recv_done, N, b.send_done, a.recv_done);
    printf("b's 1 MiB message was done when %d of a's %d had landed\n", a_landed_then, N);
    CHECK(a_landed_then <= N / 2,
          "b's message waited for %d of a's %d streams: a's answer to it queued behind them",
          a_landed_then, N);
    CHECK(a.offers == 1 && b.offers == N, "offers taken: a %d, b %d", a.offers, b.offers);
    for (int i = 0; i < N; i++) {
        free(a_out[i]);
        free(b_in[i]);
    }
    free(a_in[N]);
    free(b_out);
    lp_close(&lp);
    printf("crossing streams share the link\n");
    return 0;
}
