/*
 * t_frames.c - malformed and foreign frames are dropped and counted, never delivered:
 * truncated, oversized, another job's key, a bad CRC, another EtherType, an unknown
 * sender, another wire version (answered with a VERSION_NAK), and a peer's VERSION_NAK
 * that fails the peer with a clear error.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include "crc32c.h"
#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

static const uint8_t intruder[6] = {0x02, 0xee, 0xee, 0xee, 0xee, 0x01};
#define INTRUDER_EP 99

struct frame {
    uint8_t b[2048];
    size_t len;
};

static void parse_addr(pme_ep_t *ep, uint8_t mac[6], uint16_t *id)
{
    char addr[PME_ADDR_MAX];
    unsigned m[6], i;
    CHECK_OK(pme_ep_addr(ep, addr, sizeof(addr)));
    CHECK(sscanf(addr, "pme1:%x:%x:%x:%x:%x:%x/%u", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
                 &i) == 7, "address %s", addr);
    for (int k = 0; k < 6; k++)
        mac[k] = (uint8_t)m[k];
    *id = (uint16_t)i;
}

/* A well-formed HELLO from the intruder to ep, which tests then spoil one way each. */
static void make_hello(struct frame *f, pme_ep_t *ep, uint32_t key)
{
    uint8_t mac[6];
    uint16_t id;
    parse_addr(ep, mac, &id);
    memset(f, 0, sizeof(*f));
    memcpy(f->b, mac, 6);
    memcpy(f->b + 6, intruder, 6);
    f->b[12] = 0x88;
    f->b[13] = 0xB5;
    struct pme_wire_hdr *wh = (void *)(f->b + PME_ETH_HLEN);
    wh->dst_ep = htons(id);
    wh->version = PME_WIRE_VERSION;
    wh->type = PME_T_HELLO;
    wh->src_ep = htons(INTRUDER_EP);
    wh->len = htons(sizeof(struct pme_wire_hello));
    wh->job_key = htonl(key);
    struct pme_wire_hello *h = (void *)(wh + 1);
    h->incarnation = htonl(0x1234);
    h->first_seq = htonl(1000);
    h->max_frame = htons(1500);
    f->len = PME_ETH_HLEN + sizeof(*wh) + sizeof(*h);
}

static void seal(struct frame *f)
{
    struct pme_wire_hdr *wh = (void *)(f->b + PME_ETH_HLEN);
    uint32_t crc = pme_crc32c(0, wh, PME_WIRE_CRC_COVERED_HDR);
    crc = pme_crc32c(crc, wh + 1, ntohs(wh->len));
    wh->crc = htonl(crc);
}

static struct pme_counters counters(pme_ep_t *ep)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return c;
}

/* Inject f, progress ep, and return what its counters say about it. */
static struct pme_counters inject(struct lp_pair *lp, pme_ep_t *ep, struct frame *f)
{
    CHECK_OK(pme_loop_wire_inject(lp->wire, f->b, f->len));
    pme_progress(ep);
    return counters(ep);
}

static void expect_no_event(pme_ep_t *ep, const char *what)
{
    struct pme_event ev;
    CHECK(!pme_next_event(ep, &ev), "%s delivered an event of type %d", what, ev.type);
}

int main(void)
{
    struct lp_pair lp;
    lp_open(&lp, NULL, NULL);
    pme_ep_t *ep = lp.b;
    uint32_t key = 0x7e57; /* lp_config's */
    struct frame f;
    struct pme_counters c0, c;

    /* The control: a proper HELLO is answered (its HELLO_ACK goes to the intruder). */
    make_hello(&f, ep, key);
    seal(&f);
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    uint8_t got[2048];
    size_t n = pme_loop_wire_take(lp.wire, intruder, got, sizeof(got));
    CHECK(n >= PME_ETH_HLEN + sizeof(struct pme_wire_hdr), "no answer to a good HELLO");
    CHECK(((struct pme_wire_hdr *)(got + PME_ETH_HLEN))->type == PME_T_HELLO_ACK,
          "answer is not a HELLO_ACK");
    while (pme_loop_wire_take(lp.wire, intruder, got, sizeof(got)))
        ; /* and our own HELLO */

    /* truncated: the header says more than the frame holds */
    make_hello(&f, ep, key);
    seal(&f);
    f.len -= 4;
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    CHECK(c.drop_short == c0.drop_short + 1, "truncated frame not counted as short");
    /* shorter than a header */
    f.len = PME_ETH_HLEN + 10;
    c = inject(&lp, ep, &f);
    CHECK(c.drop_short == c0.drop_short + 2, "runt not counted");

    /* oversized: longer than this endpoint's MTU allows */
    static uint8_t big[70000];
    make_hello(&f, ep, key);
    memcpy(big, f.b, f.len);
    struct pme_wire_hdr *bwh = (void *)(big + PME_ETH_HLEN);
    bwh->len = htons(60000);
    c0 = counters(ep);
    CHECK_OK(pme_loop_wire_inject(lp.wire, big, PME_ETH_HLEN + 32 + 60000));
    pme_progress(ep);
    c = counters(ep);
    CHECK(c.drop_bad_header == c0.drop_bad_header + 1, "oversized frame not dropped");

    /* another job */
    make_hello(&f, ep, key + 1);
    seal(&f);
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    CHECK(c.drop_foreign_key == c0.drop_foreign_key + 1, "foreign key not dropped");
    /* Our own HELLO to the intruder may be retransmitted meanwhile; an answer to the
     * foreign HELLO would be a HELLO_ACK. */
    while ((n = pme_loop_wire_take(lp.wire, intruder, got, sizeof(got))))
        CHECK(((struct pme_wire_hdr *)(got + PME_ETH_HLEN))->type != PME_T_HELLO_ACK,
              "foreign job answered");

    /* corrupt: one bit of the payload flipped after sealing */
    make_hello(&f, ep, key);
    seal(&f);
    f.b[PME_ETH_HLEN + 32 + 3] ^= 0x10;
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    CHECK(c.drop_crc == c0.drop_crc + 1, "corrupt frame not dropped");

    /* another EtherType on the same wire */
    make_hello(&f, ep, key);
    f.b[13] = 0x00;
    seal(&f);
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    CHECK(c.drop_not_mine == c0.drop_not_mine + 1, "foreign EtherType not dropped");

    /* a sequenced frame from a sender that never said HELLO */
    make_hello(&f, ep, key);
    struct pme_wire_hdr *wh = (void *)(f.b + PME_ETH_HLEN);
    wh->src_ep = htons(INTRUDER_EP + 1);
    wh->type = PME_T_DATA;
    seal(&f);
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    CHECK(c.drop_unknown_peer == c0.drop_unknown_peer + 1, "stranger's data not dropped");
    expect_no_event(ep, "bad frames");

    /* another wire version: dropped, and answered with a VERSION_NAK */
    make_hello(&f, ep, key);
    wh = (void *)(f.b + PME_ETH_HLEN);
    wh->version = PME_WIRE_VERSION + 1;
    seal(&f);
    c0 = counters(ep);
    c = inject(&lp, ep, &f);
    CHECK(c.drop_version == c0.drop_version + 1, "other version not dropped");
    struct pme_wire_version_nak *nak = NULL;
    while ((n = pme_loop_wire_take(lp.wire, intruder, got, sizeof(got))))
        if (((struct pme_wire_hdr *)(got + PME_ETH_HLEN))->type == PME_T_VERSION_NAK) {
            nak = (void *)(got + PME_ETH_HLEN);
            break;
        }
    CHECK(nak && n >= PME_ETH_HLEN + sizeof(*nak), "no VERSION_NAK");
    CHECK(nak->type == PME_T_VERSION_NAK && nak->version == PME_WIRE_VERSION &&
              ntohs(nak->dst_ep) == INTRUDER_EP && ntohl(nak->magic) == PME_VERSION_NAK_MAGIC &&
              pme_crc32c(0, nak, offsetof(struct pme_wire_version_nak, crc)) == ntohl(nak->crc),
          "VERSION_NAK malformed");

    /* A peer tells us it speaks another version: sends to it fail clearly. */
    uint8_t amac[6];
    uint16_t aid;
    parse_addr(lp.a, amac, &aid);
    struct pme_wire_version_nak v = {0};
    uint8_t vf[PME_ETH_HLEN + sizeof(v)];
    uint8_t bmac[6];
    uint16_t bid;
    parse_addr(lp.b, bmac, &bid);
    memcpy(vf, bmac, 6);
    memcpy(vf + 6, amac, 6);
    vf[12] = 0x88;
    vf[13] = 0xB5;
    v.dst_ep = htons(bid);
    v.version = PME_WIRE_VERSION + 1;
    v.type = PME_T_VERSION_NAK;
    v.src_ep = htons(aid);
    v.magic = htonl(PME_VERSION_NAK_MAGIC);
    v.crc = htonl(pme_crc32c(0, &v, offsetof(struct pme_wire_version_nak, crc)) ^ 1);
    memcpy(vf + PME_ETH_HLEN, &v, sizeof(v));
    /* first with a broken CRC: ignored */
    CHECK_OK(pme_loop_wire_inject(lp.wire, vf, sizeof(vf)));
    pme_progress(ep);
    expect_no_event(ep, "a NAK with a bad CRC");
    v.crc = htonl(pme_crc32c(0, &v, offsetof(struct pme_wire_version_nak, crc)));
    memcpy(vf + PME_ETH_HLEN, &v, sizeof(v));
    CHECK_OK(pme_loop_wire_inject(lp.wire, vf, sizeof(vf)));
    pme_progress(ep);
    struct pme_event ev;
    CHECK(pme_next_event(ep, &ev) && ev.type == PME_EV_PEER_FAILED &&
              ev.status == PME_ERR_VERSION && ev.peer == lp.b_to_a,
          "no PEER_FAILED(version) event");
    CHECK(strstr(pme_ep_last_error(ep), "version 2"), "message: %s", pme_ep_last_error(ep));
    CHECK(pme_send(ep, lp.b_to_a, NULL, 0, NULL, 0, 0, NULL) == PME_ERR_VERSION,
          "send to an incompatible peer did not fail");
    lp_print_counters("receiver", ep);
    lp_close(&lp);
    printf("malformed and foreign frames dropped and counted\n");
    return 0;
}
