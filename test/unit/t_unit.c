// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_unit.c - unit tests of pme_core's building blocks: the wire layout, sealing and
 * checking frames (MAC and CRC), the replay window, CRC32C, sequence arithmetic across
 * wrap-around, credit arithmetic, the handle table, iovec cursors, tunables from the
 * environment (the job secret file among them) and address strings.
 * pme-test: tier=default cpu=70 time=1
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "pme.h"
#include "pme_internal.h"
#include "pme_test.h"
#include "pme_wire.h"
#include "wire.h"
#include "seq.h"
#include "slots.h"

static void test_wire_layout(void)
{
    CHECK(sizeof(struct pme_wire_hdr) == 72, "header is %zu bytes", sizeof(struct pme_wire_hdr));
    CHECK(offsetof(struct pme_wire_hdr, dst_ep) == 0, "dst_ep moved");
    CHECK(offsetof(struct pme_wire_hdr, version) == 2, "version moved");
    CHECK(offsetof(struct pme_wire_hdr, type) == 3, "type moved");
    CHECK(offsetof(struct pme_wire_hdr, src_ep) == 4, "src_ep moved");
    /* what forwarders and the kernel driver rely on */
    CHECK(offsetof(struct pme_wire_hdr, dst_node) + PME_ETH_HLEN == PME_WIRE_OFF_DST_NODE,
          "dst_node");
    CHECK(offsetof(struct pme_wire_hdr, src_node) + PME_ETH_HLEN == PME_WIRE_OFF_SRC_NODE,
          "src_node");
    CHECK(offsetof(struct pme_wire_hdr, hops_left) + PME_ETH_HLEN == PME_WIRE_OFF_HOPS_LEFT,
          "hops_left");
    CHECK(offsetof(struct pme_wire_hdr, job_id) + PME_ETH_HLEN == PME_WIRE_OFF_JOB_ID, "job_id");
    CHECK(offsetof(struct pme_wire_hdr, incarnation) + PME_ETH_HLEN ==
              PME_WIRE_OFF_INCARNATION, "incarnation");
    CHECK(offsetof(struct pme_wire_hdr, nonce) % 8 == 0 &&
              offsetof(struct pme_wire_hdr, check) + 16 == sizeof(struct pme_wire_hdr),
          "nonce aligned, check last");
    CHECK(sizeof(struct pme_wire_frag) == 12, "frag %zu", sizeof(struct pme_wire_frag));
    CHECK(sizeof(struct pme_wire_rts) == 16, "rts %zu", sizeof(struct pme_wire_rts));
    CHECK(sizeof(struct pme_wire_cts) == 16, "cts %zu", sizeof(struct pme_wire_cts));
    CHECK(sizeof(struct pme_wire_rdata) == 16, "rdata %zu", sizeof(struct pme_wire_rdata));
    CHECK(sizeof(struct pme_wire_hello) == 32, "hello %zu", sizeof(struct pme_wire_hello));
    CHECK(sizeof(struct pme_wire_ping) == 16, "ping %zu", sizeof(struct pme_wire_ping));
    CHECK(sizeof(struct pme_wire_rma) == 32, "rma %zu", sizeof(struct pme_wire_rma));
    CHECK(sizeof(struct pme_wire_bundle) == 8 && sizeof(struct pme_wire_rec) == 8,
          "bundle %zu, record %zu", sizeof(struct pme_wire_bundle), sizeof(struct pme_wire_rec));
    /* A bundle's records start 8 bytes past a multiple of 16, so that their messages
     * start on one; an empty record takes 16 bytes. */
    for (uint32_t end = 16; end < 200; end++) {
        uint32_t next = pme_wire_rec_after(end);
        CHECK(next % 16 == 8 && next >= end + 8 && next < end + 24, "after %u: %u", end, next);
    }
    CHECK(pme_wire_rec_after(16) == 24 && pme_wire_rec_after(17) == 40, "record placement");
    CHECK(sizeof(struct pme_wire_version_nak) == 16, "nak %zu",
          sizeof(struct pme_wire_version_nak));
    CHECK(offsetof(struct pme_wire_version_nak, src_ep) == 4, "nak src_ep moved");
    CHECK(PME_T_VERSION_NAK == 255, "the NAK's number is frozen");
    for (unsigned t = 0; t < 256; t++) {
        int seq = t >= PME_T_DATA && t <= PME_T_RMA;
        CHECK(pme_wire_type_is_sequenced(t) == seq, "type %u sequenced?", t);
    }
    /* The codec is big-endian on the wire whatever the host. */
    struct pme_wire_hdr h;
    memset(&h, 0, sizeof(h));
    h.dst_ep = htons(0x1234);
    h.seq = htonl(0xA1B2C3D4u);
    const uint8_t *b = (const uint8_t *)&h;
    CHECK(b[0] == 0x12 && b[1] == 0x34, "dst_ep not big-endian");
    CHECK(b[24] == 0xA1 && b[27] == 0xD4, "seq not big-endian");
    /* Pool cost: rounded to the unit plus one unit of bookkeeping. */
    CHECK(pme_wire_pool_cost(0) == 64, "cost(0)=%u", pme_wire_pool_cost(0));
    CHECK(pme_wire_pool_cost(1) == 128, "cost(1)=%u", pme_wire_pool_cost(1));
    CHECK(pme_wire_pool_cost(64) == 128, "cost(64)=%u", pme_wire_pool_cost(64));
    CHECK(pme_wire_pool_cost(65) == 192, "cost(65)=%u", pme_wire_pool_cost(65));
}

/* A frame from `from` to `to` with a 100-byte payload in two pieces, sealed. */
static size_t sealed_frame(const struct pme_wire_keys *k, const struct pme_wire_self *from,
                           const struct pme_wire_self *to, uint64_t nonce, uint8_t *out)
{
    static uint8_t payload[100];
    for (int i = 0; i < 100; i++)
        payload[i] = (uint8_t)i;
    uint8_t hdrs[PME_HDRS_BYTES];
    struct pme_wire_hdr *wh = pme_wire_start(hdrs, from, to->mac, to->node, to->ep, PME_T_DATA,
                                             100);
    wh->job_id = htonl(k->job_id);
    wh->seq = htonl(77);
    struct pme_dev_frame f = {.iov = {{hdrs, PME_ETH_HLEN + sizeof(*wh) + 30},
                                      {payload + 30, 70}},
                              .iovcnt = 2};
    memcpy(wh + 1, payload, 30);
    pme_wire_seal(k, from, nonce, &f);
    memcpy(out, hdrs, f.iov[0].iov_len);
    memcpy(out + f.iov[0].iov_len, payload + 30, 70);
    return f.iov[0].iov_len + 70;
}

static void test_wire_check(void)
{
    struct pme_wire_self a = {{2, 0, 0, 0, 0, 1}, 7, 0x0a000001, 0x1111, htons(0x88B5), 16};
    struct pme_wire_self b = {{2, 0, 0, 0, 0, 2}, 9, 0x0a000002, 0x2222, htons(0x88B5), 16};
    uint8_t secret[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint8_t other[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17};
    struct pme_wire_keys mac, mac2, crc;
    char err[200];
    CHECK(pme_wire_keys_init(&mac, PME_AUTH_MAC, secret, 16, 0, err, sizeof(err)) == 0, "%s", err);
    CHECK(pme_wire_keys_init(&mac2, PME_AUTH_MAC, other, 16, 0, err, sizeof(err)) == 0, "%s", err);
    CHECK(pme_wire_keys_init(&crc, PME_AUTH_CRC, NULL, 0, 42, err, sizeof(err)) == 0, "%s", err);
    CHECK(mac.job_id != mac2.job_id && mac.job_id != 0, "job ids of two secrets");
    CHECK(pme_wire_keys_init(&crc, PME_AUTH_MAC, NULL, 0, 42, err, sizeof(err)) != 0 &&
              strstr(err, "PME_JOB_SECRET_FILE"), "MAC without a secret: %s", err);
    CHECK(pme_wire_keys_init(&crc, PME_AUTH_CRC, NULL, 0, 42, err, sizeof(err)) == 0, "%s", err);
    uint8_t f[512];
    size_t n = sealed_frame(&mac, &a, &b, 5, f);
    CHECK(pme_wire_check(&mac, &b, f, n, 9000) == PME_WIRE_OK, "a good frame refused");
    /* forwarders may change hops_left: the MAC does not cover it */
    f[PME_WIRE_OFF_HOPS_LEFT] = 3;
    CHECK(pme_wire_check(&mac, &b, f, n, 9000) == PME_WIRE_OK, "hops_left is covered");
    /* Every other bit counts, but the Ethernet source: each hop rewrites it, and the
     * source that is authenticated is the PME header's (src_node, src_ep). */
    for (size_t i = 0; i < n; i++) {
        if (i == PME_WIRE_OFF_HOPS_LEFT || (i >= 6 && i < 12))
            continue;
        f[i] ^= 0x04;
        enum pme_wire_verdict v = pme_wire_check(&mac, &b, f, n, 9000);
        CHECK(v != PME_WIRE_OK, "a flipped bit at byte %zu passed", i);
        f[i] ^= 0x04;
    }
    CHECK(pme_wire_check(&mac2, &b, f, n, 9000) == PME_WIRE_FOREIGN_JOB, "another job's");
    CHECK(pme_wire_check(&crc, &b, f, n, 9000) != PME_WIRE_OK, "MAC frame taken without key");
    CHECK(pme_wire_check(&mac, &a, f, n, 9000) == PME_WIRE_NOT_MINE, "not addressed to a");
    /* a forger who knows everything but the key: the job id, the right fields */
    size_t m = sealed_frame(&mac2, &a, &b, 5, f);
    memcpy(f + PME_WIRE_OFF_JOB_ID, &(uint32_t){htonl(mac.job_id)}, 4);
    CHECK(pme_wire_check(&mac, &b, f, m, 9000) == PME_WIRE_BAD_MAC, "forged frame accepted");
    /* CRC frames: corruption caught, MAC-less frames refused where MACs are required */
    n = sealed_frame(&crc, &a, &b, 6, f);
    CHECK(pme_wire_check(&crc, &b, f, n, 9000) == PME_WIRE_OK, "good CRC frame");
    CHECK(pme_wire_check(&mac, &b, f, n, 9000) != PME_WIRE_OK, "CRC frame taken with MAC on");
    f[n - 1] ^= 1;
    CHECK(pme_wire_check(&crc, &b, f, n, 9000) == PME_WIRE_BAD_CRC, "corrupt CRC frame");
    CHECK(pme_wire_check(&crc, &b, f, n - 1, 9000) == PME_WIRE_SHORT, "short frame");
    CHECK(pme_wire_check(&crc, &b, f, n, 100) == PME_WIRE_BAD_HEADER, "over the MTU");
    /* replay window */
    struct pme_replay r = {0};
    CHECK(pme_replay_fresh(&r, 10), "first");
    pme_replay_mark(&r, 10);
    CHECK(!pme_replay_fresh(&r, 10), "repeat");
    pme_replay_mark(&r, 12);
    CHECK(pme_replay_fresh(&r, 11) && !pme_replay_fresh(&r, 12), "gap");
    pme_replay_mark(&r, 11);
    CHECK(!pme_replay_fresh(&r, 11), "filled gap");
    pme_replay_mark(&r, 200);
    CHECK(!pme_replay_fresh(&r, 12) && !pme_replay_fresh(&r, 136) && pme_replay_fresh(&r, 137),
          "window of 64");
    pme_wire_keys_wipe(&mac);
    pme_wire_keys_wipe(&mac2);
}

/* Zero copy: a rendezvous frame whose payload the device placed elsewhere is checked
 * over its headers and the placed bytes, as if they were one frame. */
static void test_wire_check_placed(void)
{
    struct pme_wire_self a = {{2, 0, 0, 0, 0, 1}, 7, 0x0a000001, 0x1111, htons(0x88B5), 16};
    struct pme_wire_self b = {{2, 0, 0, 0, 0, 2}, 9, 0x0a000002, 0x2222, htons(0x88B5), 16};
    uint8_t secret[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
    struct pme_wire_keys keys[2];
    char err[200];
    CHECK(pme_wire_keys_init(&keys[0], PME_AUTH_MAC, secret, 16, 0, err, sizeof(err)) == 0,
          "%s", err);
    CHECK(pme_wire_keys_init(&keys[1], PME_AUTH_CRC, NULL, 0, 42, err, sizeof(err)) == 0, "%s",
          err);
    for (int k = 0; k < 2; k++) {
        uint8_t hdrs[PME_HDRS_BYTES], payload[1000], whole[PME_HDRS_BYTES + 1000];
        for (int i = 0; i < 1000; i++)
            payload[i] = (uint8_t)(i * 7);
        size_t sub = sizeof(struct pme_wire_rdata);
        for (int type = PME_T_RDATA; type >= PME_T_DATA; type -= PME_T_RDATA - PME_T_DATA) {
            struct pme_wire_hdr *wh =
                pme_wire_start(hdrs, &a, b.mac, b.node, b.ep, type, sub + sizeof(payload));
            wh->job_id = htonl(keys[k].job_id);
            memset(wh + 1, 0x42, sub);
            size_t hl = PME_ETH_HLEN + sizeof(*wh) + sub;
            struct pme_dev_frame f = {.iov = {{hdrs, hl}, {payload, sizeof(payload)}}, .iovcnt = 2};
            pme_wire_seal(&keys[k], &a, 9, &f);
            struct pme_dev_placed pl = {payload, sizeof(payload)};
            enum pme_wire_verdict v = pme_wire_check_placed(&keys[k], &b, hdrs, hl, &pl, 9000);
            if (type == PME_T_DATA) {
                CHECK(v == PME_WIRE_BAD_HEADER, "%d: a placed payload of DATA: verdict %d", k, v);
                continue;
            }
            CHECK(v == PME_WIRE_OK, "%d: headers and placed payload refused (%d)", k, v);
            memcpy(whole, hdrs, hl);
            memcpy(whole + hl, payload, sizeof(payload));
            CHECK(pme_wire_check(&keys[k], &b, whole, hl + sizeof(payload), 9000) == PME_WIRE_OK,
                  "%d: the same frame whole refused", k);
            CHECK(pme_wire_check_placed(&keys[k], &b, whole, hl + sizeof(payload), NULL, 9000) ==
                      PME_WIRE_OK,
                  "%d: nothing placed is the plain check", k);
            payload[500] ^= 1;
            v = pme_wire_check_placed(&keys[k], &b, hdrs, hl, &pl, 9000);
            CHECK(v == (k ? PME_WIRE_BAD_CRC : PME_WIRE_BAD_MAC),
                  "%d: a changed placed byte passed (%d)", k, v);
            payload[500] ^= 1;
            pl.len--;
            CHECK(pme_wire_check_placed(&keys[k], &b, hdrs, hl, &pl, 9000) == PME_WIRE_SHORT,
                  "%d: a placed payload short of the header's length", k);
            pl.len += 2;
            CHECK(pme_wire_check_placed(&keys[k], &b, hdrs, hl, &pl, 9000) ==
                      PME_WIRE_BAD_HEADER,
                  "%d: a placed payload longer than the header says", k);
        }
    }
}

static void test_crc32c(void)
{
    /* The standard check value of CRC-32C. */
    CHECK(pme_crc32c(0, "123456789", 9) == 0xE3069283u, "check value %08x",
          pme_crc32c(0, "123456789", 9));
    CHECK(pme_crc32c_sw(0, "123456789", 9) == 0xE3069283u, "sw check value");
    CHECK(pme_crc32c(0, "", 0) == 0, "empty");
    size_t max = 3 * 1024 * 4 + 77;
    uint8_t *buf = malloc(max + 8);
    pattern_fill(buf, max + 8, 99);
    for (size_t len = 0; len <= max; len += (len < 64 ? 1 : 37)) {
        for (size_t off = 0; off < 8; off += 3) {
            uint32_t a = pme_crc32c(0, buf + off, len);
            uint32_t s = pme_crc32c_sw(0, buf + off, len);
            CHECK(a == s, "len %zu off %zu: %08x vs %08x", len, off, a, s);
            /* Continuing across a split gives the same CRC. */
            size_t cut = len / 3;
            uint32_t c = pme_crc32c(pme_crc32c(0, buf + off, cut), buf + off + cut, len - cut);
            CHECK(c == a, "split at %zu of %zu", cut, len);
        }
    }
    /* Every lane length of the hardware path, whole and with a remainder. */
    static const size_t lens[] = {192, 193, 768, 3072, 3080, 9000, 12288, 12296, 65535};
    uint8_t *big = malloc(65536 + 8);
    pattern_fill(big, 65536 + 8, 7);
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
        CHECK(pme_crc32c(0, big + 1, lens[i]) == pme_crc32c_sw(0, big + 1, lens[i]),
              "len %zu", lens[i]);
    free(big);
    /* One flipped bit changes it. */
    uint32_t good = pme_crc32c(0, buf, 9000);
    buf[4321] ^= 8;
    CHECK(pme_crc32c(0, buf, 9000) != good, "bit flip not seen");
    free(buf);
    printf("crc32c: %s\n", pme_crc32c_impl());
}

static void test_seq(void)
{
    CHECK(pme_seq_before(1, 2) && !pme_seq_before(2, 1), "simple order");
    CHECK(pme_seq_before(0xFFFFFFF0u, 5), "before across wrap");
    CHECK(pme_seq_after(5, 0xFFFFFFF0u), "after across wrap");
    CHECK(!pme_seq_before(7, 7) && !pme_seq_after(7, 7), "equal");
    CHECK(pme_seq_in(0xFFFFFFFFu, 0xFFFFFFFEu, 3), "in range across wrap");
    CHECK(pme_seq_in(2, 0xFFFFFFFEu, 3), "in range after wrap");
    CHECK(!pme_seq_in(3, 0xFFFFFFFEu, 3), "end is excluded");
    CHECK(!pme_seq_in(0xFFFFFFFDu, 0xFFFFFFFEu, 3), "before start");
    CHECK(pme_credit_room(100, 40) == 60, "room");
    CHECK(pme_credit_room(5, 0xFFFFFFF0u) == 21, "room across wrap");
    CHECK(pme_credit_room(0xFFFFFFF0u, 5) == -21, "overdrawn");
}

static void test_slots(void)
{
    struct pme_slots t = {0};
    int a = 1, b = 2, c = 3;
    uint32_t ha = pme_slots_put(&t, &a), hb = pme_slots_put(&t, &b);
    CHECK(ha && hb && ha != hb, "handles");
    CHECK(pme_slots_get(&t, ha) == &a && pme_slots_get(&t, hb) == &b, "lookup");
    CHECK(pme_slots_get(&t, 0) == NULL, "handle 0 names nothing");
    pme_slots_del(&t, ha);
    CHECK(pme_slots_get(&t, ha) == NULL, "deleted");
    uint32_t hc = pme_slots_put(&t, &c);
    CHECK((hc & (PME_SLOT_MAX - 1)) == (ha & (PME_SLOT_MAX - 1)), "slot reused");
    CHECK(hc != ha && pme_slots_get(&t, ha) == NULL, "stale handle stays dead on reuse");
    CHECK(pme_slots_get(&t, hc) == &c, "new handle");
    for (int i = 0; i < 10000; i++)
        CHECK(pme_slots_put(&t, &a), "put %d", i);
    CHECK(t.used == 10002, "used %u", t.used);
    pme_slots_free(&t);
}

static void test_iov_cursor(void)
{
    uint8_t a[5], b[0 + 1], c[7], out[12];
    for (int i = 0; i < 5; i++) a[i] = (uint8_t)i;
    for (int i = 0; i < 7; i++) c[i] = (uint8_t)(5 + i);
    struct iovec iov[3] = {{a, 5}, {b, 0}, {c, 7}};
    struct pme_iov_cursor cur;
    struct iovec sl[4];
    CHECK(pme_iov_total(iov, 3) == 12, "total");
    pme_iov_cursor_init(&cur, iov, 3);
    pme_iov_cursor_seek(&cur, 3);
    int n = pme_iov_cursor_slice(&cur, 6, sl, 4);
    CHECK(n == 2 && sl[0].iov_len == 2 && sl[1].iov_len == 4, "slice spans the empty entry");
    CHECK(((uint8_t *)sl[0].iov_base)[0] == 3 && ((uint8_t *)sl[1].iov_base)[0] == 5, "slice data");
    CHECK(cur.pos == 9, "cursor advanced to %llu", (unsigned long long)cur.pos);
    pme_iov_cursor_seek(&cur, 1); /* backwards: from the front */
    struct pme_iov_cursor before = cur;
    CHECK(pme_iov_cursor_slice(&cur, 10, sl, 1) == -1, "too many entries");
    CHECK(cur.pos == before.pos && cur.idx == before.idx, "cursor unchanged on failure");
    /* scatter into an iovec */
    memset(a, 0, 5);
    memset(c, 0, 7);
    for (int i = 0; i < 12; i++) out[i] = (uint8_t)(100 + i);
    pme_iov_cursor_init(&cur, iov, 3);
    CHECK(pme_iov_cursor_copy_in(&cur, out, 4) == 4, "copy 4");
    CHECK(pme_iov_cursor_copy_in(&cur, out + 4, 8) == 8, "copy 8");
    CHECK(pme_iov_cursor_copy_in(&cur, out, 1) == 0, "copy past the end");
    CHECK(a[4] == 104 && c[0] == 105 && c[6] == 111, "scattered");
}

static void expect_env_error(const char *var, const char *val)
{
    struct pme_config cfg;
    char err[256] = "";
    pme_config_init(&cfg);
    setenv(var, val, 1);
    int rc = pme_config_from_env(&cfg, err, sizeof(err));
    unsetenv(var);
    CHECK(rc == PME_ERR_INVAL, "%s=%s accepted", var, val);
    CHECK(strstr(err, var) != NULL, "error does not name %s: %s", var, err);
}

static void test_config(void)
{
    struct pme_config cfg;
    char err[256];
    pme_config_init(&cfg);
    CHECK(cfg.ethertype == 0x88B5 && cfg.auth == PME_AUTH_AUTO && !strcmp(cfg.device, "auto") &&
              cfg.sleep_slack_us == 4000 && cfg.hop_limit == 16 && !cfg.helper,
          "defaults");
    setenv("PME_EAGER_MAX", "16k", 1);
    setenv("PME_RX_POOL", "8M", 1);
    setenv("PME_ETHERTYPE", "0x88b6", 1);
    setenv("PME_WAIT", "block", 1);
    setenv("PME_CHECKSUM", "off", 1);
    setenv("PME_DEVICE", "pcap", 1);
    setenv("PME_SLEEP_SLACK_US", "0", 1);
    CHECK_OK(pme_config_from_env(&cfg, err, sizeof(err)));
    CHECK(!strcmp(cfg.device, "pcap") && cfg.sleep_slack_us == 0, "device and slack parsed");
    CHECK(cfg.eager_max == 16384 && cfg.rx_pool_bytes == 8u << 20, "sizes parsed");
    CHECK(cfg.ethertype == 0x88B6 && cfg.wait_mode == PME_WAIT_BLOCK && cfg.auth == PME_AUTH_NONE,
          "values parsed");
    unsetenv("PME_EAGER_MAX");
    unsetenv("PME_RX_POOL");
    unsetenv("PME_ETHERTYPE");
    unsetenv("PME_WAIT");
    unsetenv("PME_CHECKSUM");
    unsetenv("PME_DEVICE");
    unsetenv("PME_SLEEP_SLACK_US");
    expect_env_error("PME_SLEEP_SLACK_US", "2000000");
    expect_env_error("PME_EAGER_MAX", "lots");
    expect_env_error("PME_WINDOW", "0");
    expect_env_error("PME_ETHERTYPE", "0x0100");
    expect_env_error("PME_WAIT", "sometimes");
    expect_env_error("PME_DEVICE", "myrinet");
    setenv("PME_DEVICE", "auto", 1);
    CHECK_OK(pme_config_from_env(&cfg, err, sizeof(err)));
    unsetenv("PME_DEVICE");
    CHECK(!strcmp(cfg.device, "auto"), "PME_DEVICE=auto is taken");
    expect_env_error("PME_EP_ID", "70000");
    expect_env_error("PME_RX_POOL", "-5");
    expect_env_error("PME_AUTH", "sometimes");
    expect_env_error("PME_HOP_LIMIT", "0");
    expect_env_error("PME_NODE_ID", "0xffffffff");
    expect_env_error("PME_HELPER", "maybe");
    /* the job secret: 32 hex digits in a file only its owner may read */
    char path[] = "/tmp/pme-secret.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "00112233445566778899aabbccddeeff\n", 33) == 33, "secret file");
    close(fd);
    setenv("PME_JOB_SECRET_FILE", path, 1);
    pme_config_init(&cfg);
    CHECK_OK(pme_config_from_env(&cfg, err, sizeof(err)));
    CHECK(cfg.secret_len == 16 && cfg.secret[0] == 0x00 && cfg.secret[1] == 0x11 &&
              cfg.secret[15] == 0xff, "secret parsed");
    CHECK(chmod(path, 0644) == 0, "chmod");
    CHECK(pme_config_from_env(&cfg, err, sizeof(err)) == PME_ERR_INVAL &&
              strstr(err, "chmod 600"), "a secret others may read was taken: %s", err);
    if (geteuid() == 0) {
        /* Another user could read or replace it: refused, whatever its mode. */
        CHECK(chmod(path, 0600) == 0 && chown(path, 65534, 65534) == 0, "chown");
        CHECK(pme_config_from_env(&cfg, err, sizeof(err)) == PME_ERR_INVAL &&
                  strstr(err, "belongs to another user"),
              "a secret of another owner was taken: %s", err);
        CHECK(chown(path, 0, 0) == 0, "chown back");
    }
    CHECK(chmod(path, 0600) == 0 && truncate(path, 10) == 0, "truncate");
    CHECK(pme_config_from_env(&cfg, err, sizeof(err)) == PME_ERR_INVAL &&
              strstr(err, "32 hexadecimal"), "a short secret was taken: %s", err);
    unlink(path);
    /* A FIFO would block the open until someone writes it: refused at once. */
    CHECK(mkfifo(path, 0600) == 0, "mkfifo");
    double t0 = now_s();
    CHECK(pme_config_from_env(&cfg, err, sizeof(err)) == PME_ERR_INVAL &&
              strstr(err, "not a regular file") && now_s() - t0 < 1,
          "a FIFO as the secret file: %s", err);
    unsetenv("PME_JOB_SECRET_FILE");
    unlink(path);
}

static void test_addresses(void)
{
    struct pme_loop_wire *w;
    struct pme_config cfg;
    pme_ep_t *ep;
    char err[256], addr[PME_ADDR_MAX];
    pme_peer_t p1, p2, p3;
    CHECK_OK(pme_loop_wire_create(NULL, &w));
    pme_config_init(&cfg);
    cfg.device = "loop";
    cfg.loop_wire = w;
    cfg.counters_shm = 0;
    CHECK(pme_ep_open(&cfg, &ep, err, sizeof(err)) == 0, "open: %s", err);
    int n = pme_ep_addr(ep, addr, sizeof(addr));
    CHECK(n > 0 && !strncmp(addr, "pme3:", 5) && strstr(addr, "@02:00:00:"), "address %s", addr);
    CHECK(pme_ep_addr(ep, addr, 5) == PME_ERR_INVAL, "short buffer");
    CHECK_OK(pme_ep_add_peer(ep, "pme3:0a000001/7@0a:0b:0c:0d:0e:0f", &p1));
    CHECK_OK(pme_ep_add_peer(ep, "pme3:0a000001/8@0a:0b:0c:0d:0e:0f", &p2));
    CHECK_OK(pme_ep_add_peer(ep, "pme3:0a000001/7@0a:0b:0c:0d:0e:0f", &p3));
    CHECK(p1 != p2 && p1 == p3, "same address, same peer");
    CHECK_OK(pme_ep_add_peer(ep, "pme3:0a000002/7@0a:0b:0c:0d:0e:0f", &p3));
    CHECK(p3 != p1, "the same endpoint id on another node is another peer");
    CHECK(pme_ep_add_peer(ep, "pme3:0a000001/7@0a:0b:0c:0d:0e", &p3) == PME_ERR_ADDR, "short mac");
    CHECK(pme_ep_add_peer(ep, "pme3:0a000001/70000@0a:0b:0c:0d:0e:0f", &p3) == PME_ERR_ADDR,
          "big id");
    CHECK(pme_ep_add_peer(ep, "pme3:0a000001/7@0a:0b:0c:0d:0e:0fx", &p3) == PME_ERR_ADDR,
          "trailing");
    CHECK(pme_ep_add_peer(ep, "pme3:a000001/7@0a:0b:0c:0d:0e:0f", &p3) == PME_ERR_ADDR,
          "short node");
    CHECK(pme_ep_add_peer(ep, "pme3:ffffffff/7@0a:0b:0c:0d:0e:0f", &p3) == PME_ERR_ADDR,
          "the reserved node");
    CHECK(pme_ep_add_peer(ep, "tcp://1.2.3.4", &p3) == PME_ERR_ADDR, "foreign");
    CHECK(pme_ep_add_peer(ep, "pme1:0a:0b:0c:0d:0e:0f/7", &p3) == PME_ERR_VERSION, "version");
    CHECK(strstr(pme_ep_last_error(ep), "version 1") && strstr(pme_ep_last_error(ep), "same PME"),
          "version message: %s", pme_ep_last_error(ep));
    /* Version 2 had the handshake without challenges (pme_wire.h): refused as clearly. */
    CHECK(pme_ep_add_peer(ep, "pme2:0a000001/7@0a:0b:0c:0d:0e:0f", &p3) == PME_ERR_VERSION &&
              strstr(pme_ep_last_error(ep), "version 2"),
          "a version 2 address: %s", pme_ep_last_error(ep));
    pme_ep_close(ep);
    pme_loop_wire_destroy(w);
}

int main(void)
{
    test_wire_layout();
    test_wire_check();
    test_wire_check_placed();
    test_crc32c();
    test_seq();
    test_slots();
    test_iov_cursor();
    test_config();
    test_addresses();
    printf("unit tests passed\n");
    return 0;
}
