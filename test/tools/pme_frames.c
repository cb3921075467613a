// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_frames - writes a capture file of PME frames built by pme_core's own wire layer,
 * good ones of every type and bad ones of every kind the dissector must flag, and prints
 * what the dissector should say about each (the expectations of
 * test/tools/t-wireshark-frames.sh).
 *
 *   pme_frames FILE.pcap [ETHERTYPE]
 *
 * One line per frame on standard output, tab-separated:
 *   number  case  check-status  experts  netmod
 * check-status is the expected pme.check.status ("Good", "Bad", "Unverified",
 * "Not present", or "-" when the dissector cannot reach the check); experts the expert
 * infos expected on the frame, comma-separated ("-": none); netmod the expected fields
 * of the ch4:pme netmod's header as field=value pairs separated by commas ("-": none).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "wire.h"

#define SNAPLEN 262144

static FILE *out;
static int nframes;
static struct pme_wire_self self_a = {{2, 0, 0, 0, 0, 0xa}, 7, 0x0a000001, 0x1111, 0, 16};
static struct pme_wire_self self_b = {{2, 0, 0, 0, 0, 0xb}, 9, 0x0a000002, 0x2222, 0, 16};
static struct pme_wire_keys k_crc, k_mac, k_none;

static void put32(uint32_t v) { fwrite(&v, 4, 1, out); }

/* Append one frame to the capture (padded to Ethernet's 60-byte minimum, as a NIC
 * would send it) and print its expectations. */
static void emit(const uint8_t *f, size_t n, const char *name, const char *status,
                 const char *experts, const char *netmod)
{
    uint8_t padded[60] = {0};
    if (n < 60) {
        memcpy(padded, f, n);
        f = padded;
        n = 60;
    }
    nframes++;
    put32((uint32_t)nframes);
    put32(0);
    put32((uint32_t)n);
    put32((uint32_t)n);
    fwrite(f, 1, n, out);
    printf("%d\t%s\t%s\t%s\t%s\n", nframes, name, status, experts, netmod);
}

/* A frame from a to b: headers, sub-header and payload, sealed under keys k. Returns
 * its length; the PME header is at buf + PME_ETH_HLEN. */
static size_t build(uint8_t *buf, const struct pme_wire_keys *k, int type, uint16_t flags,
                    const void *subh, size_t sublen, const void *payload, size_t plen)
{
    struct pme_wire_hdr *wh = pme_wire_start(buf, &self_a, self_b.mac, self_b.node, self_b.ep,
                                             type, sublen + plen);
    wh->job_id = htonl(k->job_id);
    wh->seq = htonl(1000);
    wh->flags = htons(flags | PME_F_ACK_VALID);
    wh->ack = htonl(500);
    wh->credit = htonl(262144);
    if (type == PME_T_DATA || type == PME_T_RTS || type == PME_T_CTS)
        wh->order = htonl(7); /* in-order items carry their number (any rail) */
    memcpy(wh + 1, subh, sublen);
    memcpy((uint8_t *)(wh + 1) + sublen, payload, plen);
    size_t n = PME_ETH_HLEN + sizeof(*wh) + sublen + plen;
    struct pme_dev_frame f = {.iov = {{buf, n}}, .iovcnt = 1};
    pme_wire_seal(k, &self_a, (uint64_t)nframes + 1, &f);
    return n;
}

static struct pme_wire_hdr *hdr_of(uint8_t *buf)
{
    return (struct pme_wire_hdr *)(buf + PME_ETH_HLEN);
}

/* The ch4:pme netmod's 8-byte header (pme_am_wire.h), in the sender's byte order
 * (little-endian: this program runs where MPICH does). */
static size_t netmod_hdr(uint8_t *p, int handler, int kind, uint32_t tag)
{
    p[0] = (uint8_t)handler;
    p[1] = 0;
    p[2] = 0;
    p[3] = (uint8_t)kind;
    uint32_t t = htole32(tag);
    memcpy(p + 4, &t, 4);
    return 8;
}

/* MPIDIG_hdr_t of MPICH 4.0.2 on LP64, little-endian: 48 bytes. */
static size_t mpidig_send_hdr(uint8_t *p, int32_t rank, int32_t tag, uint16_t ctx,
                              uint32_t flags, int64_t data_sz)
{
    memset(p, 0, 48);
    uint32_t r = htole32((uint32_t)rank), t = htole32((uint32_t)tag), fl = htole32(flags);
    uint16_t c = htole16(ctx);
    uint64_t sreq = htole64(0x00007f0012345678ull), sz = htole64((uint64_t)data_sz);
    memcpy(p, &r, 4);
    memcpy(p + 4, &t, 4);
    memcpy(p + 8, &c, 2);
    memcpy(p + 16, &fl, 4);
    memcpy(p + 24, &sreq, 8);
    memcpy(p + 32, &sz, 8);
    return 48;
}

static size_t data_frame(uint8_t *buf, const struct pme_wire_keys *k, uint32_t total,
                         uint32_t offset, uint16_t hdr_len, const uint8_t *bytes, size_t n)
{
    struct pme_wire_frag fr = {htonl(total), htonl(offset), htons(hdr_len), 0};
    uint16_t fl = (offset == 0 ? PME_F_FIRST : 0) | (offset + n == total ? PME_F_LAST : 0);
    return build(buf, k, PME_T_DATA, fl, &fr, sizeof(fr), bytes, n);
}

/* A bundle (PME_DATA_BUNDLE) of one message (its n bytes, hdr_len of them header) and
 * an empty one, in one DATA frame; `claim` is the second record's length as written
 * (0 for a good bundle, more to make it overrun the bundle). */
static size_t bundle_frame(uint8_t *buf, const struct pme_wire_keys *k, const uint8_t *msg,
                           size_t n, uint16_t hdr_len, uint32_t claim)
{
    uint8_t b[1024] = {0};
    struct pme_wire_bundle bh = {htons(2), 0, 0};
    memcpy(b, &bh, sizeof(bh));
    struct pme_wire_rec r0 = {htonl((uint32_t)n), htons(hdr_len), 0};
    memcpy(b + 8, &r0, sizeof(r0));
    memcpy(b + 16, msg, n);
    uint32_t at = pme_wire_rec_after(16 + (uint32_t)n);
    struct pme_wire_rec r1 = {htonl(claim), 0, 0};
    memcpy(b + at, &r1, sizeof(r1));
    uint32_t total = at + (uint32_t)sizeof(r1);
    struct pme_wire_frag fr = {htonl(total), 0, 0, 0};
    size_t len = build(buf, k, PME_T_DATA, PME_F_FIRST | PME_F_LAST, &fr, sizeof(fr), b, total);
    hdr_of(buf)->aux = htons(PME_DATA_BUNDLE);
    struct pme_dev_frame df = {.iov = {{buf, len}}, .iovcnt = 1};
    pme_wire_seal(k, &self_a, (uint64_t)nframes + 1, &df);
    return len;
}

/* A bundle of one-sided operations (PME_RMA_BUNDLE): a put of 8 bytes and a get;
 * `claim` as bundle_frame's. */
static size_t rma_bundle_frame(uint8_t *buf, const struct pme_wire_keys *k, uint32_t claim)
{
    uint8_t b[256] = {0};
    struct pme_wire_bundle bh = {htons(2), 0, 0};
    memcpy(b, &bh, sizeof(bh));
    struct pme_wire_rma put = {.op = PME_RMA_PUT, .key = htonl(0x100000),
                               .offset = htobe64(8), .len = htobe64(8)};
    uint32_t n0 = (uint32_t)sizeof(put) + 8;
    struct pme_wire_rec r0 = {htonl(n0), 0, 0};
    memcpy(b + 8, &r0, sizeof(r0));
    memcpy(b + 16, &put, sizeof(put));
    memcpy(b + 16 + sizeof(put), "8 bytes!", 8);
    uint32_t at = pme_wire_rec_after(16 + n0);
    struct pme_wire_rma get = {.op = PME_RMA_GET, .key = htonl(0x100000),
                               .req_id = htonl(0x100002), .offset = htobe64(64),
                               .len = htobe64(16)};
    struct pme_wire_rec r1 = {htonl(claim ? claim : (uint32_t)sizeof(get)), 0, 0};
    memcpy(b + at, &r1, sizeof(r1));
    memcpy(b + at + sizeof(r1), &get, sizeof(get));
    uint32_t total = at + (uint32_t)(sizeof(r1) + sizeof(get));
    size_t len = build(buf, k, PME_T_RMA, PME_F_FIRST | PME_F_LAST, b, total, NULL, 0);
    hdr_of(buf)->aux = htons(PME_RMA_BUNDLE);
    struct pme_dev_frame df = {.iov = {{buf, len}}, .iovcnt = 1};
    pme_wire_seal(k, &self_a, (uint64_t)nframes + 1, &df);
    return len;
}

/* Frames that must decode cleanly: one or more of every type. */
static void good_frames(void)
{
    uint8_t f[2048], m[256];
    size_t n;
    struct pme_wire_hello h = {.chal = htobe64(0x1111), .first_seq = htonl(999),
                               .max_frame = htons(9000), .nrails = 1};
    emit(f, build(f, &k_crc, PME_T_HELLO, 0, &h, sizeof(h), NULL, 0), "hello", "Good", "-", "-");
    h.chal = 0;
    h.echo = htobe64(0x2222);
    emit(f, build(f, &k_crc, PME_T_HELLO_ACK, 0, &h, sizeof(h), NULL, 0), "hello_ack", "Good",
         "-", "-");
    /* A sender of two rails lists its NICs after the sub-header. */
    uint8_t hr[sizeof(h) + 12] = {0};
    h.chal = htobe64(0x3333);
    h.echo = 0;
    h.nrails = 2;
    memcpy(hr, &h, sizeof(h));
    memcpy(hr + sizeof(h), "\x02\x00\x00\x01\x00\x00\x02\x00\x00\x01\x00\x01", 12);
    emit(f, build(f, &k_crc, PME_T_HELLO, 0, hr, sizeof(hr), NULL, 0), "hello_rails", "Good",
         "-", "-");

    n = netmod_hdr(m, 0, 0, 0);
    n += mpidig_send_hdr(m + n, 3, 42, 0x1234, 1, 5);
    memcpy(m + n, "hello", 5);
    emit(f, data_frame(f, &k_crc, (uint32_t)n + 5, 0, (uint16_t)n, m, n + 5), "data_mpi_send",
         "Good", "-", "handler=0,kind=0,port_tag=0,src_rank=3,tag=42,data_sz=5");

    n = netmod_hdr(m, 0, 0, 0);
    n += mpidig_send_hdr(m + n, 1, 7, 0x10, 2, 1 << 20);
    struct pme_wire_rts r = {htonl(0xabcd), htons((uint16_t)n), 0, htobe64(1 << 20)};
    emit(f, build(f, &k_crc, PME_T_RTS, PME_F_FIRST | PME_F_LAST, &r, sizeof(r), m, n),
         "rts_mpi_send", "Good", "-", "handler=0,kind=0,port_tag=0,src_rank=1,tag=7,data_sz=1048576");

    n = netmod_hdr(m, 0, 1, 77);
    memcpy(m + n, "port", 4);
    emit(f, data_frame(f, &k_crc, (uint32_t)n + 4, 0, (uint16_t)n, m, n + 4), "data_dynproc",
         "Good", "-", "handler=0,kind=1,port_tag=77");

    /* A bundle: an MPI send and an empty message, each decoded on its own. */
    n = netmod_hdr(m, 0, 0, 0);
    n += mpidig_send_hdr(m + n, 3, 42, 0x1234, 1, 5);
    memcpy(m + n, "hello", 5);
    emit(f, bundle_frame(f, &k_crc, m, n + 5, (uint16_t)n, 0), "data_bundle", "Good", "-",
         "handler=0,kind=0,port_tag=0,src_rank=3,tag=42,data_sz=5");

    /* A later fragment: data only, nothing for the netmod's decoder. */
    memset(m, 0x5a, 100);
    emit(f, data_frame(f, &k_crc, 5000, 4000, 56, m, 100), "data_later_fragment", "Good", "-",
         "-");

    struct pme_wire_cts c = {htonl(0xabcd), htonl(0x77), htobe64(1 << 20)};
    emit(f, build(f, &k_crc, PME_T_CTS, 0, &c, sizeof(c), NULL, 0), "cts", "Good", "-", "-");
    n = build(f, &k_crc, PME_T_CTS, 0, &c, sizeof(c), NULL, 0);
    hdr_of(f)->aux = htons(PME_CTS_DISCARD);
    struct pme_dev_frame df = {.iov = {{f, n}}, .iovcnt = 1};
    pme_wire_seal(&k_crc, &self_a, 77, &df);
    emit(f, n, "cts_discard", "Good", "-", "-");

    struct pme_wire_rdata rd = {htonl(0x77), 0, htobe64(65536)};
    emit(f, build(f, &k_crc, PME_T_RDATA, 0, &rd, sizeof(rd), m, 100), "rdata", "Good", "-",
         "-");

    /* One-sided: a put with its payload, a get, an accumulate that takes the lock, the
     * answers. */
    struct pme_wire_rma q = {.op = PME_RMA_PUT, .key = htonl(0x100000), .offset = htobe64(64),
                             .len = htobe64(100)};
    emit(f, build(f, &k_crc, PME_T_RMA, PME_F_FIRST | PME_F_LAST, &q, sizeof(q), m, 100),
         "rma_put", "Good", "-", "-");
    q.op = PME_RMA_GET;
    q.req_id = htonl(0x100001);
    emit(f, build(f, &k_crc, PME_T_RMA, PME_F_FIRST | PME_F_LAST, &q, sizeof(q), NULL, 0),
         "rma_get", "Good", "-", "-");
    q.op = PME_RMA_ACC;
    q.flags = PME_RMA_F_EXCL;
    q.aop = PME_AOP_SUM;
    q.dtype = PME_DT_F64;
    q.len = htobe64(16);
    emit(f, build(f, &k_crc, PME_T_RMA, PME_F_FIRST | PME_F_LAST, &q, sizeof(q), m, 16),
         "rma_acc_locking", "Good", "-", "-");
    struct pme_wire_rma a = {.op = PME_RMA_DATA, .req_id = htonl(0x100001), .len = htobe64(100)};
    emit(f, build(f, &k_crc, PME_T_RMA, 0, &a, sizeof(a), m, 100), "rma_data", "Good", "-", "-");
    a.op = PME_RMA_DONE;
    emit(f, build(f, &k_crc, PME_T_RMA, 0, &a, sizeof(a), NULL, 0), "rma_done", "Good", "-", "-");
    emit(f, rma_bundle_frame(f, &k_crc, 0), "rma_bundle", "Good", "-", "-");

    static const struct { int type; const char *name; } bare[] = {
        {PME_T_NOP, "nop"},       {PME_T_ACK, "ack"},       {PME_T_LOSE, "lose"},
        {PME_T_STOP, "stop"},     {PME_T_GO, "go"},         {PME_T_CREDIT, "credit"},
        {PME_T_CREDIT_REQ, "credit_req"}, {PME_T_BYE, "bye"},
    };
    for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++)
        emit(f, build(f, &k_crc, bare[i].type, 0, NULL, 0, NULL, 0), bare[i].name, "Good", "-",
             "-");

    struct pme_wire_lose l = {htonl(1001), htonl(3)};
    emit(f, build(f, &k_crc, PME_T_LOSE, 0, &l, sizeof(l), NULL, 0), "lose_range", "Good", "-",
         "-");

    struct pme_wire_ping p = {htobe64(0x1122334455667788ull), htonl(1001), 0};
    emit(f, build(f, &k_crc, PME_T_PING, 0, &p, sizeof(p), NULL, 0), "ping", "Good", "-", "-");
    emit(f, build(f, &k_crc, PME_T_PONG, 0, &p, sizeof(p), NULL, 0), "pong", "Good", "-", "-");

    /* Forwarders rewrite hops_left: the CRC leaves it out. */
    n = build(f, &k_crc, PME_T_ACK, 0, NULL, 0, NULL, 0);
    f[PME_WIRE_OFF_HOPS_LEFT] = 3;
    emit(f, n, "hops_rewritten", "Good", "-", "-");
}

/* A VERSION_NAK answering a frame from b, under keys k; auth: with the part that
 * version 2 adds. */
static size_t nak(uint8_t *f, const struct pme_wire_keys *k, int auth)
{
    uint8_t answered[128];
    build(answered, k, PME_T_HELLO, 0, NULL, 0, NULL, 0);
    size_t len = pme_wire_nak_build(k, &self_b, 5, answered, PME_WIRE_VERSION, f);
    return auth ? len : PME_ETH_HLEN + sizeof(struct pme_wire_version_nak);
}

/* Frames the dissector must flag, each for one reason. */
static void bad_frames(void)
{
    uint8_t f[2048], m[256];
    size_t n;
    memset(m, 0x33, sizeof(m));

    n = data_frame(f, &k_crc, 100, 0, 0, m, 100);
    f[n - 1] ^= 0x01;
    emit(f, n, "crc_bad", "Bad", "pme.expert.crc_bad", "-");

    n = build(f, &k_crc, PME_T_ACK, 0, NULL, 0, NULL, 0);
    hdr_of(f)->len = htons(100);
    emit(f, n, "len_beyond_frame", "Unverified", "pme.expert.len", "-");

    n = build(f, &k_crc, PME_T_ACK, 0, NULL, 0, NULL, 0);
    memset(f + n, 0xee, 10);
    emit(f, n + 10, "trailing_bytes", "Good", "pme.expert.trailing", "-");

    n = build(f, &k_crc, PME_T_ACK, 0, NULL, 0, NULL, 0);
    hdr_of(f)->version = PME_WIRE_VERSION + 1;
    emit(f, n, "version_next", "-", "pme.expert.version", "-");

    emit(f, build(f, &k_crc, 99, 0, NULL, 0, NULL, 0), "type_99", "Good", "pme.expert.type", "-");

    emit(f, build(f, &k_mac, PME_T_ACK, 0, NULL, 0, NULL, 0), "mac", "Unverified",
         "pme.expert.mac_unverified", "-");
    emit(f, build(f, &k_none, PME_T_ACK, 0, NULL, 0, NULL, 0), "no_check", "Not present",
         "pme.expert.no_check", "-");
    emit(f, build(f, &k_crc, PME_T_ACK, PME_F_CHECK_MAC, NULL, 0, NULL, 0), "both_checks", "-",
         "pme.expert.both_checks", "-");

    n = build(f, &k_crc, PME_T_ACK, 0, NULL, 0, NULL, 0);
    emit(f, PME_ETH_HLEN + 40, "short_header", "-", "pme.expert.short", "-");

    emit(f, build(f, &k_crc, PME_T_HELLO, 0, m, 4, NULL, 0), "hello_short", "Good",
         "pme.expert.sub_short", "-");
    emit(f, data_frame(f, &k_crc, 100, 50, 0, m, 100), "fragment_outside", "Good",
         "pme.expert.bounds", "-");
    memset(m, 0, 8);
    emit(f, bundle_frame(f, &k_crc, m, 8, 0, 9), "bundle_overrun", "Good", "pme.expert.bounds",
         "-");

    struct pme_wire_rma r = {.op = PME_RMA_NAK, .aop = PME_RMA_PUT, .req_id = htonl(7),
                             .status = htonl(PME_RMA_E_RANGE)};
    emit(f, build(f, &k_crc, PME_T_RMA, 0, &r, sizeof(r), NULL, 0), "rma_nak", "Good",
         "pme.expert.rma_nak", "-");
    r.op = 99;
    emit(f, build(f, &k_crc, PME_T_RMA, 0, &r, sizeof(r), NULL, 0), "rma_op_99", "Good",
         "pme.expert.rma_op", "-");
    emit(f, build(f, &k_crc, PME_T_RMA, 0, &r, 20, NULL, 0), "rma_short", "Good",
         "pme.expert.sub_short", "-");
    emit(f, rma_bundle_frame(f, &k_crc, 40), "rma_bundle_overrun", "Good", "pme.expert.bounds",
         "-");

    n = build(f, &k_crc, PME_T_ACK, 0, NULL, 0, NULL, 0);
    hdr_of(f)->reserved = htons(1);
    struct pme_dev_frame df = {.iov = {{f, n}}, .iovcnt = 1};
    pme_wire_seal(&k_crc, &self_a, 99, &df);
    emit(f, n, "reserved_set", "Good", "pme.expert.reserved", "-");

    emit(f, nak(f, &k_crc, 1), "nak_crc_job", "-", "pme.expert.nak_unauth", "-");
    emit(f, nak(f, &k_mac, 1), "nak_mac_job", "-", "pme.expert.mac_unverified", "-");
    emit(f, nak(f, &k_crc, 0), "nak_version_1", "-", "pme.expert.nak_v1", "-");
    n = nak(f, &k_crc, 1);
    f[PME_ETH_HLEN + 13] ^= 0x40;
    emit(f, n, "nak_bad_crc", "-", "pme.expert.nak_bad,pme.expert.nak_unauth", "-");

    /* The netmod's header, malformed. */
    n = netmod_hdr(m, 70, 0, 0);
    emit(f, data_frame(f, &k_crc, (uint32_t)n, 0, (uint16_t)n, m, n), "netmod_handler_70",
         "Good", "pmempi.expert.handler", "handler=70,kind=0,port_tag=0");
    n = netmod_hdr(m, 0, 5, 0);
    emit(f, data_frame(f, &k_crc, (uint32_t)n, 0, (uint16_t)n, m, n), "netmod_kind_5", "Good",
         "pmempi.expert.kind", "handler=0,kind=5,port_tag=0");
    emit(f, data_frame(f, &k_crc, 4, 0, 4, m, 4), "netmod_short", "Good", "pmempi.expert.short",
         "-");
    n = netmod_hdr(m, 0, 0, 0);
    memset(m + n, 0, 16);
    emit(f, data_frame(f, &k_crc, (uint32_t)n + 16, 0, (uint16_t)n + 16, m, n + 16),
         "netmod_send_short", "Good", "pmempi.expert.am_short",
         "handler=0,kind=0,port_tag=0");
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: pme_frames FILE.pcap [ETHERTYPE]\n");
        return 2;
    }
    unsigned long et = argc == 3 ? strtoul(argv[2], NULL, 0) : PME_ETHERTYPE_DEFAULT;
    self_a.ethertype_be = self_b.ethertype_be = htons((uint16_t)et);
    char err[256];
    static const uint8_t secret[PME_WIRE_SECRET_BYTES] = "pme_frames test";
    if (pme_wire_keys_init(&k_crc, PME_AUTH_CRC, NULL, 0, 0x5e5e, err, sizeof(err)) ||
        pme_wire_keys_init(&k_none, PME_AUTH_NONE, NULL, 0, 0x5e5e, err, sizeof(err)) ||
        pme_wire_keys_init(&k_mac, PME_AUTH_MAC, secret, sizeof(secret), 0, err, sizeof(err))) {
        fprintf(stderr, "pme_frames: %s\n", err);
        return 1;
    }
    out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    /* pcap file header: microsecond timestamps, Ethernet (link type 1). */
    put32(0xa1b2c3d4);
    uint16_t ver[2] = {2, 4};
    fwrite(ver, 2, 2, out);
    put32(0);
    put32(0);
    put32(SNAPLEN);
    put32(1);
    good_frames();
    bad_frames();
    if (fclose(out)) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
