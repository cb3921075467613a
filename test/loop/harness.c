// SPDX-License-Identifier: BSD-3-Clause
/*
 * harness.c - see harness.h.
 *
 * Every message carries a small header (its index, its size, a checksum of nothing but
 * those) and data from a pattern seeded by its index, so the receiver can check order,
 * completeness and every byte without keeping copies.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakepeer.h"
#include "pme_test.h"

struct msg_hdr {
    uint64_t index;
    uint64_t size;
    uint64_t magic;
};
#define HDR_MAGIC 0x504d4554455354ull

const uint8_t lp_secret[PME_SECRET_BYTES] = {0x70, 0x6d, 0x65, 0x2d, 0x74, 0x65, 0x73, 0x74,
                                             0x2d, 0x73, 0x65, 0x63, 0x72, 0x65, 0x74, 0x21};

void lp_config(struct pme_config *cfg, struct pme_loop_wire *wire)
{
    pme_config_init(cfg);
    cfg->device = "loop";
    cfg->loop_wire = wire;
    cfg->job_key = LP_JOB_KEY;
    memcpy(cfg->secret, lp_secret, PME_SECRET_BYTES);
    cfg->secret_len = PME_SECRET_BYTES;
    cfg->rto_us = 200;
    cfg->peer_timeout_ms = 20000;
    cfg->counters_shm = 0;
}

void lp_open(struct lp_pair *lp, const struct pme_loop_faults *faults,
             void (*tweak)(struct pme_config *cfg))
{
    char err[256], addr[PME_ADDR_MAX];
    struct pme_config cfg;
    memset(lp, 0, sizeof(*lp));
    CHECK_OK(pme_loop_wire_create(faults, &lp->wire));
    lp_config(&cfg, lp->wire);
    if (tweak)
        tweak(&cfg);
    int rc = pme_ep_open(&cfg, &lp->a, err, sizeof(err));
    CHECK(rc == 0, "open a: %s", err);
    rc = pme_ep_open(&cfg, &lp->b, err, sizeof(err));
    CHECK(rc == 0, "open b: %s", err);
    CHECK_OK(pme_ep_addr(lp->b, addr, sizeof(addr)));
    CHECK_OK(pme_ep_add_peer(lp->a, addr, &lp->a_to_b));
    CHECK_OK(pme_ep_addr(lp->a, addr, sizeof(addr)));
    CHECK_OK(pme_ep_add_peer(lp->b, addr, &lp->b_to_a));
}

void lp_close(struct lp_pair *lp)
{
    pme_ep_close(lp->a);
    pme_ep_close(lp->b);
    pme_loop_wire_destroy(lp->wire);
}

pme_peer_t lp_open_with_fake(struct lp_pair *lp, struct fakepeer *fp, const uint8_t mac[6],
                             uint16_t ep_id, uint32_t node,
                             void (*tweak)(struct pme_config *cfg))
{
    char addr[PME_ADDR_MAX];
    pme_peer_t peer;
    lp_open(lp, NULL, tweak);
    fp_init(fp, lp->wire, lp->a, mac, ep_id, node, lp_secret, LP_JOB_KEY);
    fp_addr(fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(lp->a, addr, &peer));
    return peer;
}

void lp_progress(struct lp_pair *lp)
{
    pme_progress(lp->a);
    pme_progress(lp->b);
}

int lp_accept_offer(struct lp_pair *lp, const struct iovec *iov, int iovcnt, int passes)
{
    struct pme_event ev;
    for (int i = 0; passes < 0 || i < passes; i++) {
        lp_progress(lp);
        if (pme_next_event(lp->b, &ev)) {
            CHECK(ev.type == PME_EV_RTS, "expected the offer, got event %d", ev.type);
            CHECK_OK(pme_rndv_accept(lp->b, ev.rndv, iov, iovcnt, NULL));
            return 1;
        }
    }
    return 0;
}

void lp_print_counters(const char *label, pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    printf("%s:", label);
#define PRINT_FIELD(name) if (c.name) printf(" %s=%llu", #name, (unsigned long long)c.name);
    PME_COUNTER_NAMES(PRINT_FIELD)
#undef PRINT_FIELD
    printf("\n");
}

struct sent {
    uint8_t *buf;
    int busy;
};

struct recv_slot {
    uint8_t *buf;
    uint64_t index, size;
    int busy;
};

static void check_data(const uint8_t *data, uint64_t size, uint64_t index)
{
    long bad = pattern_check(data, size, (uint32_t)index);
    CHECK(bad < 0, "message %llu (%llu bytes): byte %ld is wrong",
          (unsigned long long)index, (unsigned long long)size, bad);
}

int lp_run_stream(struct lp_pair *lp, const struct lp_stream *s)
{
    unsigned window = s->outstanding ? s->outstanding : 16;
    struct sent *sent = calloc(window, sizeof(*sent));
    struct recv_slot *rs = calloc(window * 2 + 8, sizeof(*rs));
    size_t nrs = window * 2 + 8;
    struct pme_event *held = calloc((size_t)s->hold_events + 1, sizeof(*held));
    int nheld = 0;
    uint64_t next_send = 0, send_done = 0, next_recv = 0, recv_done = 0, in_flight = 0;
    uint64_t bytes = 0;
    double t0 = now_s();
    CHECK(sent && rs && held, "out of memory");

    while (recv_done < s->count || send_done < s->count) {
        if (now_s() - t0 >= s->timeout_s) {
            lp_print_counters("sender", lp->a);
            lp_print_counters("receiver", lp->b);
            pme_ep_dump(lp->a, stdout);
            pme_ep_dump(lp->b, stdout);
        }
        CHECK(now_s() - t0 < s->timeout_s,
              "stream stalled: sent %llu/%llu done, received %llu/%llu",
              (unsigned long long)send_done, (unsigned long long)s->count,
              (unsigned long long)recv_done, (unsigned long long)s->count);
        /* keep the sender busy */
        while (next_send < s->count && in_flight < window) {
            unsigned slot = (unsigned)(next_send % window);
            if (sent[slot].busy)
                break;
            uint64_t size = s->sizes[next_send % s->nsizes];
            free(sent[slot].buf);
            sent[slot].buf = malloc(size ? size : 1);
            pattern_fill(sent[slot].buf, size, (uint32_t)next_send);
            struct msg_hdr h = {next_send, size, HDR_MAGIC};
            struct iovec iov = {sent[slot].buf, size};
            int rc = pme_send(lp->a, lp->a_to_b, &h, sizeof(h), &iov, 1, 0,
                              (void *)(uintptr_t)(slot + 1));
            if (rc == PME_EAGAIN)
                break;
            CHECK(rc == PME_OK, "pme_send: %s", pme_strerror(rc));
            sent[slot].busy = 1;
            next_send++;
            in_flight++;
        }
        lp_progress(lp);
        if (s->each_pass)
            s->each_pass(lp, recv_done, s->arg);
        struct pme_event ev;
        int got = 0;
        while (pme_next_event(lp->a, &ev)) {
            CHECK(ev.type == PME_EV_SEND_DONE, "sender got event %d", ev.type);
            CHECK(ev.status == PME_OK, "send failed: %s (%s)", pme_strerror(ev.status),
                  pme_ep_last_error(lp->a));
            unsigned slot = (unsigned)((uintptr_t)ev.ctx - 1);
            CHECK(sent[slot].busy, "completion for an idle slot");
            sent[slot].busy = 0;
            send_done++;
            in_flight--;
        }
        while (pme_next_event(lp->b, &ev)) {
            got++;
            if (ev.type == PME_EV_RECV_DONE) {
                struct recv_slot *r = ev.ctx;
                CHECK(ev.status == PME_OK, "rendezvous receive failed: %s",
                      pme_strerror(ev.status));
                CHECK(ev.data_len == r->size, "rendezvous landed %zu of %llu bytes",
                      ev.data_len, (unsigned long long)r->size);
                check_data(r->buf, r->size, r->index);
                bytes += r->size;
                free(r->buf);
                r->buf = NULL;
                r->busy = 0;
                recv_done++;
                continue;
            }
            CHECK(ev.type == PME_EV_MSG || ev.type == PME_EV_RTS, "receiver got event %d",
                  ev.type);
            CHECK(ev.hdr_len == sizeof(struct msg_hdr), "header of %zu bytes", ev.hdr_len);
            struct msg_hdr h;
            memcpy(&h, ev.hdr, sizeof(h));
            CHECK(h.magic == HDR_MAGIC, "header garbled");
            CHECK(h.index == next_recv, "message %llu arrived when %llu was due",
                  (unsigned long long)h.index, (unsigned long long)next_recv);
            CHECK(h.size == s->sizes[h.index % s->nsizes], "size mismatch");
            next_recv++;
            if (ev.type == PME_EV_MSG) {
                CHECK(ev.data_len == h.size, "eager data of %zu bytes, expected %llu",
                      ev.data_len, (unsigned long long)h.size);
                check_data(ev.data, h.size, h.index);
                bytes += h.size;
                recv_done++;
                if (s->hold_events) {
                    held[nheld++] = ev;
                    if (nheld > s->hold_events) {
                        for (int i = 0; i < nheld; i++)
                            pme_event_release(lp->b, &held[i]);
                        nheld = 0;
                    }
                } else {
                    pme_event_release(lp->b, &ev);
                }
            } else {
                CHECK(ev.total == h.size, "offer of %llu bytes, expected %llu",
                      (unsigned long long)ev.total, (unsigned long long)h.size);
                struct recv_slot *r = NULL;
                for (size_t i = 0; i < nrs && !r; i++)
                    if (!rs[i].busy)
                        r = &rs[i];
                CHECK(r, "too many rendezvous receives at once");
                r->busy = 1;
                r->index = h.index;
                r->size = h.size;
                r->buf = malloc(h.size);
                memset(r->buf, 0xEE, h.size);
                struct iovec iov = {r->buf, h.size};
                CHECK_OK(pme_rndv_accept(lp->b, ev.rndv, &iov, 1, r));
            }
        }
        if (nheld && !got) {
            /* a slow consumer catches up once the flow dries up */
            for (int i = 0; i < nheld; i++)
                pme_event_release(lp->b, &held[i]);
            nheld = 0;
        }
    }
    for (int i = 0; i < nheld; i++)
        pme_event_release(lp->b, &held[i]);
    /* Every frame acknowledged: the receiver must run for its ACKs to come. */
    double t1 = now_s();
    while (pme_ep_flush(lp->a, 0) == PME_ERR_TIMEOUT) {
        pme_progress(lp->b);
        CHECK(now_s() - t1 < 10, "sender never fully acknowledged");
    }
    for (unsigned i = 0; i < window; i++)
        free(sent[i].buf);
    free(sent);
    free(rs);
    free(held);
    if (s->bytes_out)
        *s->bytes_out = bytes;
    return 0;
}
