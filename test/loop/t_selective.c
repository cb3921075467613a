// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_selective.c - selective retransmission: after a loss only the lost frames go again.
 *   1. The receiver holds frames that come after a gap and names the gap in a LOSE
 *      (first missing frame and how many), once per gap, and again when the sender asks
 *      for an answer while it is open; when the missing frame comes, the held ones are
 *      delivered in order, once, and acknowledged.
 *   2. The sender resends the frames a LOSE names and nothing else; a LOSE without a
 *      range (a receiver that holds nothing) still rewinds, as Go-Back-N; ranges of
 *      frames never sent, or acknowledged already, resend nothing.
 *   3. A stream over a wire that drops frames arrives intact and resends a fraction of
 *      what plain Go-Back-N (PME_HOLD=0) resends on the same wire; with room to hold
 *      two frames only, it still arrives intact and resends not much more than
 *      Go-Back-N.
 * A scripted peer (fakepeer.h) plays the other side in 1 and 2.
 * pme-test: tier=default cpu=100 time=1
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "fakepeer.h"
#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

static const uint8_t fake_mac[6] = {0x02, 0xfa, 0xce, 0x00, 0x00, 0x02};
#define FAKE_EP 78
#define FAKE_NODE 0x0a0000fb

static struct fp_frame fr;

/* No retransmission timeout within the test: every frame that goes again was asked for. */
static void slow_rto(struct pme_config *cfg)
{
    cfg->rto_us = 500000;
}

/* The endpoint under test (a), which knows the scripted peer fp as a peer. */
static pme_peer_t open_with_fake(struct lp_pair *lp, struct fakepeer *fp)
{
    return lp_open_with_fake(lp, fp, fake_mac, FAKE_EP, FAKE_NODE, slow_rto);
}

static uint64_t held_count(pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return c.rx_held;
}

/* The fake peer sends one-byte message `m` as frame `seq` of its direction. */
static void send_msg(struct fakepeer *fp, uint32_t seq, char m, uint16_t flags)
{
    struct pme_wire_frag frag = {htonl(1), 0, 0, 0};
    uint8_t sub[sizeof(frag) + 1];
    memcpy(sub, &frag, sizeof(frag));
    sub[sizeof(frag)] = (uint8_t)m;
    fp_send(fp, PME_T_DATA, seq, 1, fp->rcv_nxt - 1, 1 << 20,
            PME_F_FIRST | PME_F_LAST | flags, 0, sub, sizeof(sub));
}

/* The messages the endpoint delivered since the last call, as a string. */
static const char *delivered(pme_ep_t *ep)
{
    static char got[64];
    size_t n = 0;
    for (int pass = 0; pass < 5; pass++) {
        pme_progress(ep);
        struct pme_event ev;
        while (pme_next_event(ep, &ev)) {
            if (ev.type == PME_EV_MSG && ev.data_len == 1 && n + 1 < sizeof(got))
                got[n++] = *(const char *)ev.data;
            pme_event_release(ep, &ev);
        }
    }
    got[n] = 0;
    return got;
}

/* Every frame the endpoint sent to the fake peer within a few passes: the LOSEs among
 * them (their ranges into first/count, up to max) and the highest ACK seen. */
static int loses(struct fakepeer *fp, pme_ep_t *ep, uint32_t *first, uint32_t *count, int max,
                 uint32_t *ack)
{
    int n = 0;
    for (int pass = 0; pass < 5; pass++) {
        pme_progress(ep);
        while (fp_take(fp, &fr)) {
            if ((fr.flags & PME_F_ACK_VALID) && ack)
                *ack = fr.ack;
            if (fr.type != PME_T_LOSE)
                continue;
            CHECK(fr.sublen >= sizeof(struct pme_wire_lose), "a LOSE without the gap's range");
            const struct pme_wire_lose *g = (const void *)fr.sub;
            if (n < max) {
                first[n] = ntohl(g->first);
                count[n] = ntohl(g->count);
            }
            n++;
        }
    }
    return n;
}

static void receiver_holds_and_names_gaps(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    pme_peer_t peer = open_with_fake(&lp, &fp);
    CHECK(pme_send(lp.a, peer, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    fp_handshake(&fp, lp.a, 9000, 1 << 20);
    CHECK(fp_expect(&fp, lp.a, PME_T_DATA, &fr, 1000), "no DATA");
    uint32_t s = fp.snd_nxt, first[4], count[4], ack = 0;

    send_msg(&fp, s, 'a', 0);
    CHECK(!strcmp(delivered(lp.a), "a"), "the first message was not delivered");
    /* s + 1 is lost: s + 2 and s + 3 are held, one LOSE names s + 1 alone. */
    send_msg(&fp, s + 2, 'c', 0);
    send_msg(&fp, s + 3, 'd', 0);
    CHECK(!strcmp(delivered(lp.a), ""), "a message after a gap was delivered before it");
    int n = loses(&fp, lp.a, first, count, 4, NULL);
    CHECK(n == 1, "%d LOSEs for one gap", n);
    CHECK(first[0] == s + 1 && count[0] == 1, "the LOSE named %u+%u, not %u+1", first[0],
          count[0], s + 1);
    CHECK(held_count(lp.a) == 2, "%llu frames held, not 2",
          (unsigned long long)held_count(lp.a));
    /* A held frame that comes again is a duplicate, not held twice. */
    send_msg(&fp, s + 3, 'd', 0);
    CHECK(loses(&fp, lp.a, first, count, 4, NULL) == 0, "a LOSE for a frame held already");
    CHECK(held_count(lp.a) == 2, "a frame was held twice");
    /* The peer asks for an answer while the gap is open (its LOSE may have been lost, or
     * the frame it named): the gap is named again, from the frame due to the first held. */
    send_msg(&fp, s + 3, 'd', PME_F_ACK_REQ);
    n = loses(&fp, lp.a, first, count, 4, NULL);
    CHECK(n == 1 && first[0] == s + 1 && count[0] == 1,
          "asked for an answer with a gap open: %d LOSEs (first %u+%u), not one of %u+1", n,
          n ? first[0] : 0, n ? count[0] : 0, s + 1);

    /* The gap fills: b, c and d go up in order, once, and the ACK covers them all. */
    send_msg(&fp, s + 1, 'b', PME_F_ACK_REQ);
    CHECK(!strcmp(delivered(lp.a), "bcd"), "after the gap filled: \"%s\", not \"bcd\"",
          delivered(lp.a));
    loses(&fp, lp.a, first, count, 4, &ack);
    CHECK(ack == s + 3, "acknowledged up to %u, not %u", ack, s + 3);

    /* Two gaps in a row: each named once, from where the last frame seen ended. */
    send_msg(&fp, s + 5, 'f', 0);
    send_msg(&fp, s + 8, 'i', 0);
    send_msg(&fp, s + 9, 'j', 0);
    n = loses(&fp, lp.a, first, count, 4, NULL);
    CHECK(n == 2, "%d LOSEs for two gaps", n);
    CHECK(first[0] == s + 4 && count[0] == 1 && first[1] == s + 6 && count[1] == 2,
          "the LOSEs named %u+%u and %u+%u, not %u+1 and %u+2", first[0], count[0], first[1],
          count[1], s + 4, s + 6);
    send_msg(&fp, s + 6, 'g', 0);
    send_msg(&fp, s + 4, 'e', 0);
    CHECK(!strcmp(delivered(lp.a), "efg"), "\"%s\" after the first gap filled, not \"efg\"",
          delivered(lp.a));
    send_msg(&fp, s + 7, 'h', PME_F_ACK_REQ);
    CHECK(!strcmp(delivered(lp.a), "hij"), "\"%s\" after the second gap filled, not \"hij\"",
          delivered(lp.a));
    loses(&fp, lp.a, first, count, 4, &ack);
    CHECK(ack == s + 9, "acknowledged up to %u, not %u", ack, s + 9);
    lp_close(&lp);
    printf("the receiver holds frames after a gap, names the gap once and delivers in order\n");
}

/* DATA frames the endpoint sent within a few passes: their sequence numbers. */
static int data_sent(struct fakepeer *fp, pme_ep_t *ep, uint32_t *seq, int max)
{
    int n = 0;
    for (int pass = 0; pass < 5; pass++) {
        pme_progress(ep);
        while (fp_take(fp, &fr))
            if (fr.type == PME_T_DATA && n < max)
                seq[n++] = fr.seq;
    }
    return n;
}

static void lose_range(struct fakepeer *fp, uint32_t acked, uint32_t first, uint32_t count)
{
    struct pme_wire_lose g = {htonl(first), htonl(count)};
    fp_send(fp, PME_T_LOSE, 0, 1, acked, 1 << 20, 0, 0, &g, sizeof(g));
}

static void sender_resends_what_is_named(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    pme_peer_t peer = open_with_fake(&lp, &fp);
    for (int i = 0; i < 6; i++)
        CHECK(pme_send(lp.a, peer, "m", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
              "send");
    fp_handshake(&fp, lp.a, 9000, 1 << 20);
    uint32_t seq[16];
    CHECK(data_sent(&fp, lp.a, seq, 16) == 6, "the six messages did not go out");
    uint32_t q = seq[0];

    /* q is acknowledged, q + 2 and q + 3 were lost: those two go again, alone. */
    lose_range(&fp, q, q + 2, 2);
    int n = data_sent(&fp, lp.a, seq, 16);
    CHECK(n == 2 && seq[0] == q + 2 && seq[1] == q + 3,
          "after a LOSE of %u+2, %d frames went again (first %u)", q + 2, n, n ? seq[0] : 0);

    /* Ranges that name nothing resendable: frames never sent, a count that wraps, frames
     * acknowledged already. Nothing goes again. */
    lose_range(&fp, q, q + 100, 5);
    lose_range(&fp, q, q + 2, 0xffffffffu);
    lose_range(&fp, q + 1, q, 2);
    n = data_sent(&fp, lp.a, seq, 16);
    CHECK(n == 0, "a LOSE naming nothing resendable made %d frames go again (first %u)", n,
          n ? seq[0] : 0);
    /* A range reaching past what was sent resends up to the last frame sent. */
    lose_range(&fp, q + 1, q + 4, 1000);
    n = data_sent(&fp, lp.a, seq, 16);
    CHECK(n == 2 && seq[0] == q + 4 && seq[1] == q + 5,
          "a LOSE of %u on resent %d frames (first %u), not %u and %u", q + 4, n,
          n ? seq[0] : 0, q + 4, q + 5);

    /* Without a range (a receiver holding nothing): everything after its ACK again. */
    fp_send(&fp, PME_T_LOSE, 0, 1, q + 1, 1 << 20, 0, 0, NULL, 0);
    n = data_sent(&fp, lp.a, seq, 16);
    CHECK(n == 4 && seq[0] == q + 2 && seq[3] == q + 5,
          "a LOSE without a range resent %d frames from %u, not 4 from %u", n,
          n ? seq[0] : 0, q + 2);
    lp_close(&lp);
    printf("the sender resends the frames a LOSE names, and only those\n");
}

static size_t hold_bytes;

static void set_hold(struct pme_config *cfg)
{
    cfg->hold_bytes = hold_bytes;
}

static const size_t one_mib[] = {1u << 20};

/* A 1 MiB stream over a wire dropping 2% of frames, the receiver holding at most `hold`
 * bytes: the sender's counters, with the receiver's rx_held and drop_out_of_order. */
static struct pme_counters stream_under_loss(size_t hold, int quick)
{
    const struct pme_loop_faults f = {.seed = 21, .drop = 0.02};
    struct lp_pair lp;
    hold_bytes = hold;
    lp_open(&lp, &f, set_hold);
    struct lp_stream s = {.count = quick ? 4 : 16, .sizes = one_mib, .nsizes = 1,
                          .outstanding = 4, .timeout_s = 120};
    lp_run_stream(&lp, &s);
    struct pme_counters a, b;
    pme_ep_counters(lp.a, &a);
    pme_ep_counters(lp.b, &b);
    a.rx_held = b.rx_held;
    a.drop_out_of_order = b.drop_out_of_order;
    lp_close(&lp);
    return a;
}

static void fewer_resends_under_loss(int quick)
{
    struct pme_config defaults;
    pme_config_init(&defaults);
    struct pme_counters sel = stream_under_loss(defaults.hold_bytes, quick);
    struct pme_counters gbn = stream_under_loss(0, quick);
    printf("2%% of the frames dropped: %llu frames sent again (%llu held, %llu timeouts), "
           "%llu with Go-Back-N alone (%llu timeouts)\n", (unsigned long long)sel.retransmits,
           (unsigned long long)sel.rx_held, (unsigned long long)sel.rto_fired,
           (unsigned long long)gbn.retransmits, (unsigned long long)gbn.rto_fired);
    CHECK(sel.rx_held > 0, "no frame was held on a wire that drops 2%%");
    CHECK(gbn.rx_held == 0, "PME_HOLD=0 held %llu frames", (unsigned long long)gbn.rx_held);
    CHECK(sel.retransmits * 4 <= gbn.retransmits,
          "%llu frames sent again with holding, %llu without: not a quarter",
          (unsigned long long)sel.retransmits, (unsigned long long)gbn.retransmits);
    /* Room for two frames: the rest after a gap is dropped (no LOSE for it: a later
     * frame's or the timeout brings it), and the stream still arrives whole. */
    struct pme_counters small = stream_under_loss(2 * 9100, quick);
    printf("held within 2 frames: %llu held, %llu refused for want of room, %llu sent "
           "again\n", (unsigned long long)small.rx_held,
           (unsigned long long)small.drop_out_of_order, (unsigned long long)small.retransmits);
    CHECK(small.rx_held > 0 && small.drop_out_of_order > 0,
          "a budget of two frames: %llu held, %llu refused", (unsigned long long)small.rx_held,
          (unsigned long long)small.drop_out_of_order);
    /* Out of room the receiver answers the gap with Go-Back-N: no worse than it (the
     * build before named nothing it could not hold and resent 1.6 times as much). */
    CHECK(small.retransmits * 2 <= gbn.retransmits * 3,
          "a budget of two frames resent %llu frames, Go-Back-N %llu",
          (unsigned long long)small.retransmits, (unsigned long long)gbn.retransmits);
}

int main(void)
{
    int quick = getenv("PME_TEST_QUICK") != NULL;
    receiver_holds_and_names_gaps();
    sender_resends_what_is_named();
    fewer_resends_under_loss(quick);
    printf("selective retransmission works\n");
    return 0;
}
