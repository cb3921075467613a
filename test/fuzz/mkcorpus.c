// SPDX-License-Identifier: BSD-3-Clause
/*
 * mkcorpus.c - the seed corpus of fuzz_rx: real exchanges between the fuzzed endpoint
 * and a scripted peer (test/loop/fakepeer.c), recorded frame by frame. Built like the
 * fuzzer (deterministic "random" numbers), so the recorded sequence numbers and
 * incarnations are the ones the fuzzer's endpoint will have.
 *
 *   mkcorpus DIR     writes one input per scenario and mode into DIR
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakepeer.h"
#include "fuzz_common.h"
#include "pme_test.h"
#include "pme_wire.h"

struct rec {
    uint8_t buf[1 << 20];
    size_t len;
};

static struct rec rec;
static struct fz z;
static struct fakepeer fp;
static struct fp_frame fr;

/* Build, seal, record and inject one frame of the fake peer; let the endpoint react. */
static void emit(int type, uint32_t seq, int with_ack, uint16_t flags, uint16_t aux,
                 const void *sub, size_t sublen)
{
    static uint8_t f[70000];
    size_t n = fp_build(&fp, f, type, seq, with_ack, fp.rcv_nxt - 1, 1 << 20, flags, aux, sub,
                        sublen);
    fp_seal(&fp, f, n);
    CHECK(rec.len + 2 + n <= sizeof(rec.buf), "corpus input too long");
    rec.buf[rec.len++] = (uint8_t)(n >> 8);
    rec.buf[rec.len++] = (uint8_t)n;
    memcpy(rec.buf + rec.len, f, n);
    rec.len += n;
    fp_inject(&fp, f, n);
    fz_events(&z);
}

static void start(uint8_t mode)
{
    CHECK(fz_open(&z, mode) == 0, "cannot open the fuzzed endpoint");
    fp_init(&fp, z.wire, z.ep, fz_peer_mac, FZ_PEER_EP, FZ_PEER_NODE,
            mode & FZ_MAC ? fz_secret : NULL, 0);
    rec.len = 0;
    rec.buf[rec.len++] = mode;
}

/* Answer the endpoint's HELLO. */
static void answer_hello(void)
{
    CHECK(fp_expect(&fp, z.ep, PME_T_HELLO, &fr, 1000), "no HELLO");
    const struct pme_wire_hello *in = (const void *)fr.sub;
    fp.rcv_nxt = ntohl(in->first_seq);
    uint8_t a[FP_HELLO_BYTES];
    size_t n = fp_hello(&fp, a, 0, be64toh(in->chal), 0, 1500);
    ((struct pme_wire_hello *)(void *)a)->features = htonl(PME_FEAT_RMA);
    emit(PME_T_HELLO_ACK, 0, 1, 0, 0, a, n);
}

/* The handshake as the fake peer plays it: the endpoint says HELLO first when it has
 * something to send; otherwise it answers ours with its own. */
static void handshake(uint8_t mode)
{
    uint8_t h[FP_HELLO_BYTES];
    size_t n = fp_hello(&fp, h, FP_CHAL, 0, fp.snd_nxt, 1500);
    ((struct pme_wire_hello *)(void *)h)->features = htonl(PME_FEAT_RMA);
    if (mode & FZ_SENDS)
        answer_hello();
    emit(PME_T_HELLO, 0, 0, 0, 0, h, n);
    if (!(mode & FZ_SENDS))
        answer_hello();
}

/* An eager message of n bytes in fragments of frag bytes. */
static void eager(size_t n, size_t frag)
{
    static uint8_t sub[2048];
    for (size_t off = 0; off < n || off == 0; off += frag) {
        size_t plen = n - off < frag ? n - off : frag;
        struct pme_wire_frag fh = {htonl((uint32_t)n), htonl((uint32_t)off), htons(n ? 1 : 0), 0};
        memcpy(sub, &fh, sizeof(fh));
        memset(sub + sizeof(fh), 'e', plen);
        uint16_t flags = (off == 0 ? PME_F_FIRST : 0) | (off + plen >= n ? PME_F_LAST : 0);
        emit(PME_T_DATA, fp.snd_nxt++, 1, flags, 0, sub, sizeof(fh) + plen);
        if (n == 0)
            break;
    }
}

/* A bundle (PME_DATA_BUNDLE) of n messages of lens[i] bytes (the first 4 of each its
 * header), in fragments of frag bytes; with `spoil` its count claims one more record
 * than it has (the receiver drops it whole). */
static void bundle(unsigned n, const uint32_t *lens, size_t frag, int spoil)
{
    static uint8_t b[1024], sub[2048];
    memset(b, 0, sizeof(b));
    struct pme_wire_bundle bh = {htons((uint16_t)(n + (spoil ? 1 : 0))), 0, 0};
    memcpy(b, &bh, sizeof(bh));
    uint32_t at = sizeof(bh), end = 0;
    for (unsigned i = 0; i < n; i++) {
        struct pme_wire_rec r = {htonl(lens[i]), htons(lens[i] < 4 ? 0 : 4), 0};
        memcpy(b + at, &r, sizeof(r));
        memset(b + at + sizeof(r), 'b', lens[i]);
        end = at + (uint32_t)sizeof(r) + lens[i];
        at = pme_wire_rec_after(end);
    }
    for (size_t off = 0; off < end; off += frag) {
        size_t plen = end - off < frag ? end - off : frag;
        struct pme_wire_frag fh = {htonl(end), htonl((uint32_t)off), 0, 0};
        memcpy(sub, &fh, sizeof(fh));
        memcpy(sub + sizeof(fh), b + off, plen);
        uint16_t flags = (off == 0 ? PME_F_FIRST : 0) | (off + plen >= end ? PME_F_LAST : 0);
        emit(PME_T_DATA, fp.snd_nxt++, 1, flags, PME_DATA_BUNDLE, sub, sizeof(fh) + plen);
    }
}

/* The fake peer offers n bytes; the endpoint accepts (fz_events); the data follows. */
static void rendezvous(uint64_t n)
{
    uint8_t sub[64];
    struct pme_wire_rts r = {htonl(0x1234), htons(8), 0, htobe64(n)};
    memcpy(sub, &r, sizeof(r));
    memset(sub + sizeof(r), 'h', 8);
    emit(PME_T_RTS, fp.snd_nxt++, 1, PME_F_FIRST | PME_F_LAST, 0, sub, sizeof(r) + 8);
    if (!fp_expect(&fp, z.ep, PME_T_CTS, &fr, 200))
        return;
    const struct pme_wire_cts *c = (const void *)fr.sub;
    uint64_t accepted = be64toh(c->accepted);
    static uint8_t d[1500];
    for (uint64_t off = 0; off < accepted; off += 1000) {
        struct pme_wire_rdata rd = {c->rndv_id, 0, htobe64(off)};
        size_t plen = accepted - off < 1000 ? (size_t)(accepted - off) : 1000;
        memcpy(d, &rd, sizeof(rd));
        memset(d + sizeof(rd), 'd', plen);
        emit(PME_T_RDATA, fp.snd_nxt++, 1, off + plen >= accepted ? PME_F_LAST : 0, 0, d,
             sizeof(rd) + plen);
    }
}

/* The endpoint's own rendezvous (FZ_SENDS): answer its RTS and acknowledge its data. */
static void answer_offer(void)
{
    if (!fp_expect(&fp, z.ep, PME_T_RTS, &fr, 200))
        return;
    const struct pme_wire_rts *r = (const void *)fr.sub;
    struct pme_wire_cts c = {r->send_id, htonl(0x77), htobe64(30000)};
    emit(PME_T_CTS, fp.snd_nxt++, 1, PME_F_FIRST | PME_F_LAST, 0, &c, sizeof(c));
    for (int i = 0; i < 30 && fp_expect(&fp, z.ep, PME_T_RDATA, &fr, 50); i++)
        ;
    emit(PME_T_ACK, 0, 1, 0, 0, NULL, 0);
}

static void controls(void)
{
    struct pme_wire_ping ping = {htobe64(42), 0, 0};
    emit(PME_T_ACK, 0, 1, 0, 0, NULL, 0);
    emit(PME_T_CREDIT, 0, 1, 0, 0, NULL, 0);
    emit(PME_T_CREDIT_REQ, 0, 1, 0, 0, NULL, 0);
    emit(PME_T_LOSE, 0, 1, 0, 0, NULL, 0);
    struct pme_wire_lose lost = {htonl(fp.rcv_nxt), htonl(2)};
    emit(PME_T_LOSE, 0, 1, 0, 0, &lost, sizeof(lost));
    /* A gap: the second frame comes first and is held until the first fills it. */
    emit(PME_T_NOP, fp.snd_nxt + 1, 1, PME_F_ACK_REQ, 0, NULL, 0);
    emit(PME_T_NOP, fp.snd_nxt, 1, 0, 0, NULL, 0);
    fp.snd_nxt += 2;
    emit(PME_T_STOP, 0, 1, 0, 0, NULL, 0);
    emit(PME_T_GO, 0, 1, 0, 0, NULL, 0);
    emit(PME_T_PING, 0, 1, 0, 0, &ping, sizeof(ping));
    emit(PME_T_PONG, 0, 1, 0, 0, &ping, sizeof(ping));
    emit(PME_T_NOP, fp.snd_nxt++, 1, PME_F_ACK_REQ, 0, NULL, 0);
    emit(PME_T_BYE, 0, 1, 0, 0, NULL, 0);
}

static void rma(unsigned op, unsigned flags, uint32_t req_id, uint64_t off, uint64_t len,
                size_t plen, uint16_t fflags)
{
    static uint8_t sub[sizeof(struct pme_wire_rma) + 1500];
    struct pme_wire_rma r = {.op = (uint8_t)op, .flags = (uint8_t)flags, .aop = PME_AOP_SUM,
                             .dtype = PME_DT_I32, .key = htonl(FZ_WIN_KEY), .req_id = htonl(req_id),
                             .offset = htobe64(off), .len = htobe64(len)};
    memcpy(sub, &r, sizeof(r));
    memset(sub + sizeof(r), 'r', plen);
    emit(PME_T_RMA, fp.snd_nxt++, 1, fflags, 0, sub, sizeof(r) + plen);
}

/* A bundle of one-sided requests (PME_RMA_BUNDLE): a put, an accumulate, a get and an
 * unlock of a lock nobody holds, one frame. */
static void rma_bundle(void)
{
    static uint8_t b[512];
    static const uint8_t ops[] = {PME_RMA_PUT, PME_RMA_ACC, PME_RMA_GET, PME_RMA_UNLOCK};
    static const uint8_t plens[] = {8, 16, 0, 0};
    memset(b, 0, sizeof(b));
    uint32_t at = sizeof(struct pme_wire_bundle), end = 0;
    for (unsigned i = 0; i < sizeof(ops); i++) {
        struct pme_wire_rma r = {.op = ops[i], .aop = PME_AOP_SUM, .dtype = PME_DT_I32,
                                 .key = htonl(FZ_WIN_KEY), .req_id = htonl(i == 2 ? 11 : 0),
                                 .offset = htobe64(32 * (uint64_t)i),
                                 .len = htobe64(ops[i] == PME_RMA_GET ? 16 : plens[i])};
        uint32_t len = (uint32_t)sizeof(r) + plens[i];
        struct pme_wire_rec rec = {htonl(len), 0, 0};
        memcpy(b + at, &rec, sizeof(rec));
        memcpy(b + at + sizeof(rec), &r, sizeof(r));
        memset(b + at + sizeof(rec) + sizeof(r), 'q', plens[i]);
        end = at + (uint32_t)sizeof(rec) + len;
        at = pme_wire_rec_after(end);
    }
    struct pme_wire_bundle bh = {htons(sizeof(ops)), 0, 0};
    memcpy(b, &bh, sizeof(bh));
    emit(PME_T_RMA, fp.snd_nxt++, 1, PME_F_FIRST | PME_F_LAST | PME_F_ACK_REQ, PME_RMA_BUNDLE,
         b, end);
}

/* One-sided requests to the endpoint's window, good and bad; in FZ_SENDS mode also the
 * answers to the endpoint's own requests. */
static void one_sided(uint8_t mode)
{
    const uint16_t one = PME_F_FIRST | PME_F_LAST;
    rma(PME_RMA_PUT, 0, 0, 100, 3000, 1344, PME_F_FIRST);
    rma(PME_RMA_PUT, 0, 0, 1444, 3000, 1344, 0);
    rma(PME_RMA_PUT, 0, 0, 2788, 3000, 312, PME_F_LAST | PME_F_ACK_REQ);
    rma(PME_RMA_ACC, 0, 0, 64, 64, 64, one);
    rma(PME_RMA_FETCH, 0, 5, 64, 8, 8, one);
    rma(PME_RMA_CAS, 0, 6, 64, 4, 8, one);
    rma(PME_RMA_GET, 0, 7, 0, 2000, 0, one);
    rma(PME_RMA_LOCK, PME_RMA_F_EXCL, 8, 0, 0, 0, one);
    rma(PME_RMA_PUT, PME_RMA_F_SHARED, 9, 0, 16, 16, one); /* waits behind the lock */
    rma(PME_RMA_UNLOCK, 0, 0, 0, 0, 0, one);
    rma(PME_RMA_UNLOCK, 0, 0, 0, 0, 0, one);
    rma(PME_RMA_PUT, 0, 0, 8190, 8, 8, one);                /* out of the window */
    rma(PME_RMA_GET, 0, 10, 0, 1 << 20, 0, one);
    rma_bundle();
    if (!(mode & FZ_SENDS))
        return;
    static uint8_t sub[sizeof(struct pme_wire_rma) + 1344];
    for (uint64_t off = 0; off < 3000; off += 1344) {
        size_t plen = 3000 - off < 1344 ? (size_t)(3000 - off) : 1344;
        struct pme_wire_rma a = {.op = PME_RMA_DATA, .req_id = htonl(FZ_REQ_GET),
                                 .offset = htobe64(off), .len = htobe64(3000)};
        memcpy(sub, &a, sizeof(a));
        memset(sub + sizeof(a), 'g', plen);
        emit(PME_T_RMA, fp.snd_nxt++, 1, 0, 0, sub, sizeof(a) + plen);
    }
    struct pme_wire_rma done = {.op = PME_RMA_DONE, .req_id = htonl(FZ_REQ_LOCK)};
    emit(PME_T_RMA, fp.snd_nxt++, 1, 0, 0, &done, sizeof(done));
    struct pme_wire_rma data = {.op = PME_RMA_DATA, .req_id = htonl(FZ_REQ_FETCH),
                                .len = htobe64(8)};
    memcpy(sub, &data, sizeof(data));
    memset(sub + sizeof(data), 'f', 8);
    emit(PME_T_RMA, fp.snd_nxt++, 1, 0, 0, sub, sizeof(data) + 8);
    struct pme_wire_rma nak = {.op = PME_RMA_NAK, .req_id = htonl(FZ_REQ_CAS),
                               .status = htonl(PME_RMA_E_RANGE)};
    emit(PME_T_RMA, fp.snd_nxt++, 1, 0, 0, &nak, sizeof(nak));
    nak.req_id = 0;
    emit(PME_T_RMA, fp.snd_nxt++, 1, 0, 0, &nak, sizeof(nak));
    /* Only the put may wait (for an acknowledgement); the NAKs failed the rest. */
    CHECK(pme_rma_pending(z.ep, z.peer) <= 1 && pme_rma_error(z.ep, z.peer) == PME_ERR_RANGE,
          "the answers left %u requests pending", pme_rma_pending(z.ep, z.peer));
}

static void save(const char *dir, const char *name, uint8_t mode)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s-%s%s", dir, name, mode & FZ_MAC ? "mac" : "plain",
             mode & FZ_SENDS ? "-sends" : "");
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(rec.buf, 1, rec.len, f) == rec.len && fclose(f) == 0, "write %s", path);
    fz_close(&z);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: mkcorpus DIR");
    static const uint8_t modes[] = {0, FZ_MAC, FZ_SENDS, FZ_MAC | FZ_SENDS};
    for (size_t i = 0; i < sizeof(modes); i++) {
        uint8_t m = modes[i];
        start(m);
        handshake(m);
        save(argv[1], "handshake", m);
        start(m);
        handshake(m);
        eager(1, 1400);
        eager(3000, 1400);
        eager(0, 1400);
        CHECK(z.msgs == 3, "the eager scenario delivered %u messages, not 3", z.msgs);
        save(argv[1], "eager", m);
        start(m);
        handshake(m);
        static const uint32_t lens[] = {12, 0, 4, 300, 40};
        bundle(5, lens, 1400, 0);
        bundle(5, lens, 100, 0); /* a bundle of several fragments */
        bundle(3, lens, 1400, 1);
        CHECK(z.msgs == 10, "the bundle scenario delivered %u messages, not 10", z.msgs);
        save(argv[1], "bundle", m);
        start(m);
        handshake(m);
        rendezvous(5000);
        rendezvous(2500); /* the caller accepts half of an offer of this size */
        CHECK(z.offers == 2 && z.landed == 2, "the rendezvous scenario: %u offers, %u landed",
              z.offers, z.landed);
        save(argv[1], "rendezvous", m);
        start(m);
        handshake(m);
        controls();
        save(argv[1], "controls", m);
        start(m);
        handshake(m);
        one_sided(m);
        CHECK(z.win[3099] == 'r' && z.win[8190] == 0, "the one-sided scenario's puts");
        save(argv[1], "one-sided", m);
        if (m & FZ_SENDS) {
            start(m);
            handshake(m);
            answer_offer();
            save(argv[1], "offer", m);
        }
    }
    printf("corpus written to %s\n", argv[1]);
    return 0;
}
