// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_replay.c - handshakes cannot be replayed (doc/security.md): an eavesdropper holding
 * frames of an earlier run under the same key (a PME_JOB_SECRET_FILE reused across
 * runs, as the docs advise for spawn; node ids repeat, they come from MACs), or of this
 * run, changes nothing in a live connection by replaying them:
 *   1. an old run's HELLO, then that run's message: no PEER_FAILED, the old message is
 *      not delivered, the HELLO is answered with a challenge (counted as
 *      hello_challenged) and the old message dropped as stale; the live connection
 *      then carries messages both ways, in sequence;
 *   2. the old run's HELLO, then this run's own HELLO and message as recorded: the
 *      message is not delivered a second time, nothing fails, and the replayed frames
 *      are dropped as replays; the connection still works;
 *   3. the old run's HELLO with its Ethernet source forged, to an endpoint that has
 *      not met the peer yet (it learns a peer's NIC from its first frames): nothing it
 *      sends goes to the forged address, the peer's real process then connects and its
 *      message is delivered, and the old run's message is not;
 *   4. an old run's HELLO of a peer that is not in this run: no event at all, not even
 *      after the peer timeout (the stranger it made is closed quietly), where it made
 *      the caller see a PEER_FAILED.
 * And what must still work: 5. a peer's process that really restarts (a new
 * incarnation) answers the challenge and is adopted while the old connection is open:
 * the caller learns the old one failed (PME_ERR_PEER_DEAD), and the new one carries
 * messages both ways; 6. two endpoints that send to each other at once, their HELLOs
 * crossing, on a wire that drops, duplicates and reorders frames, both connect.
 * The peer is a scripted one (fakepeer.h) whose frames the test keeps, as an
 * eavesdropper would; the victim is one loop endpoint of the same node, id and secret
 * in both runs, as a rank of the same job script would be.
 *
 * pme-test: tier=default cpu=100 time=2
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "fakepeer.h"
#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

#define VICTIM_NODE 0x0a0a0001u
#define VICTIM_EP 5
#define PEER_NODE 0x0b0b0002u
#define PEER_EP 9
static const uint8_t peer_mac[6] = {0x02, 0xbb, 0x00, 0x00, 0x00, 0x09};
static const uint8_t evil_mac[6] = {0x02, 0xee, 0x00, 0x00, 0x00, 0x66};

/* A frame an eavesdropper recorded. */
struct rec {
    uint8_t f[2048];
    size_t n;
};

/* The victim: one endpoint, the same node, id and secret in every run. */
static unsigned peer_timeout_ms;
static pme_ep_t *open_victim(struct pme_loop_wire *w)
{
    struct pme_config cfg;
    char err[256];
    pme_ep_t *ep;
    lp_config(&cfg, w);
    cfg.node_id = VICTIM_NODE;
    cfg.ep_id = VICTIM_EP;
    if (peer_timeout_ms)
        cfg.peer_timeout_ms = peer_timeout_ms;
    CHECK(pme_ep_open(&cfg, &ep, err, sizeof(err)) == 0, "open: %s", err);
    return ep;
}

/* Build, seal and inject a frame of the peer, keeping a copy in r (if not NULL). */
static void send_rec(struct fakepeer *fp, struct rec *r, int type, uint32_t seq, int with_ack,
                     uint16_t flags, const void *sub, size_t sublen)
{
    static struct rec tmp;
    if (!r)
        r = &tmp;
    r->n = fp_build(fp, r->f, type, seq, with_ack, fp->rcv_nxt - 1, 1 << 20, flags, 0, sub,
                    sublen);
    fp_seal(fp, r->f, r->n);
    fp_inject(fp, r->f, r->n);
}

/* Inject a recorded frame again, from src (the recorded source when NULL). */
static void replay(struct fakepeer *fp, const struct rec *r, const uint8_t *src)
{
    static uint8_t f[2048];
    memcpy(f, r->f, r->n);
    if (src)
        memcpy(f + 6, src, 6); /* outside the MAC: anybody may write it */
    fp_inject(fp, f, r->n);
}

/* A one-frame eager message of the peer, its text as data. */
static void send_msg(struct fakepeer *fp, struct rec *r, const char *text)
{
    uint8_t sub[sizeof(struct pme_wire_frag) + 64];
    size_t len = strlen(text);
    struct pme_wire_frag frag = {htonl((uint32_t)len), 0, 0, 0};
    memcpy(sub, &frag, sizeof(frag));
    memcpy(sub + sizeof(frag), text, len);
    send_rec(fp, r, PME_T_DATA, fp->snd_nxt++, 1, PME_F_FIRST | PME_F_LAST | PME_F_ACK_REQ, sub,
             sizeof(frag) + len);
}

/* The peer's side of the handshake, the endpoint having said HELLO first (it had
 * something to send): answer its HELLO echoing its challenge, say HELLO (kept in
 * hello), take its HELLO_ACK. */
static void handshake(struct fakepeer *fp, pme_ep_t *ep, struct rec *hello)
{
    static struct fp_frame f;
    uint8_t body[FP_HELLO_BYTES];
    CHECK(fp_expect(fp, ep, PME_T_HELLO, &f, 1000), "the endpoint sent no HELLO");
    const struct pme_wire_hello *h = (const void *)f.sub;
    fp->rcv_nxt = ntohl(h->first_seq);
    size_t n = fp_hello(fp, body, 0, be64toh(h->chal), 0, 1500);
    send_rec(fp, NULL, PME_T_HELLO_ACK, 0, 1, 0, body, n);
    n = fp_hello(fp, body, FP_CHAL + fp->self.incarnation, 0, fp->snd_nxt, 1500);
    send_rec(fp, hello, PME_T_HELLO, 0, 0, 0, body, n);
    CHECK(fp_expect(fp, ep, PME_T_HELLO_ACK, &f, 1000), "the endpoint did not answer HELLO");
}

/* Progress ep a few times; the next event, if any, in *ev. */
static int settle(pme_ep_t *ep, struct pme_event *ev)
{
    for (int i = 0; i < 20; i++)
        pme_progress(ep);
    return pme_next_event(ep, ev);
}

/* The message event ep must deliver now: its text. */
static void expect_msg(pme_ep_t *ep, const char *text)
{
    struct pme_event ev;
    CHECK(settle(ep, &ev), "the message \"%s\" was not delivered", text);
    CHECK(ev.type == PME_EV_MSG && ev.data_len == strlen(text) &&
              !memcmp(ev.data, text, ev.data_len),
          "not the message \"%s\": event %d, %zu bytes", text, ev.type, (size_t)ev.data_len);
    pme_event_release(ep, &ev);
}

static void expect_nothing(pme_ep_t *ep, const char *after)
{
    struct pme_event ev;
    if (!settle(ep, &ev))
        return;
    CHECK(0, "after %s the endpoint delivered an event of type %d (status %d, %zu bytes%s%.*s)",
          after, ev.type, ev.status, (size_t)ev.data_len, ev.type == PME_EV_MSG ? ": " : "",
          ev.type == PME_EV_MSG ? (int)ev.data_len : 0,
          ev.type == PME_EV_MSG ? (const char *)ev.data : "");
}

/* The live connection works both ways: a new message of the peer's is delivered, and
 * one of the endpoint's reaches the peer, in sequence. */
static void still_works(struct fakepeer *fp, pme_ep_t *ep, pme_peer_t peer, const char *text)
{
    static struct fp_frame f;
    send_msg(fp, NULL, text);
    expect_msg(ep, text);
    uint32_t due = fp->rcv_nxt;
    CHECK(pme_send(ep, peer, "back", 4, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    CHECK(fp_expect(fp, ep, PME_T_DATA, &f, 1000), "the endpoint's message did not come");
    CHECK(f.seq == due, "the endpoint's message came as frame %u, not the %u due", f.seq, due);
}

/* The old run: the peer's first incarnation says HELLO and sends a message; the
 * eavesdropper keeps both. */
static void old_run(struct rec *old_hello, struct rec *old_msg)
{
    static struct fp_frame f;
    struct pme_loop_wire *w;
    struct fakepeer fp;
    char addr[PME_ADDR_MAX];
    pme_peer_t peer;
    CHECK_OK(pme_loop_wire_create(NULL, &w));
    pme_ep_t *ep = open_victim(w);
    fp_init(&fp, w, ep, peer_mac, PEER_EP, PEER_NODE, lp_secret, LP_JOB_KEY);
    fp.self.incarnation = 0x01d0001u;
    fp_addr(&fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(ep, addr, &peer));
    CHECK(pme_send(ep, peer, "hi", 2, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    handshake(&fp, ep, old_hello);
    CHECK(fp_expect(&fp, ep, PME_T_DATA, &f, 1000), "no DATA in the old run");
    send_msg(&fp, old_msg, "old run's message");
    expect_msg(ep, "old run's message");
    pme_ep_close(ep);
    pme_loop_wire_destroy(w);
}

struct live {
    struct pme_loop_wire *w;
    pme_ep_t *ep;
    struct fakepeer fp;
    pme_peer_t peer;
    struct rec hello, msg; /* this run's, as recorded */
};

/* This run: the peer's new incarnation connects and sends a message. */
static void live_run(struct live *l)
{
    static struct fp_frame f;
    char addr[PME_ADDR_MAX];
    CHECK_OK(pme_loop_wire_create(NULL, &l->w));
    l->ep = open_victim(l->w);
    fp_init(&l->fp, l->w, l->ep, peer_mac, PEER_EP, PEER_NODE, lp_secret, LP_JOB_KEY);
    l->fp.self.incarnation = 0x11e0002u;
    fp_addr(&l->fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(l->ep, addr, &l->peer));
    CHECK(pme_send(l->ep, l->peer, "hi", 2, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
          "send");
    handshake(&l->fp, l->ep, &l->hello);
    CHECK(fp_expect(&l->fp, l->ep, PME_T_DATA, &f, 1000), "no DATA");
    send_msg(&l->fp, &l->msg, "m1");
    expect_msg(l->ep, "m1");
}

static void live_end(struct live *l)
{
    pme_ep_close(l->ep);
    pme_loop_wire_destroy(l->w);
}

static struct pme_counters counters(pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return c;
}

static void test_old_hello(const struct rec *old_hello, const struct rec *old_msg)
{
    struct live l;
    live_run(&l);
    struct pme_counters c0 = counters(l.ep);
    replay(&l.fp, old_hello, NULL);
    replay(&l.fp, old_msg, NULL);
    expect_nothing(l.ep, "an old run's HELLO and message");
    struct pme_counters c = counters(l.ep);
    CHECK(c.hello_challenged == c0.hello_challenged + 1 && c.drop_stale > c0.drop_stale,
          "the old HELLO was not challenged (%llu) or its message not dropped as stale (%llu)",
          (unsigned long long)(c.hello_challenged - c0.hello_challenged),
          (unsigned long long)(c.drop_stale - c0.drop_stale));
    still_works(&l.fp, l.ep, l.peer, "m2");
    live_end(&l);
    printf("an old run's HELLO and message change nothing in a live connection\n");
}

static void test_old_hello_and_live_frames(const struct rec *old_hello)
{
    struct live l;
    live_run(&l);
    struct pme_counters c0 = counters(l.ep);
    replay(&l.fp, old_hello, NULL);
    replay(&l.fp, &l.hello, NULL);
    replay(&l.fp, &l.msg, NULL);
    expect_nothing(l.ep, "an old HELLO, then this run's HELLO and message again");
    struct pme_counters c = counters(l.ep);
    CHECK(c.drop_replay >= c0.drop_replay + 2, "this run's frames were not refused as replays "
          "(%llu)", (unsigned long long)(c.drop_replay - c0.drop_replay));
    still_works(&l.fp, l.ep, l.peer, "m2");
    live_end(&l);
    printf("an old HELLO and this run's recorded frames deliver nothing twice\n");
}

static void test_forged_source(const struct rec *old_hello, const struct rec *old_msg)
{
    static struct fp_frame f;
    struct pme_loop_wire *w;
    struct fakepeer fp, evil;
    CHECK_OK(pme_loop_wire_create(NULL, &w));
    pme_ep_t *ep = open_victim(w);
    fp_init(&fp, w, ep, peer_mac, PEER_EP, PEER_NODE, lp_secret, LP_JOB_KEY);
    fp.self.incarnation = 0x11e0003u;
    fp_init(&evil, w, ep, evil_mac, PEER_EP, PEER_NODE, lp_secret, LP_JOB_KEY);
    /* The endpoint has not met the peer: the old HELLO, from the forged address, is its
     * first word of it. */
    replay(&fp, old_hello, evil_mac);
    replay(&fp, old_msg, evil_mac);
    expect_nothing(ep, "an old run's HELLO and message from a forged address");
    CHECK(!fp_take(&evil, &f), "the endpoint sent a frame of type %d to the forged address",
          f.type);
    /* The peer's real process connects, as a server's client does. */
    while (fp_take(&fp, &f))
        ; /* the challenge to the old HELLO: the real process has nothing to say to it */
    uint8_t body[FP_HELLO_BYTES];
    size_t n = fp_hello(&fp, body, FP_CHAL, 0, fp.snd_nxt, 1500);
    send_rec(&fp, NULL, PME_T_HELLO, 0, 0, 0, body, n);
    CHECK(fp_expect(&fp, ep, PME_T_HELLO, &f, 1000), "the peer's HELLO was not challenged");
    const struct pme_wire_hello *h = (const void *)f.sub;
    CHECK(be64toh(h->echo) == FP_CHAL, "the challenge does not echo the peer's HELLO");
    fp.rcv_nxt = ntohl(h->first_seq);
    n = fp_hello(&fp, body, 0, be64toh(h->chal), 0, 1500);
    send_rec(&fp, NULL, PME_T_HELLO_ACK, 0, 1, 0, body, n);
    CHECK(fp_expect(&fp, ep, PME_T_HELLO_ACK, &f, 1000), "the endpoint did not answer HELLO");
    send_msg(&fp, NULL, "new client");
    expect_msg(ep, "new client");
    CHECK(!fp_take(&evil, &f), "the endpoint sent a frame of type %d to the forged address",
          f.type);
    pme_ep_close(ep);
    pme_loop_wire_destroy(w);
    printf("a forged source learns nothing: the peer's real process connects\n");
}

static void test_real_restart(void)
{
    static struct fp_frame f;
    struct live l;
    live_run(&l);
    /* The peer's process restarts: a new incarnation says HELLO from the same place. */
    struct fakepeer *fp = &l.fp;
    fp->self.incarnation = 0x11e0004u;
    fp->snd_nxt = 7000;
    fp->nonce = 0;
    uint8_t body[FP_HELLO_BYTES];
    size_t n = fp_hello(fp, body, FP_CHAL, 0, fp->snd_nxt, 1500);
    send_rec(fp, NULL, PME_T_HELLO, 0, 0, 0, body, n);
    const struct pme_wire_hello *h = NULL;
    double end = now_s() + 1;
    while (!h && now_s() < end)
        if (fp_expect(fp, l.ep, PME_T_HELLO, &f, 100) &&
            be64toh(((const struct pme_wire_hello *)f.sub)->echo) == FP_CHAL)
            h = (const void *)f.sub;
    CHECK(h, "the new incarnation's HELLO was not challenged");
    fp->rcv_nxt = ntohl(h->first_seq);
    n = fp_hello(fp, body, 0, be64toh(h->chal), 0, 1500);
    send_rec(fp, NULL, PME_T_HELLO_ACK, 0, 1, 0, body, n);
    CHECK(fp_expect(fp, l.ep, PME_T_HELLO_ACK, &f, 1000), "the new incarnation's HELLO was "
          "not answered once it proved itself");
    struct pme_event ev;
    CHECK(settle(l.ep, &ev) && ev.type == PME_EV_PEER_FAILED && ev.peer == l.peer &&
              ev.status == PME_ERR_PEER_DEAD,
          "the old incarnation's end was not reported (event %d, status %d)", ev.type,
          ev.status);
    still_works(fp, l.ep, l.peer, "from the new process");
    live_end(&l);
    printf("a peer's real restart is adopted: the old connection fails, the new one works\n");
}

/* An old run's HELLO of a peer that is not in this run: challenged, never answered,
 * and forgotten quietly after the peer timeout: the caller sees no failure. */
static void test_nobody_behind(const struct rec *old_hello)
{
    struct pme_loop_wire *w;
    struct fakepeer fp;
    CHECK_OK(pme_loop_wire_create(NULL, &w));
    peer_timeout_ms = 300;
    pme_ep_t *ep = open_victim(w);
    peer_timeout_ms = 0;
    fp_init(&fp, w, ep, peer_mac, PEER_EP, PEER_NODE, lp_secret, LP_JOB_KEY);
    struct pme_counters c0 = counters(ep);
    replay(&fp, old_hello, NULL);
    double end = now_s() + 1.5;
    struct pme_event ev;
    while (now_s() < end) {
        pme_progress(ep);
        CHECK(!pme_next_event(ep, &ev), "a replayed HELLO nobody stands behind made event %d "
              "(status %d)", ev.type, ev.status);
    }
    struct pme_counters c = counters(ep);
    CHECK(c.peers_closed == c0.peers_closed + 1 && c.peers_failed == c0.peers_failed,
          "the unanswered stranger was not closed quietly (closed %llu, failed %llu)",
          (unsigned long long)(c.peers_closed - c0.peers_closed),
          (unsigned long long)(c.peers_failed - c0.peers_failed));
    pme_ep_close(ep);
    pme_loop_wire_destroy(w);
    printf("an old HELLO nobody stands behind is forgotten quietly after the peer timeout\n");
}

/* Two endpoints send to each other at once: their HELLOs cross, each challenged by the
 * other's, on a wire that loses, duplicates and reorders; both messages arrive. */
static void test_crossing_hellos(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct pme_loop_faults faults = {.seed = seed, .drop = 0.2, .dup = 0.1,
                                         .reorder = 0.1};
        struct lp_pair lp;
        lp_open(&lp, &faults, NULL);
        CHECK(pme_send(lp.a, lp.a_to_b, "ab", 2, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
              "send a");
        CHECK(pme_send(lp.b, lp.b_to_a, "ba", 2, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
              "send b");
        int got_a = 0, got_b = 0;
        struct pme_event ev;
        double end = now_s() + 10;
        while ((!got_a || !got_b) && now_s() < end) {
            lp_progress(&lp);
            while (pme_next_event(lp.a, &ev)) {
                CHECK(ev.type == PME_EV_MSG && ev.hdr_len == 2 && !memcmp(ev.hdr, "ba", 2),
                      "seed %llu: a got event %d", (unsigned long long)seed, ev.type);
                got_a++;
                pme_event_release(lp.a, &ev);
            }
            while (pme_next_event(lp.b, &ev)) {
                CHECK(ev.type == PME_EV_MSG && ev.hdr_len == 2 && !memcmp(ev.hdr, "ab", 2),
                      "seed %llu: b got event %d", (unsigned long long)seed, ev.type);
                got_b++;
                pme_event_release(lp.b, &ev);
            }
        }
        CHECK(got_a == 1 && got_b == 1, "seed %llu: crossing HELLOs: a got %d, b got %d",
              (unsigned long long)seed, got_a, got_b);
        lp_close(&lp);
    }
    printf("crossing HELLOs on a lossy wire connect both ways (20 seeds)\n");
}

int main(void)
{
    static struct rec old_hello, old_msg;
    old_run(&old_hello, &old_msg);
    test_old_hello(&old_hello, &old_msg);
    test_old_hello_and_live_frames(&old_hello);
    test_forged_source(&old_hello, &old_msg);
    test_nobody_behind(&old_hello);
    test_real_restart();
    test_crossing_hellos();
    return 0;
}
