// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_coalesce.c - small eager messages to one peer travel as bundles (PME_COALESCE):
 *   - bundles: thousands of small messages arrive complete, in order, exactly once,
 *     in far fewer frames, bundles counted at both ends; with PME_COALESCE=0 none;
 *   - when: a message leaves in the call that sends it (it is on the wire when
 *     pme_send returns) to an idle peer and behind fewer than PME_COALESCE_AFTER
 *     unacknowledged frames, the last of which asks for its acknowledgement at once;
 *     the ones after gather, send no frame, and leave as one bundle when that
 *     acknowledgement comes; with PME_COALESCE_AFTER=0 nothing gathers behind frames
 *     in flight, with PME_COALESCE=0 nothing at all;
 *   - mixed: bundleable, larger eager and rendezvous messages interleaved keep their
 *     order; faults: the same under each of the loop wire's seeded faults;
 *   - release: a bundle's events released out of order keep its buffer (and the
 *     peer's credit) until the last, and each event's bytes stay intact till then;
 *   - malformed: forged bundles whose records do not fit (lengths past the end, counts
 *     that disagree, zero-length tricks) are dropped whole and counted, nothing of them
 *     delivered; a well-formed forged one is delivered (the control);
 *   - features: a peer that did not announce PME_FEAT_BUNDLE never gets one;
 *   - idle: messages gathering leave when the caller only idles (pme_ep_idle), when
 *     it waits (pme_wait), when it asks for it (pme_send_waiting, what the netmod calls
 *     after its handlers), and when it stops calling PME altogether: the liveness
 *     helper sends them PME_COALESCE_US after they began to gather (its own period,
 *     after which it would answer for an absent caller, set far longer than the test);
 *   - helper-waits: while the caller is inside PME with messages gathering past their
 *     bound, the helper sleeps to its period instead of spinning on an alarm already
 *     due (it woke tens of thousands of times in 50 ms there; white-box: the test holds
 *     the endpoint's lock itself).
 * pme-test: tier=default cpu=100 time=1
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "eplock.h"
#include "fakepeer.h"
#include "harness.h"
#include "pme_internal.h"
#include "pme_test.h"
#include "pme_wire.h"
#include "progress.h"

static struct pme_counters counters(pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return c;
}

static double limit_s(void)
{
    const char *t = getenv("PME_TEST_TIMEOUT_S");
    return t ? atof(t) : 120;
}

static size_t count(size_t n)
{
    return getenv("PME_TEST_QUICK") ? n / 5 : n;
}

static void no_coalesce(struct pme_config *cfg)
{
    cfg->coalesce_bytes = 0;
}

/* Send message i (its index in the header, pattern data) without an event. */
static void send_one(pme_ep_t *ep, pme_peer_t peer, uint32_t i, size_t len)
{
    uint8_t data[512];
    pattern_fill(data, len, i);
    struct iovec iov = {data, len};
    CHECK(pme_send(ep, peer, &i, sizeof(i), &iov, 1, PME_SEND_NO_EVENT, NULL) == PME_DONE,
          "send %u", i);
}

/* Take `n` messages in order from `first` at b, checked; keeps them in evs when given. */
static void take(struct lp_pair *lp, uint32_t first, unsigned n, struct pme_event *evs)
{
    unsigned got = 0;
    double t0 = now_s();
    while (got < n) {
        CHECK(now_s() - t0 < 10, "%u of %u messages arrived", got, n);
        lp_progress(lp);
        struct pme_event ev;
        while (got < n && pme_next_event(lp->b, &ev)) {
            CHECK(ev.type == PME_EV_MSG && ev.hdr_len == 4, "event %d", ev.type);
            uint32_t i;
            memcpy(&i, ev.hdr, 4);
            CHECK(i == first + got, "message %u arrived when %u was due", i, first + got);
            CHECK(pattern_check(ev.data, ev.data_len, i) < 0, "message %u garbled", i);
            CHECK(((uintptr_t)ev.hdr & 15) == 0, "message %u's header is not 16-byte aligned", i);
            if (evs)
                evs[got] = ev;
            else
                pme_event_release(lp->b, &ev);
            got++;
        }
    }
}

static void stream(const struct pme_loop_faults *f, void (*tweak)(struct pme_config *),
                   const size_t *sizes, size_t nsizes, size_t n, struct pme_counters *ca,
                   struct pme_counters *cb)
{
    struct lp_pair lp;
    lp_open(&lp, f, tweak);
    /* Under faults the handshake can take a few retransmission timeouts, and a sender
     * queues the whole stream one message per frame before it learns the peer takes
     * bundles: open the link first, so that the faults meet bundles. */
    if (f) {
        send_one(lp.a, lp.a_to_b, 0, 8);
        take(&lp, 0, 1, NULL);
    }
    struct lp_stream s = {.count = n, .sizes = sizes, .nsizes = nsizes, .outstanding = 64,
                          .timeout_s = limit_s()};
    lp_run_stream(&lp, &s);
    *ca = counters(lp.a);
    *cb = counters(lp.b);
    lp_close(&lp);
}

static const size_t small[] = {0, 1, 8, 24, 100, 300, 8, 8};

static void test_bundles(void)
{
    size_t n = count(5000);
    struct pme_counters ca, cb;
    stream(NULL, NULL, small, 8, n, &ca, &cb);
    printf("bundles: %zu messages in %llu frames, %llu bundles of %llu messages\n", n,
           (unsigned long long)ca.tx_frames, (unsigned long long)ca.tx_bundles,
           (unsigned long long)ca.tx_bundled);
    CHECK(ca.tx_bundles > 0 && ca.tx_bundled >= n / 2, "%llu bundles of %llu messages",
          (unsigned long long)ca.tx_bundles, (unsigned long long)ca.tx_bundled);
    CHECK(cb.rx_bundles == ca.tx_bundles, "%llu bundles made, %llu delivered",
          (unsigned long long)ca.tx_bundles, (unsigned long long)cb.rx_bundles);
    CHECK(cb.rx_msgs == n && ca.tx_msgs == n, "%llu sent, %llu received",
          (unsigned long long)ca.tx_msgs, (unsigned long long)cb.rx_msgs);
    CHECK(ca.tx_frames * 4 < n, "%llu frames for %zu messages", (unsigned long long)ca.tx_frames,
          n);
    CHECK(cb.drop_bad_header == 0, "the receiver found bad headers");

    stream(NULL, no_coalesce, small, 8, n, &ca, &cb);
    printf("PME_COALESCE=0: %zu messages in %llu frames\n", n, (unsigned long long)ca.tx_frames);
    CHECK(ca.tx_bundles == 0 && ca.tx_bundled == 0 && cb.rx_bundles == 0,
          "bundles with coalescing off: %llu made, %llu received",
          (unsigned long long)ca.tx_bundles, (unsigned long long)cb.rx_bundles);
    CHECK(ca.tx_frames >= n, "%llu frames for %zu messages", (unsigned long long)ca.tx_frames, n);
}

/* Both ends quiet: everything sent is acknowledged. */
static void settle(struct lp_pair *lp)
{
    double t0 = now_s();
    while (pme_ep_flush(lp->a, 0) == PME_ERR_TIMEOUT) {
        pme_progress(lp->b);
        CHECK(now_s() - t0 < 10, "never acknowledged");
    }
}

/* Frames sent for the first time (a slow run may see the retransmission timer fire). */
static uint64_t new_frames(pme_ep_t *ep)
{
    struct pme_counters c = counters(ep);
    return c.tx_frames - c.retransmits;
}

static void coalesce_after_0(struct pme_config *cfg)
{
    cfg->coalesce_after = 0;
}

static void test_when(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, NULL);
    unsigned after = 4; /* PME_COALESCE_AFTER's default */
    send_one(lp.a, lp.a_to_b, 0, 8); /* opens the connection */
    take(&lp, 0, 1, NULL);
    settle(&lp);
    /* An idle peer: on the wire before the call returns; and each of the next, behind
     * fewer than `after` frames in flight, as well (Nagle's algorithm held them). */
    uint64_t f0 = new_frames(lp.a);
    for (uint32_t i = 1; i <= after; i++) {
        send_one(lp.a, lp.a_to_b, i, 8 * i);
        CHECK(new_frames(lp.a) == f0 + i,
              "message %u, behind %u unacknowledged frames, did not leave in its call", i,
              i - 1);
    }
    uint64_t f1 = new_frames(lp.a);
    for (uint32_t i = after + 1; i <= after + 10; i++)
        send_one(lp.a, lp.a_to_b, i, 8 * i);
    CHECK(new_frames(lp.a) == f1, "sends behind %u unacknowledged frames did not gather",
          after);
    /* The last frame that left asked for its acknowledgement: one pass of the receiver
     * sends it, and the sender's next pass sends what gathered, as one bundle. */
    uint64_t acks = counters(lp.b).ack_tx;
    pme_progress(lp.b);
    CHECK(counters(lp.b).ack_tx > acks, "the receiver's pass acknowledged nothing at once");
    pme_progress(lp.a);
    struct pme_counters c = counters(lp.a);
    CHECK(new_frames(lp.a) == f1 + 1 && c.tx_bundles == 1 && c.tx_bundled == 10,
          "the acknowledgement released %llu new frames, %llu bundles of %llu messages",
          (unsigned long long)(new_frames(lp.a) - f1), (unsigned long long)c.tx_bundles,
          (unsigned long long)c.tx_bundled);
    take(&lp, 1, after + 10, NULL);
    lp_close(&lp);

    /* PME_COALESCE_AFTER=0: behind frames in flight too, every send leaves at once. */
    lp_open(&lp, NULL, coalesce_after_0);
    send_one(lp.a, lp.a_to_b, 0, 8);
    take(&lp, 0, 1, NULL);
    settle(&lp);
    f0 = new_frames(lp.a);
    for (uint32_t i = 1; i < 11; i++)
        send_one(lp.a, lp.a_to_b, i, 8);
    CHECK(new_frames(lp.a) == f0 + 10, "PME_COALESCE_AFTER=0 held sends back");
    take(&lp, 1, 10, NULL);
    lp_close(&lp);

    /* Coalescing off: every send leaves at once, as before. */
    lp_open(&lp, NULL, no_coalesce);
    send_one(lp.a, lp.a_to_b, 0, 8);
    take(&lp, 0, 1, NULL);
    settle(&lp);
    f0 = new_frames(lp.a);
    for (uint32_t i = 1; i < 11; i++)
        send_one(lp.a, lp.a_to_b, i, 8);
    CHECK(new_frames(lp.a) == f0 + 10, "PME_COALESCE=0 held sends back");
    take(&lp, 1, 10, NULL);
    lp_close(&lp);
    printf("when: each message in its own call up to %u frames in flight, the next ones "
           "gathered until the acknowledgement\n",
           after);
}

/* Bundleable, eager of several frames (> 8960) and rendezvous (> PME_EAGER_MAX, 68 KiB). */
static const size_t mixed[] = {8, 100, 3000, 5000, 0, 20000, 16, 40000, 8, 8, 300000, 24};

static void test_mixed(void)
{
    struct pme_counters ca, cb;
    size_t n = count(3000);
    stream(NULL, NULL, mixed, 12, n, &ca, &cb);
    printf("mixed: %zu messages in order, %llu bundles of %llu, %llu rendezvous\n", n,
           (unsigned long long)ca.tx_bundles, (unsigned long long)ca.tx_bundled,
           (unsigned long long)ca.tx_rndv);
    CHECK(ca.tx_bundles > 0 && cb.rx_bundles == ca.tx_bundles && ca.tx_rndv > 0,
          "%llu bundles made, %llu delivered, %llu rendezvous",
          (unsigned long long)ca.tx_bundles, (unsigned long long)cb.rx_bundles,
          (unsigned long long)ca.tx_rndv);
}

static void test_faults(void)
{
    const struct {
        const char *name;
        struct pme_loop_faults f;
    } cases[] = {
        {"drop 5%", {.seed = 31, .drop = 0.05}},
        {"drop 20%", {.seed = 32, .drop = 0.20}},
        {"duplicate 5%", {.seed = 33, .dup = 0.05}},
        {"reorder 5%", {.seed = 34, .reorder = 0.05}},
        {"corrupt 5%", {.seed = 35, .corrupt = 0.05}},
        {"delay 2%", {.seed = 36, .delay = 0.02, .delay_frames = 20}},
        {"device full 5%", {.seed = 37, .full = 0.05}},
        {"all mixed", {.seed = 38, .drop = 0.02, .dup = 0.02, .reorder = 0.02,
                       .corrupt = 0.02, .delay = 0.01, .delay_frames = 7}},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct pme_counters ca, cb;
        stream(&cases[k].f, NULL, small, 8, count(3000), &ca, &cb);
        CHECK(ca.tx_bundles > 0 && cb.rx_bundles == ca.tx_bundles,
              "%s: %llu bundles made, %llu delivered", cases[k].name,
              (unsigned long long)ca.tx_bundles, (unsigned long long)cb.rx_bundles);
        stream(&cases[k].f, NULL, mixed, 12, count(1000), &ca, &cb);
        CHECK(ca.tx_bundles > 0 && cb.rx_bundles == ca.tx_bundles,
              "%s, mixed: %llu bundles made, %llu delivered", cases[k].name,
              (unsigned long long)ca.tx_bundles, (unsigned long long)cb.rx_bundles);
        printf("faults: %-14s each message once, in order\n", cases[k].name);
    }
}

static size_t pool_used(pme_ep_t *ep)
{
    size_t used, reserved, size;
    pme_ep_pool(ep, &used, &reserved, &size);
    return used;
}

static void test_release(void)
{
    enum { K = 10 };
    struct lp_pair lp;
    lp_open(&lp, NULL, NULL);
    send_one(lp.a, lp.a_to_b, 0, 8);
    take(&lp, 0, 1, NULL);
    settle(&lp);
    /* Four at once, alone (PME_COALESCE_AFTER's default), then K gathering. */
    enum { ALONE = 4 };
    for (uint32_t i = 1; i <= ALONE; i++)
        send_one(lp.a, lp.a_to_b, i, 8);
    for (uint32_t i = ALONE + 1; i <= ALONE + K; i++)
        send_one(lp.a, lp.a_to_b, i, 40 + i);
    struct pme_event evs[ALONE + K];
    take(&lp, 1, ALONE + K, evs);
    CHECK(counters(lp.b).rx_bundles == 1, "%llu bundles",
          (unsigned long long)counters(lp.b).rx_bundles);
    for (int j = 0; j < ALONE; j++)
        pme_event_release(lp.b, &evs[j]);
    size_t held = pool_used(lp.b);
    CHECK(held > 0, "the bundle holds no pool");
    /* Out of order, the first and the last of the bundle among them, the 5th last. */
    struct pme_event *bundle = evs + ALONE - 1; /* bundle[1..K] */
    static const int order[K] = {10, 1, 7, 3, 9, 2, 8, 4, 6, 5};
    for (int j = 0; j < K - 1; j++) {
        pme_event_release(lp.b, &bundle[order[j]]);
        CHECK(pool_used(lp.b) == held, "released %d of %d: pool %zu, was %zu", j + 1, K,
              pool_used(lp.b), held);
    }
    /* Its bytes are still there (under ASan: never freed memory). */
    uint32_t i;
    memcpy(&i, bundle[5].hdr, 4);
    CHECK(i == ALONE + 5 && pattern_check(bundle[5].data, bundle[5].data_len, ALONE + 5) < 0,
          "the last event's message changed after the others were released");
    pme_event_release(lp.b, &bundle[5]);
    CHECK(pool_used(lp.b) == 0, "pool %zu after the last release", pool_used(lp.b));
    /* The credit came back: the sender goes on sending. */
    for (uint32_t j = ALONE + K + 1; j < ALONE + K + 1 + 3000; j++)
        send_one(lp.a, lp.a_to_b, j, 100);
    take(&lp, ALONE + K + 1, 3000, NULL);
    lp_close(&lp);
    printf("release: the bundle's buffer went back with its last event\n");
}

/* ---- forged bundles ---- */

static const uint8_t fake_mac[6] = {0x02, 0xcc, 0xcc, 0xcc, 0xcc, 0x01};

struct forge {
    uint8_t b[2048];
    uint32_t len;
    uint32_t at[8]; /* where each record starts */
};

static void put_rec(struct forge *f, uint32_t at, uint32_t len, uint16_t hdr_len)
{
    struct pme_wire_rec r = {htonl(len), htons(hdr_len), 0};
    memcpy(f->b + at, &r, sizeof(r));
}

/* A well-formed bundle of records of lens[i] bytes (hdr_lens[i] of them header), its
 * bytes pattern-filled by index. */
static void forge_bundle(struct forge *f, unsigned n, const uint32_t *lens,
                         const uint16_t *hdr_lens)
{
    memset(f->b, 0, sizeof(f->b));
    struct pme_wire_bundle bh = {htons((uint16_t)n), 0, 0};
    memcpy(f->b, &bh, sizeof(bh));
    uint32_t at = sizeof(bh), end = 0;
    for (unsigned i = 0; i < n; i++) {
        f->at[i] = at;
        put_rec(f, at, lens[i], hdr_lens[i]);
        pattern_fill(f->b + at + 8, lens[i], i);
        end = at + 8 + lens[i];
        at = pme_wire_rec_after(end);
    }
    f->len = end;
}

static void inject_bundle(struct fakepeer *fp, pme_ep_t *ep, const struct forge *f,
                          uint16_t aux, uint16_t frag_hdr_len)
{
    static uint8_t frame[4096];
    uint8_t sub[sizeof(struct pme_wire_frag) + sizeof(f->b)];
    struct pme_wire_frag fr = {htonl(f->len), 0, htons(frag_hdr_len), 0};
    memcpy(sub, &fr, sizeof(fr));
    memcpy(sub + sizeof(fr), f->b, f->len);
    size_t n = fp_build(fp, frame, PME_T_DATA, fp->snd_nxt++, 1, fp->rcv_nxt - 1, 1 << 20,
                        PME_F_FIRST | PME_F_LAST | PME_F_ACK_REQ, aux, sub,
                        sizeof(fr) + f->len);
    fp_seal(fp, frame, n);
    fp_inject(fp, frame, n);
    pme_progress(ep);
}

static void expect_dropped(struct fakepeer *fp, pme_ep_t *ep, const struct forge *f,
                           uint16_t aux, uint16_t frag_hdr_len, const char *what)
{
    uint64_t bad = counters(ep).drop_bad_header;
    inject_bundle(fp, ep, f, aux, frag_hdr_len);
    struct pme_event ev;
    CHECK(!pme_next_event(ep, &ev), "%s: delivered an event of type %d", what, ev.type);
    CHECK(counters(ep).drop_bad_header == bad + 1, "%s: not counted as a bad header", what);
    CHECK(pool_used(ep) == 0, "%s: %zu bytes of pool kept", what, pool_used(ep));
}

/* A loop pair whose a also knows a forged peer (endpoint ep_id on node), speaking for
 * itself on the same wire; returns a's handle of it. */
static pme_peer_t open_with_fake(struct lp_pair *lp, struct fakepeer *fp, uint16_t ep_id,
                                 uint32_t node)
{
    return lp_open_with_fake(lp, fp, fake_mac, ep_id, node, NULL);
}

static void test_malformed(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    pme_peer_t peer = open_with_fake(&lp, &fp, 61, 0x0d000001);
    CHECK(pme_send(lp.a, peer, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    fp_handshake(&fp, lp.a, 9000, 1 << 20);

    /* The control: three records, one empty, one all header, one header and data. */
    static const uint32_t lens[3] = {0, 16, 100};
    static const uint16_t hlens[3] = {0, 16, 8};
    struct forge f;
    forge_bundle(&f, 3, lens, hlens);
    inject_bundle(&fp, lp.a, &f, PME_DATA_BUNDLE, 0);
    struct pme_event ev[3];
    for (unsigned i = 0; i < 3; i++) {
        CHECK(pme_next_event(lp.a, &ev[i]) && ev[i].type == PME_EV_MSG,
              "record %u of a good bundle not delivered", i);
        CHECK(ev[i].hdr_len == hlens[i] && ev[i].data_len == lens[i] - hlens[i] &&
                  pattern_check(ev[i].hdr, lens[i], i) < 0,
              "record %u delivered wrong", i);
        CHECK(((uintptr_t)ev[i].hdr & 15) == 0, "record %u unaligned", i);
    }
    for (unsigned i = 0; i < 3; i++)
        pme_event_release(lp.a, &ev[i]);
    CHECK(pool_used(lp.a) == 0, "pool kept after a good bundle");

    /* A record's length past the bundle's end (and far past: no wrap-around). */
    struct forge g = f;
    put_rec(&g, g.at[2], 101, 8);
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "last record one byte too long");
    g = f;
    put_rec(&g, g.at[0], 0xFFFFFFF8u, 0);
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "a record of 4 GiB");
    g = f;
    put_rec(&g, g.at[1], 16, 17);
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "header longer than its record");
    /* Counts that disagree with the records. */
    g = f;
    g.b[1] = 4;
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "count 4 for 3 records");
    g = f;
    g.b[1] = 2;
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "count 2 for 3 records");
    g = f;
    g.b[1] = 0;
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "count 0");
    /* Zero-length records claimed by the thousand in a short bundle. */
    static const uint32_t zeros[4] = {0, 0, 0, 0};
    static const uint16_t zh[4] = {0, 0, 0, 0};
    forge_bundle(&g, 4, zeros, zh);
    g.b[0] = 0xFF;
    g.b[1] = 0xFF;
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "65535 empty records in 64 bytes");
    /* Shorter than one record; trailing bytes after the last record. */
    g = f;
    g.len = 12;
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "12 bytes");
    g = f;
    g.len = f.len + 16;
    expect_dropped(&fp, lp.a, &g, PME_DATA_BUNDLE, 0, "bytes after the last record");
    /* A user header length in the fragment of a bundle; an aux nobody defined. */
    expect_dropped(&fp, lp.a, &f, PME_DATA_BUNDLE, 8, "fragment header length");
    expect_dropped(&fp, lp.a, &f, 7, 0, "aux 7");
    /* Still in sync: a good bundle after them is delivered. */
    inject_bundle(&fp, lp.a, &f, PME_DATA_BUNDLE, 0);
    for (unsigned i = 0; i < 3; i++) {
        CHECK(pme_next_event(lp.a, &ev[i]) && ev[i].type == PME_EV_MSG, "record %u", i);
        pme_event_release(lp.a, &ev[i]);
    }
    lp_close(&lp);
    printf("malformed: bad bundles dropped whole and counted, good ones delivered\n");
}

static void test_features(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    pme_peer_t peer = open_with_fake(&lp, &fp, 62, 0x0d000002);
    send_one(lp.a, peer, 0, 8);
    fp_handshake(&fp, lp.a, 9000, 1 << 20); /* announces no features */
    for (uint32_t i = 1; i < 40; i++)
        send_one(lp.a, peer, i, 8);
    pme_progress(lp.a);
    static struct fp_frame fr;
    unsigned data = 0;
    while (fp_take(&fp, &fr))
        if (fr.type == PME_T_DATA) {
            CHECK(fr.aux == 0, "a bundle went to a peer that takes none");
            data++;
        }
    /* (The handshake may have swallowed the first message's frame.) */
    CHECK(data >= 39 && counters(lp.a).tx_bundles == 0, "%u DATA frames, %llu bundles", data,
          (unsigned long long)counters(lp.a).tx_bundles);
    lp_close(&lp);
    printf("features: no bundle to a peer that did not announce PME_FEAT_BUNDLE\n");
}

/* The helper's period (after which it answers for an absent caller) far longer than
 * the test: only what gathers can make it act, after PME_COALESCE_US. */
static void with_helper(struct pme_config *cfg)
{
    cfg->helper = 1;
    cfg->helper_us = 100000000;
    cfg->coalesce_us = 2000;
}

/* Open a pair whose connection is up and quiet, then send from a to b the messages
 * that leave at once (PME_COALESCE_AFTER's 4) and two more, which gather. */
static void two_gathering(struct lp_pair *lp, void (*tweak)(struct pme_config *))
{
    lp_open(lp, NULL, tweak);
    send_one(lp->a, lp->a_to_b, 0, 8);
    take(lp, 0, 1, NULL);
    settle(lp);
    for (uint32_t i = 1; i <= 6; i++)
        send_one(lp->a, lp->a_to_b, i, 8);
}

/* `leave`, called once, must send what gathers (the receiver never acknowledged, so
 * nothing else releases it), and sends nothing when called again. */
static void leaves_with(void (*leave)(pme_ep_t *), const char *name)
{
    struct lp_pair lp;
    two_gathering(&lp, NULL);
    uint64_t f0 = new_frames(lp.a);
    leave(lp.a);
    CHECK(new_frames(lp.a) == f0 + 1, "%s left gathering messages waiting", name);
    leave(lp.a);
    CHECK(new_frames(lp.a) == f0 + 1, "%s sent again with nothing waiting", name);
    take(&lp, 1, 6, NULL);
    lp_close(&lp);
}

static void idle_now(pme_ep_t *ep)
{
    pme_ep_idle(ep, 0, 0);
}

static void wait_1ms(pme_ep_t *ep)
{
    pme_wait(ep, 1);
}

static void test_idle(void)
{
    struct lp_pair lp;
    leaves_with(idle_now, "pme_ep_idle");
    leaves_with(wait_1ms, "pme_wait");
    /* The caller leaves at once (the netmod after its handlers sent). */
    leaves_with(pme_send_waiting, "pme_send_waiting");

    /* The caller sends, then never calls PME again: the helper sends what gathers. */
    two_gathering(&lp, with_helper);
    unsigned got = 0;
    double t0 = now_s();
    while (got < 6 && now_s() - t0 < 5) {
        pme_progress(lp.b);
        struct pme_event ev;
        while (pme_next_event(lp.b, &ev)) {
            CHECK(ev.type == PME_EV_MSG, "event %d", ev.type);
            pme_event_release(lp.b, &ev);
            got++;
        }
    }
    CHECK(got == 6, "%u of 6 messages came from a caller that stopped calling", got);
    CHECK(counters(lp.a).helper_passes > 0, "the helper never stepped in");
    CHECK(counters(lp.a).tx_bundles == 1, "the two gathering messages did not go as a bundle");
    printf("idle: gathering messages left with pme_ep_idle, pme_wait, pme_send_waiting, "
           "and by the helper after %.1f ms\n",
           (now_s() - t0) * 1e3);
    lp_close(&lp);
}

static void one_ms_helper(struct pme_config *cfg)
{
    cfg->helper = 1;
    cfg->helper_us = 1000;
    cfg->coalesce_us = 50;
}

static void test_helper_waits(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, one_ms_helper);
    struct pme_ep *ep = lp.a;
    /* The caller, inside, has begun to gather (as a pass inside pme_wait can) and will
     * tell the helper when it leaves: until then no alarm is the helper's to set. */
    pme_ep_lock(ep);
    __atomic_store_n(&ep->gathering_since_ns, pme_now_ns(), __ATOMIC_RELAXED);
    ep->gathering_tell_helper = true;
    uint64_t w0 = pme_helper_wakeups(ep);
    struct timespec held = {0, 50 * 1000 * 1000};
    nanosleep(&held, NULL);
    uint64_t woke = pme_helper_wakeups(ep) - w0;
    __atomic_store_n(&ep->gathering_since_ns, 0, __ATOMIC_RELAXED);
    ep->gathering_tell_helper = false;
    pme_ep_unlock(ep);
    /* Its period is 1 ms: about 50 wake-ups; four times that is a spin. */
    CHECK(woke < 200, "the helper woke %llu times in 50 ms while the caller was inside",
          (unsigned long long)woke);
    lp_close(&lp);
    printf("helper-waits: %llu wake-ups in 50 ms with the caller inside\n",
           (unsigned long long)woke);
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"bundles", test_bundles}, {"when", test_when},       {"mixed", test_mixed},
        {"faults", test_faults},   {"release", test_release}, {"malformed", test_malformed},
        {"features", test_features}, {"idle", test_idle},
        {"helper-waits", test_helper_waits},
    };
    run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
    printf("coalescing: all scenarios passed\n");
    return 0;
}
