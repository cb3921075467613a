// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_rma_bundle.c - one-sided operations coalesced into bundles (rma_bundle.c), on the
 * loop device:
 *   puts      64 puts of 8 bytes issued back to back all land, in a few frames: at most
 *             a quarter of those the same puts take with coalescing off (PME_COALESCE=0);
 *             the first four leave alone, in their calls (PME_COALESCE_AFTER), the next
 *             gather; puts of 1 KiB fill 9000-byte frames, eight to a bundle (not PME_COALESCE's
 *             bytes, which bound bundles of messages); in frames of 64 KiB a bundle
 *             stops at 256 operations;
 *   gets      64 gets of 8 bytes bring the right words back, the requests and the
 *             target's answers both bundled;
 *   order     accumulates on one word in one bundle are combined in the order issued;
 *   refused   a put outside the window among good ones in one bundle fails alone
 *             (PME_ERR_RANGE at the origin); the others land, no byte outside changes;
 *   hostile   bundles forged by a scripted peer: malformed ones (no records, a record
 *             running past the frame, a record shorter than a request, a bundle over
 *             two frames) change nothing and are counted; a record that takes a lock is
 *             refused alone (NAK); a good bundle's puts all land;
 *   whole     a bundle that finds no room for its answers is refused whole: its put
 *             does not land until the bundle comes again, then lands once.
 * pme-test: tier=default cpu=100 time=1
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "fakepeer.h"
#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

#define WIN_BYTES 65536
#define OPS 64

static uint8_t win[WIN_BYTES];

static uint64_t counter(pme_ep_t *ep, size_t offset)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return *(uint64_t *)((char *)&c + offset);
}
#define COUNTER(ep, name) counter(ep, offsetof(struct pme_counters, name))

/* Progress both until a has nothing pending toward b. */
static void settle(struct lp_pair *lp)
{
    double end = now_s() + 10;
    while (pme_rma_pending(lp->a, lp->a_to_b)) {
        CHECK(now_s() < end, "%u operations still pending", pme_rma_pending(lp->a, lp->a_to_b));
        lp_progress(lp);
    }
}

/* A pair whose b exposes the zeroed window, the link already open (one put done). */
static uint32_t pair_with_window(struct lp_pair *lp, void (*tweak)(struct pme_config *cfg))
{
    uint32_t key, one = 1;
    lp_open(lp, NULL, tweak);
    memset(win, 0, sizeof(win));
    CHECK_OK(pme_rma_expose(lp->b, win, sizeof(win), &key));
    CHECK_OK(pme_rma_put(lp->a, lp->a_to_b, key, WIN_BYTES - 4, &one, 4, 0));
    settle(lp);
    return key;
}

static void no_coalescing(struct pme_config *cfg)
{
    cfg->coalesce_bytes = 0;
}

static void largest_frames(struct pme_config *cfg)
{
    cfg->mtu = 65535;
}

/* n puts of size bytes back to back (n * size <= 32 KiB); returns the frames a sent
 * for them (they all landed). */
static uint64_t puts_of(void (*tweak)(struct pme_config *cfg), int n, size_t size,
                        uint64_t *bundles)
{
    struct lp_pair lp;
    uint32_t key = pair_with_window(&lp, tweak);
    static uint8_t src[32768]; /* each put may read its bytes until complete */
    pattern_fill(src, (size_t)n * size, (uint32_t)size);
    /* Frames sent for the first time: a timeout on a slow host (ASan, a busy machine)
     * sends some again, and those say nothing about bundling. */
    uint64_t frames = COUNTER(lp.a, tx_frames) - COUNTER(lp.a, retransmits);
    uint64_t made = COUNTER(lp.a, tx_bundles);
    for (int i = 0; i < n; i++)
        CHECK_OK(pme_rma_put(lp.a, lp.a_to_b, key, size * (uint64_t)i, src + size * i, size, 0));
    CHECK(pme_rma_pending(lp.a, lp.a_to_b) == (uint32_t)n, "%u pending, not %d",
          pme_rma_pending(lp.a, lp.a_to_b), n);
    settle(&lp);
    CHECK(pme_rma_error(lp.a, lp.a_to_b) == PME_OK, "a put failed");
    CHECK(memcmp(win, src, (size_t)n * size) == 0, "the puts of %zu bytes landed wrong", size);
    frames = COUNTER(lp.a, tx_frames) - COUNTER(lp.a, retransmits) - frames;
    *bundles = COUNTER(lp.a, tx_bundles) - made;
    lp_close(&lp);
    return frames;
}

static void test_puts(void)
{
    uint64_t bundled, alone, bundles, none;
    bundled = puts_of(NULL, OPS, 8, &bundles);
    alone = puts_of(no_coalescing, OPS, 8, &none);
    CHECK(bundles >= 1 && none == 0, "%llu bundles, %llu with coalescing off",
          (unsigned long long)bundles, (unsigned long long)none);
    CHECK(alone >= OPS && 4 * bundled <= alone, "%llu frames bundled against %llu alone",
          (unsigned long long)bundled, (unsigned long long)alone);
    /* 17 of 1 KiB: the first four alone (each leaves in its call while fewer than
     * PME_COALESCE_AFTER frames wait for an acknowledgement), then thirteen in two
     * bundles of eight and five (1072 bytes each with its sub-header and record header,
     * in a frame's room of 8896); bundles of 4 KiB would hold three and take five. */
    uint64_t kib = puts_of(NULL, 17, 1024, &bundles);
    CHECK(kib <= 6, "17 puts of 1 KiB took %llu frames, not 6", (unsigned long long)kib);
    /* In frames of 65535 bytes a bundle would hold 1300 puts of 8 bytes, more than a
     * target has room to answer (1024): bundles stop at 256 operations, and all land. */
    uint64_t jumbo = puts_of(largest_frames, 4000, 8, &bundles);
    CHECK(bundles >= 15, "4000 puts in frames of 64 KiB: %llu bundles, not at least 15",
          (unsigned long long)bundles);
    printf("%d puts of 8 bytes: %llu frames in bundles, %llu alone, all landed; 17 of 1 "
           "KiB in %llu frames; 4000 of 8 bytes in frames of 64 KiB in %llu\n", OPS,
           (unsigned long long)bundled, (unsigned long long)alone, (unsigned long long)kib,
           (unsigned long long)jumbo);
}

static void test_gets(void)
{
    struct lp_pair lp;
    uint32_t key = pair_with_window(&lp, NULL);
    for (int i = 0; i < OPS; i++)
        for (int b = 0; b < 8; b++)
            win[8 * i + b] = (uint8_t)(i * 8 + b + 1);
    static uint8_t got[OPS][8];
    memset(got, 0, sizeof(got));
    uint64_t asked = COUNTER(lp.a, tx_bundles), answered = COUNTER(lp.b, tx_bundles);
    for (int i = 0; i < OPS; i++)
        CHECK_OK(pme_rma_get(lp.a, lp.a_to_b, key, 8 * (uint64_t)i, got[i], 8, 0));
    settle(&lp);
    for (int i = 0; i < OPS; i++)
        CHECK(memcmp(got[i], win + 8 * i, 8) == 0, "get %d brought the wrong bytes", i);
    asked = COUNTER(lp.a, tx_bundles) - asked;
    answered = COUNTER(lp.b, tx_bundles) - answered;
    CHECK(asked >= 1 && answered >= 1, "%llu bundles of gets, %llu of answers",
          (unsigned long long)asked, (unsigned long long)answered);
    CHECK_OK(pme_rma_withdraw(lp.b, key));
    lp_close(&lp);
    printf("%d gets of 8 bytes right: %llu bundles of requests, %llu of answers\n", OPS,
           (unsigned long long)asked, (unsigned long long)answered);
}

static void test_order(void)
{
    struct lp_pair lp;
    uint32_t key = pair_with_window(&lp, NULL);
    static const int32_t five = 5, three = 3, two = 2;
    uint64_t made = COUNTER(lp.a, tx_bundles);
    /* 5, +3 ten times, *2: 70; any other order gives another number. */
    CHECK_OK(pme_rma_acc(lp.a, lp.a_to_b, key, 64, &five, NULL, 4, PME_AOP_REPLACE,
                         PME_DT_I32, 0));
    for (int i = 0; i < 10; i++)
        CHECK_OK(pme_rma_acc(lp.a, lp.a_to_b, key, 64, &three, NULL, 4, PME_AOP_SUM,
                             PME_DT_I32, 0));
    CHECK_OK(pme_rma_acc(lp.a, lp.a_to_b, key, 64, &two, NULL, 4, PME_AOP_PROD, PME_DT_I32, 0));
    settle(&lp);
    int32_t v;
    memcpy(&v, win + 64, 4);
    CHECK(v == 70, "the accumulates gave %d, not 70", v);
    CHECK(COUNTER(lp.a, tx_bundles) > made, "no bundle made");
    lp_close(&lp);
    printf("12 accumulates on one word in a bundle, combined in order\n");
}

static void test_refused(void)
{
    struct lp_pair lp;
    uint32_t key = pair_with_window(&lp, NULL);
    static const uint64_t word = 0x0123456789abcdefull;
    for (int i = 0; i < 10; i++) {
        uint64_t off = i == 5 ? WIN_BYTES - 4 : 16 * (uint64_t)i;
        CHECK_OK(pme_rma_put(lp.a, lp.a_to_b, key, off, &word, 8, 0));
    }
    settle(&lp);
    CHECK(pme_rma_error(lp.a, lp.a_to_b) == PME_ERR_RANGE, "the put past the end did not fail");
    CHECK(COUNTER(lp.b, rma_refused) == 1, "%llu refused",
          (unsigned long long)COUNTER(lp.b, rma_refused));
    for (int i = 0; i < 10; i++) {
        if (i == 5)
            continue;
        CHECK(memcmp(win + 16 * i, &word, 8) == 0, "put %d did not land", i);
    }
    uint32_t tail;
    memcpy(&tail, win + WIN_BYTES - 4, 4);
    CHECK(tail == 1, "the refused put changed the window's last word");
    lp_close(&lp);
    printf("a put past the window in a bundle fails alone; the other 9 land\n");
}

/* ---- bundles forged by a scripted peer ---- */

static const uint8_t fake_mac[6] = {0x02, 0xfa, 0xce, 0x00, 0x00, 0x03};

/* A loop pair whose a knows the scripted peer fp, both directions open, and exposes the
 * zeroed window; its key. */
static uint32_t fake_with_window(struct lp_pair *lp, struct fakepeer *fp, uint16_t ep_id)
{
    uint32_t key;
    pme_peer_t peer = lp_open_with_fake(lp, fp, fake_mac, ep_id, 0x0a000000u + ep_id, NULL);
    CHECK(pme_send(lp->a, peer, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    fp_handshake(fp, lp->a, 9000, 1 << 20);
    memset(win, 0, sizeof(win));
    CHECK_OK(pme_rma_expose(lp->a, win, sizeof(win), &key));
    return key;
}

struct forged_bundle {
    uint8_t bytes[2048];
    uint32_t len;
    uint16_t n;
};

static void fb_start(struct forged_bundle *fb)
{
    memset(fb, 0, sizeof(*fb));
    fb->len = PME_BUNDLE_HDR;
}

/* Add a request of op on key at off with plen bytes of payload (0x77). */
static void fb_add(struct forged_bundle *fb, unsigned op, unsigned flags, uint32_t key,
                   uint32_t req_id, uint64_t off, uint64_t plen)
{
    struct pme_wire_rma r = {.op = (uint8_t)op, .flags = (uint8_t)flags, .key = htonl(key),
                             .req_id = htonl(req_id), .offset = htobe64(off),
                             .len = htobe64(plen)};
    uint32_t at = pme_bundle_next_rec(fb->len, fb->n);
    pme_bundle_put_rec(fb->bytes + at, (uint32_t)(sizeof(r) + plen), 0);
    memcpy(fb->bytes + at + PME_BUNDLE_REC, &r, sizeof(r));
    memset(fb->bytes + at + PME_BUNDLE_REC + sizeof(r), 0x77, plen);
    fb->len = at + PME_BUNDLE_REC + (uint32_t)(sizeof(r) + plen);
    pme_bundle_put_count(fb->bytes, ++fb->n);
}

/* Send the bundle in sequence and progress ep for ms milliseconds, acknowledging what
 * it sends (unless told not to); returns the status of a NAK naming req_id (0: none). */
static uint32_t fb_send(struct fakepeer *fp, pme_ep_t *ep, const struct forged_bundle *fb,
                        uint16_t flags, uint32_t req_id, int ack_answers, int ms)
{
    static struct fp_frame f;
    uint32_t status = 0;
    fp_send(fp, PME_T_RMA, FP_SEQ_AUTO, 0, 0, 0, flags | PME_F_ACK_REQ, PME_RMA_BUNDLE,
            fb->bytes, fb->len);
    double end = now_s() + ms / 1000.0;
    do { /* at least one pass, however slow (valgrind) */
        pme_progress(ep);
        while (fp_take(fp, &f)) {
            if (f.type != PME_T_RMA || f.sublen < sizeof(struct pme_wire_rma))
                continue;
            if (ack_answers)
                fp_send(fp, PME_T_ACK, 0, 1, f.seq, 1 << 20, 0, 0, NULL, 0);
            const struct pme_wire_rma *a = (const void *)f.sub;
            if (f.aux != PME_RMA_BUNDLE && a->op == PME_RMA_NAK && ntohl(a->req_id) == req_id)
                status = ntohl(a->status);
        }
    } while (now_s() < end);
    return status;
}

static void test_hostile(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    struct forged_bundle fb;
    const uint16_t one = PME_F_FIRST | PME_F_LAST;
    uint32_t key = fake_with_window(&lp, &fp, 80);
    uint64_t bad = COUNTER(lp.a, drop_bad_header);
    /* No records; a record running past the frame; one shorter than a request. */
    fb_start(&fb);
    fb.len = PME_BUNDLE_HDR + PME_BUNDLE_REC;
    fb_send(&fp, lp.a, &fb, one, 0, 1, 100);
    fb_start(&fb);
    fb_add(&fb, PME_RMA_PUT, 0, key, 0, 0, 8);
    pme_bundle_put_count(fb.bytes, 2);
    fb_send(&fp, lp.a, &fb, one, 0, 1, 100);
    fb_start(&fb);
    pme_bundle_put_rec(fb.bytes + PME_BUNDLE_HDR, 8, 0);
    fb.len = PME_BUNDLE_HDR + PME_BUNDLE_REC + 8;
    pme_bundle_put_count(fb.bytes, 1);
    fb_send(&fp, lp.a, &fb, one, 0, 1, 100);
    /* A good bundle that claims to be the first of two frames. */
    fb_start(&fb);
    fb_add(&fb, PME_RMA_PUT, 0, key, 0, 0, 8);
    fb_send(&fp, lp.a, &fb, PME_F_FIRST, 0, 1, 100);
    CHECK(COUNTER(lp.a, drop_bad_header) - bad == 4, "%llu of 4 malformed bundles counted",
          (unsigned long long)(COUNTER(lp.a, drop_bad_header) - bad));
    for (size_t i = 0; i < sizeof(win); i++)
        CHECK(win[i] == 0, "a malformed bundle changed byte %zu", i);
    /* A locking put rides with a plain one: refused alone. */
    fb_start(&fb);
    fb_add(&fb, PME_RMA_PUT, PME_RMA_F_EXCL, key, 500, 0, 8);
    fb_add(&fb, PME_RMA_PUT, 0, key, 0, 64, 8);
    CHECK(fb_send(&fp, lp.a, &fb, one, 500, 1, 100) == PME_RMA_E_OP,
          "a locking request in a bundle was not refused");
    CHECK(win[0] == 0 && win[64] == 0x77 && win[71] == 0x77, "the bundle's puts: %x %x",
          win[0], win[64]);
    /* A good bundle: every put lands. */
    fb_start(&fb);
    for (int i = 0; i < 20; i++)
        fb_add(&fb, PME_RMA_PUT, 0, key, 0, 1024 + 16 * (uint64_t)i, 4);
    fb_send(&fp, lp.a, &fb, one, 0, 1, 100);
    for (int i = 0; i < 20; i++)
        CHECK(win[1024 + 16 * i] == 0x77 && win[1024 + 16 * i + 4] == 0,
              "put %d of the good bundle", i);
    lp_close(&lp);
    printf("forged bundles: 4 malformed dropped and counted, a locking record refused "
           "alone, a good one acted on\n");
}

/* The target owes as many answers as it may (the scripted peer acknowledges none): a
 * bundle of a put and a get is refused whole, then taken once room is made. */
static void test_whole(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    struct forged_bundle fb;
    static struct fp_frame f;
    uint32_t key = fake_with_window(&lp, &fp, 81);
    /* 1024 gets in bundles of 32, their answers never acknowledged. */
    for (int b = 0; b < 32; b++) {
        fb_start(&fb);
        for (int i = 0; i < 32; i++)
            fb_add(&fb, PME_RMA_GET, 0, key, 1000 + 32 * (uint32_t)b + (uint32_t)i, 0, 0);
        fb_send(&fp, lp.a, &fb, PME_F_FIRST | PME_F_LAST, 0, 0, 2);
    }
    fb_start(&fb);
    fb_add(&fb, PME_RMA_PUT, 0, key, 0, 256, 8);
    fb_add(&fb, PME_RMA_GET, 0, key, 7, 0, 0);
    uint32_t seq = fp.snd_nxt;
    uint64_t refused = COUNTER(lp.a, drop_no_buffer);
    fb_send(&fp, lp.a, &fb, PME_F_FIRST | PME_F_LAST, 0, 0, 20);
    CHECK(COUNTER(lp.a, drop_no_buffer) > refused, "the bundle was not refused");
    CHECK(win[256] == 0, "a bundle without room for its answer was acted on in part");
    /* Acknowledge every answer as it comes, until none has come for 100 ms; then send
     * the bundle again under its number. */
    double end = now_s() + 20, last = now_s();
    while (now_s() - last < 0.1) {
        CHECK(now_s() < end, "the answers still come after 20 s");
        pme_progress(lp.a);
        while (fp_take(&fp, &f)) {
            fp_send(&fp, PME_T_ACK, 0, 1, fp.rcv_nxt - 1, 1 << 20, 0, 0, NULL, 0);
            last = now_s();
        }
    }
    fp.snd_nxt = seq;
    fb_send(&fp, lp.a, &fb, PME_F_FIRST | PME_F_LAST, 0, 1, 100);
    CHECK(win[256] == 0x77 && win[263] == 0x77 && win[264] == 0, "the bundle's put, again");
    CHECK(COUNTER(lp.a, rma_in) == 1024 + 2, "%llu requests acted on, not 1026",
          (unsigned long long)COUNTER(lp.a, rma_in));
    lp_close(&lp);
    printf("a bundle without room for its answers refused whole, taken once when sent "
           "again\n");
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"puts", test_puts},       {"gets", test_gets},       {"order", test_order},
        {"refused", test_refused}, {"hostile", test_hostile}, {"whole", test_whole},
    };
    return run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
}
