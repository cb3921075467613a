// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_frames.c - frames that are not the job's own are dropped and counted before they
 * change anything, and never delivered:
 *   - malformed: truncated, runts, longer than the MTU allows, another EtherType;
 *   - strangers: another job's frames; frames forged without the job's secret (no
 *     MAC, a wrong one, one bit changed); a sequenced frame from a stranger that never
 *     said HELLO; hundreds of forged HELLOs create no peer and take no credit;
 *   - replays: an authentic frame seen before; a frame of a peer's old incarnation;
 *   - versions: another wire version is answered with an authenticated VERSION_NAK; a
 *     peer's forged NAK cuts nothing, its authentic NAK fails it with a clear error;
 *   - CRC mode (PME_AUTH=crc): a corrupt frame is dropped.
 * The control cases (a proper HELLO from a job member is answered, a proper frame is
 * delivered) show that the drops are not an accident.
 * pme-test: tier=default cpu=90 time=1
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "crc32c.h"
#include "fakepeer.h"
#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

static const uint8_t member_mac[6] = {0x02, 0xee, 0xee, 0xee, 0xee, 0x01};
static const uint8_t stranger_mac[6] = {0x02, 0xee, 0xee, 0xee, 0xee, 0x02};
static const uint8_t wrong_secret[PME_SECRET_BYTES] = {9, 9, 9, 9, 9, 9, 9, 9,
                                                       9, 9, 9, 9, 9, 9, 9, 9};
#define KEY LP_JOB_KEY

static struct pme_counters counters(pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return c;
}

static void expect_no_event(pme_ep_t *ep, const char *what)
{
    struct pme_event ev;
    CHECK(!pme_next_event(ep, &ev), "%s delivered an event of type %d", what, ev.type);
}

/* Inject, progress, and return the counters. */
static struct pme_counters inject(struct fakepeer *fp, pme_ep_t *ep, const uint8_t *f, size_t n)
{
    fp_inject(fp, f, n);
    pme_progress(ep);
    return counters(ep);
}

/* Did ep answer fp with a frame of `type` (within a few passes)? */
static int answered(struct fakepeer *fp, pme_ep_t *ep, int type)
{
    static struct fp_frame fr;
    return fp_expect(fp, ep, type, &fr, 20);
}

static size_t hello_frame(struct fakepeer *fp, uint8_t *buf)
{
    uint8_t h[FP_HELLO_BYTES];
    size_t n = fp_hello(fp, h, FP_CHAL, 0, fp->snd_nxt, 1500);
    return fp_build(fp, buf, PME_T_HELLO, 0, 0, 0, 0, 0, 0, h, n);
}

/* Did ep answer fp's HELLO as it answers an incarnation it has not met: with a
 * challenge, a HELLO of its own that echoes the fake peer's? */
static int challenged(struct fakepeer *fp, pme_ep_t *ep)
{
    static struct fp_frame fr;
    if (!fp_expect(fp, ep, PME_T_HELLO, &fr, 20))
        return 0;
    const struct pme_wire_hello *h = (const void *)fr.sub;
    return fr.sublen >= sizeof(*h) && be64toh(h->echo) == FP_CHAL && h->chal;
}

static void test_malformed(pme_ep_t *ep, struct fakepeer *m)
{
    static uint8_t f[70000];
    struct pme_counters c0, c;
    size_t n = hello_frame(m, f);
    fp_seal(m, f, n);
    c0 = counters(ep);
    c = inject(m, ep, f, n - 4);
    CHECK(c.drop_short == c0.drop_short + 1, "truncated frame not counted as short");
    c = inject(m, ep, f, PME_ETH_HLEN + 10);
    CHECK(c.drop_short == c0.drop_short + 2, "runt not counted");
    /* longer than this endpoint's MTU allows */
    struct pme_wire_hdr *wh = (void *)(f + PME_ETH_HLEN);
    wh->len = htons(60000);
    c = inject(m, ep, f, PME_ETH_HLEN + sizeof(*wh) + 60000);
    CHECK(c.drop_bad_header == c0.drop_bad_header + 1, "oversized frame not dropped");
    /* another EtherType on the same wire */
    n = hello_frame(m, f);
    f[13] = 0x00;
    fp_seal(m, f, n);
    c = inject(m, ep, f, n);
    CHECK(c.drop_not_mine == c0.drop_not_mine + 1, "foreign EtherType not dropped");
    expect_no_event(ep, "malformed frames");
    printf("malformed frames dropped and counted\n");
}

static void test_strangers(struct lp_pair *lp, pme_ep_t *ep)
{
    static uint8_t f[2048];
    struct fakepeer other_job, forger, member;
    struct pme_counters c0, c;
    /* another job: its own secret, so its own job id */
    fp_init(&other_job, lp->wire, ep, stranger_mac, 98, 0x0b000001, wrong_secret, KEY);
    size_t n = hello_frame(&other_job, f);
    fp_seal(&other_job, f, n);
    c0 = counters(ep);
    c = inject(&other_job, ep, f, n);
    CHECK(c.drop_foreign_key == c0.drop_foreign_key + 1, "another job's frame not dropped");
    CHECK(!answered(&other_job, ep, PME_T_HELLO_ACK) && !challenged(&other_job, ep),
          "another job's HELLO was answered");

    /* a forger who knows the job id (it is on the wire) but not the secret */
    fp_init(&forger, lp->wire, ep, stranger_mac, 99, 0x0b000002, wrong_secret, KEY);
    fp_init(&member, lp->wire, ep, member_mac, 97, 0x0b000003, lp_secret, KEY);
    forger.keys.job_id = member.keys.job_id; /* it copies the job id it saw */
    c0 = counters(ep);
    for (int i = 0; i < 300; i++) {
        n = hello_frame(&forger, f);
        fp_seal(&forger, f, n);
        inject(&forger, ep, f, n);
    }
    c = counters(ep);
    CHECK(c.drop_auth == c0.drop_auth + 300, "forged HELLOs not dropped (%llu)",
          (unsigned long long)(c.drop_auth - c0.drop_auth));
    CHECK(!answered(&forger, ep, PME_T_HELLO_ACK) && !challenged(&forger, ep),
          "a forged HELLO was answered");
    size_t used, reserved, size;
    pme_ep_pool(ep, &used, &reserved, &size);
    CHECK(reserved == 0, "forged HELLOs reserved %zu bytes of credit", reserved);
    /* one bit of a member's authentic frame changed; the MAC stripped */
    n = hello_frame(&member, f);
    fp_seal(&member, f, n);
    f[PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + 5] ^= 0x10;
    c0 = counters(ep);
    c = inject(&member, ep, f, n);
    CHECK(c.drop_auth == c0.drop_auth + 1, "a corrupted frame passed");
    n = hello_frame(&member, f);
    struct pme_wire_hdr *wh = (void *)(f + PME_ETH_HLEN);
    wh->flags = htons(PME_F_CHECK_CRC);
    uint32_t crc = htonl(pme_crc32c(0, wh, n - PME_ETH_HLEN));
    memcpy(wh->check, &crc, 4);
    c = inject(&member, ep, f, n);
    CHECK(c.drop_auth == c0.drop_auth + 2, "a frame with a CRC instead of a MAC passed");
    /* a sequenced frame from a member that never said HELLO */
    struct pme_wire_frag fr = {htonl(1), 0, 0, 0};
    n = fp_build(&member, f, PME_T_DATA, 1000, 0, 0, 0, PME_F_FIRST | PME_F_LAST, 0, &fr,
                 sizeof(fr));
    fp_seal(&member, f, n);
    c = inject(&member, ep, f, n);
    CHECK(c.drop_unknown_peer == c0.drop_unknown_peer + 1, "data from a stranger not dropped");
    expect_no_event(ep, "strangers' frames");
    /* the control: the member's proper HELLO is answered (with a challenge: it is an
     * incarnation the endpoint has not met) */
    n = hello_frame(&member, f);
    fp_seal(&member, f, n);
    inject(&member, ep, f, n);
    CHECK(challenged(&member, ep), "a member's HELLO went unanswered");
    printf("strangers create no state: other jobs, forgers, corrupted and MAC-less frames\n");
}

/* A member peer in an open connection: replays and old incarnations are refused. */
static void test_replays(struct lp_pair *lp)
{
    static uint8_t f[2048];
    static struct fp_frame fr;
    struct fakepeer fp;
    char addr[PME_ADDR_MAX];
    pme_peer_t peer;
    fp_init(&fp, lp->wire, lp->a, member_mac, 55, 0x0c000001, lp_secret, KEY);
    fp_addr(&fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(lp->a, addr, &peer));
    CHECK(pme_send(lp->a, peer, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    fp_handshake(&fp, lp->a, 9000, 1 << 20);
    CHECK(fp_expect(&fp, lp->a, PME_T_DATA, &fr, 1000), "no DATA");
    /* an authentic message, delivered once */
    struct pme_wire_frag frag = {htonl(1), 0, 0, 0};
    uint8_t sub[sizeof(frag) + 1];
    memcpy(sub, &frag, sizeof(frag));
    sub[sizeof(frag)] = 'm';
    size_t n = fp_build(&fp, f, PME_T_DATA, fp.snd_nxt++, 1, fp.rcv_nxt - 1, 1 << 20,
                        PME_F_FIRST | PME_F_LAST | PME_F_ACK_REQ, 0, sub, sizeof(sub));
    fp_seal(&fp, f, n);
    struct pme_counters c0 = counters(lp->a), c;
    c = inject(&fp, lp->a, f, n);
    struct pme_event ev;
    CHECK(pme_next_event(lp->a, &ev) && ev.type == PME_EV_MSG && ev.data_len == 1,
          "the authentic message was not delivered");
    pme_event_release(lp->a, &ev);
    /* the same bytes again */
    c = inject(&fp, lp->a, f, n);
    CHECK(c.drop_replay == c0.drop_replay + 1, "a replayed frame was not refused");
    /* a frame of the peer's previous incarnation (authentic in its day) */
    fp.self.incarnation ^= 0x77;
    n = fp_build(&fp, f, PME_T_ACK, 0, 1, fp.rcv_nxt - 1, 1 << 20, 0, 0, NULL, 0);
    fp_seal(&fp, f, n);
    fp.self.incarnation ^= 0x77;
    c = inject(&fp, lp->a, f, n);
    CHECK(c.drop_stale == c0.drop_stale + 1, "an old incarnation's frame was taken");
    expect_no_event(lp->a, "replayed and stale frames");
    printf("replays and old incarnations refused\n");
}

static void test_versions(struct lp_pair *lp)
{
    static uint8_t f[2048];
    static struct fp_frame fr;
    struct fakepeer fp;
    char addr[PME_ADDR_MAX];
    pme_peer_t peer;
    pme_ep_t *ep = lp->a;
    fp_init(&fp, lp->wire, ep, member_mac, 66, 0x0d000001, lp_secret, KEY);
    fp_addr(&fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(ep, addr, &peer));
    /* a frame of another version: dropped, answered with an authenticated NAK */
    size_t n = hello_frame(&fp, f);
    ((struct pme_wire_hdr *)(f + PME_ETH_HLEN))->version = PME_WIRE_VERSION + 1;
    struct pme_counters c0 = counters(ep), c;
    c = inject(&fp, ep, f, n);
    CHECK(c.drop_version == c0.drop_version + 1, "another version not dropped");
    CHECK(fp_expect(&fp, ep, PME_T_VERSION_NAK, &fr, 20), "no VERSION_NAK");
    const struct pme_wire_version_nak *nak = (const void *)(fr.raw + PME_ETH_HLEN);
    CHECK(nak->version == PME_WIRE_VERSION && ntohs(nak->dst_ep) == 66 &&
              ntohl(nak->magic) == PME_VERSION_NAK_MAGIC &&
              pme_crc32c(0, nak, offsetof(struct pme_wire_version_nak, crc)) == ntohl(nak->crc),
          "VERSION_NAK malformed");
    struct pme_wire_nak parsed;
    struct pme_wire_self fake_self = fp.self;
    CHECK(pme_wire_nak_parse(&fp.keys, &fake_self, fr.raw, fr.len, &parsed) &&
              parsed.authenticated,
          "our VERSION_NAK is not authenticated under the job's key");

    /* A NAK answers a frame of ep's: this one, as a peer of the next version would see
     * it. */
    uint8_t req[64] = {0};
    memcpy(req + 6, fp.ep_mac, 6);
    ((struct pme_wire_version_nak *)(req + PME_ETH_HLEN))->src_ep = htons(fp.ep_ep_id);
    /* a forged NAK (made without the key): it cuts nothing */
    struct fakepeer forger;
    fp_init(&forger, lp->wire, ep, member_mac, 66, 0x0d000001, wrong_secret, KEY);
    forger.keys.job_id = fp.keys.job_id;
    uint8_t nakf[PME_WIRE_NAK_BYTES];
    pme_wire_nak_build(&forger.keys, &forger.self, 1, req, PME_WIRE_VERSION + 1, nakf);
    c0 = counters(ep);
    c = inject(&forger, ep, nakf, sizeof(nakf));
    CHECK(c.drop_auth == c0.drop_auth + 1, "a forged NAK was not refused");
    expect_no_event(ep, "a forged NAK");
    /* the member's own NAK (it speaks the next version) fails it, clearly */
    pme_wire_nak_build(&fp.keys, &fp.self, 2, req, PME_WIRE_VERSION + 1, nakf);
    c = inject(&fp, ep, nakf, sizeof(nakf));
    struct pme_event ev;
    CHECK(pme_next_event(ep, &ev) && ev.type == PME_EV_PEER_FAILED &&
              ev.status == PME_ERR_VERSION && ev.peer == peer,
          "an authentic NAK did not fail the peer");
    CHECK(strstr(pme_ep_last_error(ep), "wire version"), "message: %s", pme_ep_last_error(ep));
    CHECK(pme_send(ep, peer, NULL, 0, NULL, 0, 0, NULL) == PME_ERR_VERSION,
          "send to an incompatible peer did not fail");
    printf("versions: NAKs authenticated, forged ones ignored\n");
}

static void crc_mode(struct pme_config *cfg)
{
    cfg->secret_len = 0;
    cfg->auth = PME_AUTH_CRC;
}

static void test_crc_mode(void)
{
    static uint8_t f[2048];
    struct lp_pair lp;
    struct fakepeer fp;
    lp_open(&lp, NULL, crc_mode);
    CHECK(pme_ep_auth(lp.a) == PME_AUTH_CRC, "not in CRC mode");
    fp_init(&fp, lp.wire, lp.a, member_mac, 77, 0x0e000001, NULL, KEY);
    size_t n = hello_frame(&fp, f);
    fp_seal(&fp, f, n);
    f[n - 3] ^= 0x01;
    struct pme_counters c0 = counters(lp.a), c;
    c = inject(&fp, lp.a, f, n);
    CHECK(c.drop_crc == c0.drop_crc + 1, "a corrupt frame passed the CRC");
    f[n - 3] ^= 0x01;
    inject(&fp, lp.a, f, n);
    CHECK(challenged(&fp, lp.a), "the intact HELLO went unanswered");
    lp_close(&lp);
    printf("CRC mode: corruption caught\n");
}

int main(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, NULL);
    CHECK(pme_ep_auth(lp.b) == PME_AUTH_MAC, "loop tests run authenticated");
    struct fakepeer m;
    fp_init(&m, lp.wire, lp.b, member_mac, 96, 0x0b000004, lp_secret, KEY);
    test_malformed(lp.b, &m);
    test_strangers(&lp, lp.b);
    test_replays(&lp);
    test_versions(&lp);
    lp_print_counters("receiver", lp.b);
    lp_close(&lp);
    test_crc_mode();
    printf("malformed, foreign, forged and replayed frames dropped and counted\n");
    return 0;
}
