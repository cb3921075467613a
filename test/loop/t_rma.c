// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_rma.c - one-sided communication on the loop device:
 *   put_get     puts and gets of 1 byte to 300 KB (many frames) land and come back intact;
 *   accumulate  sums from two origins interleaved are all counted (atomic), the other
 *               operations and types compute what MPI says, fetches return the values
 *               before, compare-and-swap swaps only when equal; the same on our own
 *               window (PME_PEER_SELF);
 *   bounds      requests outside the window or naming none fail at the origin
 *               (PME_ERR_RANGE, PME_ERR_NOWIN) and change no byte, inside or outside the
 *               window, even a put whose first frames would fit;
 *   hostile     forged frames (offsets past the end, wrapping offsets, the rest of a
 *               refused operation, bad operations) are refused, counted and answered NAK;
 *   locks       exclusive and shared locks are granted in order, among peers and our own
 *               caller; an operation that takes the lock waits in line with its payload;
 *               a lock is held until the answers to its gets are acknowledged;
 *   lossy       drops, duplicates and reordering on the wire: every accumulate counted
 *               exactly once, every byte right;
 *   helper      the target never calls PME while origins lock, put, get and accumulate:
 *               its liveness helper acts on every request; pme_rma_exclusive keeps it out;
 *   notsup      a peer that did not announce one-sided communication fails the requests
 *               queued before its HELLO_ACK and the later ones, with PME_ERR_NOTSUP;
 *   peer_dies   the locks of a peer that died are released to the next in line;
 *   crossing    two processes each get thousands of words from the other at once.
 * pme-test: tier=default cpu=100 time=1
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fakepeer.h"
#include "harness.h"
#include "pme_test.h"
#include "pme_wire.h"

#define WIN_BYTES (512 * 1024)
#define GUARD 4096

/* ---- helpers ---- */

struct trio {
    struct pme_loop_wire *wire;
    pme_ep_t *ep[3];            /* 0 is the target, 1 and 2 origins */
    pme_peer_t to[3][3];        /* to[i][j]: ep i's handle of ep j */
};

static void trio_open(struct trio *t, const struct pme_loop_faults *faults,
                      void (*tweak_target)(struct pme_config *cfg))
{
    char err[256], addr[PME_ADDR_MAX];
    struct pme_config cfg;
    memset(t, 0, sizeof(*t));
    CHECK_OK(pme_loop_wire_create(faults, &t->wire));
    for (int i = 0; i < 3; i++) {
        lp_config(&cfg, t->wire);
        if (i == 0 && tweak_target)
            tweak_target(&cfg);
        CHECK(pme_ep_open(&cfg, &t->ep[i], err, sizeof(err)) == 0, "open %d: %s", i, err);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (i == j)
                continue;
            CHECK_OK(pme_ep_addr(t->ep[j], addr, sizeof(addr)));
            CHECK_OK(pme_ep_add_peer(t->ep[i], addr, &t->to[i][j]));
        }
}

static void trio_close(struct trio *t)
{
    for (int i = 0; i < 3; i++)
        pme_ep_close(t->ep[i]);
    pme_loop_wire_destroy(t->wire);
}

/* Progress the endpoints of mask (bit i: ep i) once. */
static void spin(struct trio *t, unsigned mask)
{
    for (int i = 0; i < 3; i++)
        if (mask & (1u << i))
            pme_progress(t->ep[i]);
}

/* Progress mask until ep i has nothing pending toward j (or its own windows: j < 0). */
static void settle(struct trio *t, unsigned mask, int i, int j, double timeout_s)
{
    pme_peer_t peer = j < 0 ? PME_PEER_SELF : t->to[i][j];
    double end = now_s() + timeout_s;
    while (pme_rma_pending(t->ep[i], peer)) {
        CHECK(now_s() < end, "ep %d still has %u operations pending toward %d", i,
              pme_rma_pending(t->ep[i], peer), j);
        spin(t, mask);
    }
}

/* Spin mask for a while and check that ep i still has n pending toward j. */
static void still_pending(struct trio *t, unsigned mask, int i, int j, uint32_t n)
{
    pme_peer_t peer = j < 0 ? PME_PEER_SELF : t->to[i][j];
    for (int k = 0; k < 500; k++)
        spin(t, mask);
    CHECK(pme_rma_pending(t->ep[i], peer) == n, "ep %d has %u pending toward %d, not %u", i,
          pme_rma_pending(t->ep[i], peer), j, n);
}

static uint64_t counter(pme_ep_t *ep, size_t offset)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    return *(uint64_t *)((char *)&c + offset);
}
#define COUNTER(ep, name) counter(ep, offsetof(struct pme_counters, name))

/* Window memory with guard bytes on both sides, to see writes outside it. */
static uint8_t mem[GUARD + WIN_BYTES + GUARD];
#define WIN (mem + GUARD)

static void guards_set(void)
{
    memset(mem, 0xee, GUARD);
    memset(WIN + WIN_BYTES, 0xee, GUARD);
}

static void guards_check(void)
{
    for (size_t i = 0; i < GUARD; i++)
        CHECK(mem[i] == 0xee && WIN[WIN_BYTES + i] == 0xee, "a guard byte changed at %zu", i);
}

/* The trio, with ep 0 exposing the zeroed, guarded window; its key. */
static uint32_t trio_with_window(struct trio *t, const struct pme_loop_faults *faults,
                                 void (*tweak_target)(struct pme_config *cfg))
{
    uint32_t key;
    trio_open(t, faults, tweak_target);
    guards_set();
    memset(WIN, 0, WIN_BYTES);
    CHECK_OK(pme_rma_expose(t->ep[0], WIN, WIN_BYTES, &key));
    return key;
}

/* ---- scenarios ---- */

static void test_put_get(void)
{
    struct trio t;
    uint32_t key = trio_with_window(&t, NULL, NULL);
    static const size_t sizes[] = {1, 8, 63, 1000, 8192, 9000, 100000, 300000};
    static uint8_t src[300000], back[300000];
    uint64_t off = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        off = (off + 4099) % (WIN_BYTES - n);
        pattern_fill(src, n, (uint32_t)k);
        CHECK_OK(pme_rma_put(t.ep[1], t.to[1][0], key, off, src, n, 0));
        settle(&t, 3, 1, 0, 10);
        CHECK(pattern_check(WIN + off, n, (uint32_t)k) < 0, "put of %zu bytes at %llu wrong at %ld",
              n, (unsigned long long)off, pattern_check(WIN + off, n, (uint32_t)k));
        memset(back, 0, n);
        CHECK_OK(pme_rma_get(t.ep[1], t.to[1][0], key, off, back, n, 0));
        settle(&t, 3, 1, 0, 10);
        CHECK(pattern_check(back, n, (uint32_t)k) < 0, "get of %zu bytes wrong", n);
        CHECK(pme_rma_error(t.ep[1], t.to[1][0]) == PME_OK, "an error after %zu bytes", n);
    }
    /* Many small puts in flight at once, then one get of them all. */
    static uint32_t words[500]; /* each put reads its word until it is complete */
    for (int i = 0; i < 500; i++) {
        words[i] = 0xC0DE0000u + (uint32_t)i;
        CHECK_OK(pme_rma_put(t.ep[2], t.to[2][0], key, 4 * (uint64_t)i, &words[i], 4, 0));
    }
    settle(&t, 5, 2, 0, 10);
    CHECK_OK(pme_rma_get(t.ep[2], t.to[2][0], key, 0, back, 2000, 0));
    settle(&t, 5, 2, 0, 10);
    for (int i = 0; i < 500; i++) {
        uint32_t v;
        memcpy(&v, back + 4 * i, 4);
        CHECK(v == 0xC0DE0000u + (uint32_t)i, "word %d is %08x", i, v);
    }
    CHECK(COUNTER(t.ep[0], rma_in) >= 2 * 8 + 501, "target acted on %llu requests",
          (unsigned long long)COUNTER(t.ep[0], rma_in));
    guards_check();
    /* Our answers to the gets read the window until acknowledged. */
    int rc;
    double end = now_s() + 5;
    while ((rc = pme_rma_withdraw(t.ep[0], key)) == PME_EAGAIN && now_s() < end)
        spin(&t, 7);
    CHECK(rc == PME_OK, "withdraw: %s", pme_strerror(rc));
    trio_close(&t);
    printf("put and get, 1 byte to 300 KB, and 500 puts in flight\n");
}

static void test_accumulate(void)
{
    struct trio t;
    uint32_t key = trio_with_window(&t, NULL, NULL);
    /* 1. Two origins add into the same 1000 counters, 100 times each, interleaved. */
    static int32_t ones[1000], twos[1000];
    for (int i = 0; i < 1000; i++) {
        ones[i] = 1;
        twos[i] = 2;
    }
    for (int r = 0; r < 100; r++) {
        CHECK_OK(pme_rma_acc(t.ep[1], t.to[1][0], key, 0, ones, NULL, sizeof(ones), PME_AOP_SUM,
                             PME_DT_I32, 0));
        CHECK_OK(pme_rma_acc(t.ep[2], t.to[2][0], key, 0, twos, NULL, sizeof(twos), PME_AOP_SUM,
                             PME_DT_I32, 0));
        spin(&t, 7);
    }
    settle(&t, 7, 1, 0, 10);
    settle(&t, 7, 2, 0, 10);
    for (int i = 0; i < 1000; i++) {
        int32_t v;
        memcpy(&v, WIN + 4 * i, 4);
        CHECK(v == 300, "counter %d is %d, not 300", i, v);
    }
    /* 2. Other operations and types, at an unaligned offset. */
    uint8_t *u = WIN + 8001;
    double d[3] = {1.5, -2.0, 7.0}, dmax[3] = {3.0, -5.0, 7.5};
    memcpy(u, d, sizeof(d));
    CHECK_OK(pme_rma_acc(t.ep[1], t.to[1][0], key, 8001, dmax, NULL, sizeof(dmax), PME_AOP_MAX,
                         PME_DT_F64, 0));
    settle(&t, 3, 1, 0, 10);
    memcpy(d, u, sizeof(d));
    CHECK(d[0] == 3.0 && d[1] == -2.0 && d[2] == 7.5, "MAX: %g %g %g", d[0], d[1], d[2]);
    int16_t s[2] = {300, -7}, f[2] = {300, 3};
    memcpy(u, s, sizeof(s));
    CHECK_OK(pme_rma_acc(t.ep[1], t.to[1][0], key, 8001, f, NULL, sizeof(f), PME_AOP_PROD,
                         PME_DT_I16, 0));
    settle(&t, 3, 1, 0, 10);
    memcpy(s, u, sizeof(s));
    CHECK(s[0] == (int16_t)(300 * 300) && s[1] == -21, "PROD: %d %d", s[0], s[1]);
    uint8_t x[4] = {0xf0, 0x0f, 0xff, 0x00}, m[4] = {0xff, 0xff, 0x0f, 0x00};
    memcpy(u, x, 4);
    CHECK_OK(pme_rma_acc(t.ep[2], t.to[2][0], key, 8001, m, NULL, 4, PME_AOP_BXOR, PME_DT_U8, 0));
    settle(&t, 5, 2, 0, 10);
    CHECK(u[0] == 0x0f && u[1] == 0xf0 && u[2] == 0xf0 && u[3] == 0, "BXOR: %02x %02x %02x %02x",
          u[0], u[1], u[2], u[3]);
    /* Floating point takes no bitwise operation, at the origin already. */
    CHECK(pme_rma_acc(t.ep[1], t.to[1][0], key, 0, d, NULL, 8, PME_AOP_BAND, PME_DT_F64, 0) ==
              PME_ERR_INVAL, "BAND on doubles accepted");
    /* 3. Fetch: the values before come back, the new ones are in place. */
    int64_t add[4] = {10, 20, 30, 40}, before[4];
    int64_t start[4] = {1, 2, 3, 4};
    memcpy(WIN + 16000, start, sizeof(start));
    CHECK_OK(pme_rma_acc(t.ep[1], t.to[1][0], key, 16000, add, before, sizeof(add), PME_AOP_SUM,
                         PME_DT_I64, 0));
    settle(&t, 3, 1, 0, 10);
    int64_t now[4];
    memcpy(now, WIN + 16000, sizeof(now));
    for (int i = 0; i < 4; i++)
        CHECK(before[i] == start[i] && now[i] == start[i] + add[i], "fetch %d: %lld then %lld",
              i, (long long)before[i], (long long)now[i]);
    /* NO_OP fetches atomically, REPLACE swaps in. */
    CHECK_OK(pme_rma_acc(t.ep[2], t.to[2][0], key, 16000, add, before, 8, PME_AOP_NO_OP,
                         PME_DT_I64, 0));
    settle(&t, 5, 2, 0, 10);
    CHECK(before[0] == 11 && now[0] == 11, "NO_OP fetched %lld", (long long)before[0]);
    /* 4. Compare-and-swap: swaps when equal only, returns the old value either way. */
    uint32_t cur = 5, cmp = 5, swp = 9, old = 0;
    memcpy(WIN + 20000, &cur, 4);
    CHECK_OK(pme_rma_cas(t.ep[1], t.to[1][0], key, 20000, &cmp, &swp, &old, PME_DT_U32, 0));
    settle(&t, 3, 1, 0, 10);
    memcpy(&cur, WIN + 20000, 4);
    CHECK(old == 5 && cur == 9, "CAS equal: old %u now %u", old, cur);
    CHECK_OK(pme_rma_cas(t.ep[1], t.to[1][0], key, 20000, &cmp, &swp, &old, PME_DT_U32, 0));
    settle(&t, 3, 1, 0, 10);
    memcpy(&cur, WIN + 20000, 4);
    CHECK(old == 9 && cur == 9, "CAS unequal: old %u now %u", old, cur);
    /* 5. The target's own caller on its own window, between the peers' accumulates. */
    CHECK_OK(pme_rma_acc(t.ep[0], PME_PEER_SELF, key, 0, ones, NULL, sizeof(ones), PME_AOP_SUM,
                         PME_DT_I32, 0));
    int32_t got[2], one = 1;
    CHECK_OK(pme_rma_acc(t.ep[0], PME_PEER_SELF, key, 0, &one, got, 4, PME_AOP_SUM, PME_DT_I32,
                         0));
    CHECK(got[0] == 301, "self fetch %d", got[0]);
    CHECK_OK(pme_rma_get(t.ep[0], PME_PEER_SELF, key, 0, got, 8, 0));
    CHECK(got[0] == 302 && got[1] == 301, "self get %d %d", got[0], got[1]);
    CHECK_OK(pme_rma_cas(t.ep[0], PME_PEER_SELF, key, 0, &got[0], &one, &old, PME_DT_U32, 0));
    CHECK(old == 302 && WIN[0] == 1, "self CAS");
    guards_check();
    trio_close(&t);
    printf("accumulates: atomic sums from two origins, MAX, PROD, BXOR, fetch, CAS, self\n");
}

static void test_bounds(void)
{
    struct trio t;
    uint32_t key;
    trio_open(&t, NULL, NULL);
    guards_set();
    pattern_fill(WIN, WIN_BYTES, 77);
    CHECK_OK(pme_rma_expose(t.ep[0], WIN, WIN_BYTES, &key));
    pme_ep_t *o = t.ep[1];
    pme_peer_t p = t.to[1][0];
    static uint8_t junk[100000], back[64];
    memset(junk, 0x5a, sizeof(junk));
    /* A put that starts inside and runs past the end: its first frames fit, none lands. */
    CHECK_OK(pme_rma_put(o, p, key, WIN_BYTES - 50000, junk, sizeof(junk), 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_ERR_RANGE, "an overrunning put did not fail with RANGE");
    CHECK(pme_rma_error(o, p) == PME_OK, "the error was not cleared");
    /* One byte past the end, an accumulate, a get, a compare-and-swap. */
    CHECK_OK(pme_rma_put(o, p, key, WIN_BYTES, junk, 1, 0));
    int32_t v = 1;
    CHECK_OK(pme_rma_acc(o, p, key, WIN_BYTES - 2, &v, NULL, 4, PME_AOP_SUM, PME_DT_I32, 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_ERR_RANGE, "put/acc past the end");
    CHECK_OK(pme_rma_get(o, p, key, WIN_BYTES - 10, back, 11, 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_ERR_RANGE, "get past the end");
    uint64_t c64 = 0, s64 = 1, o64;
    CHECK_OK(pme_rma_cas(o, p, key, UINT64_MAX - 3, &c64, &s64, &o64, PME_DT_U64, 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_ERR_RANGE, "CAS at a wrapping offset");
    /* A key that names nothing, and a withdrawn window's. */
    CHECK_OK(pme_rma_put(o, p, key ^ 0x00100000u, 0, junk, 8, 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_ERR_NOWIN, "unknown key");
    CHECK(pattern_check(WIN, WIN_BYTES, 77) < 0, "a refused request changed byte %ld",
          pattern_check(WIN, WIN_BYTES, 77));
    guards_check();
    CHECK(COUNTER(t.ep[0], rma_refused) >= 6, "%llu refused",
          (unsigned long long)COUNTER(t.ep[0], rma_refused));
    /* The link survived: a good put still lands. */
    CHECK_OK(pme_rma_put(o, p, key, WIN_BYTES - 8, junk, 8, 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_OK && WIN[WIN_BYTES - 1] == 0x5a, "a good put after");
    CHECK_OK(pme_rma_withdraw(t.ep[0], key));
    CHECK_OK(pme_rma_put(o, p, key, 0, junk, 8, 0));
    settle(&t, 3, 1, 0, 10);
    CHECK(pme_rma_error(o, p) == PME_ERR_NOWIN, "a withdrawn window's key");
    /* Our own window too. */
    CHECK(pme_rma_put(t.ep[0], PME_PEER_SELF, key, 0, junk, 8, 0) == PME_ERR_NOWIN, "self nowin");
    CHECK_OK(pme_rma_expose(t.ep[0], WIN, 16, &key));
    CHECK(pme_rma_get(t.ep[0], PME_PEER_SELF, key, 9, back, 8, 0) == PME_ERR_RANGE, "self range");
    guards_check();
    trio_close(&t);
    printf("bounds: overruns, wrapping offsets, unknown and withdrawn keys refused\n");
}

/* ---- forged frames from a fake peer ---- */

static const uint8_t fake_mac[6] = {0x02, 0xfa, 0xce, 0x00, 0x00, 0x02};

static struct pme_wire_rma forged(unsigned op, uint32_t key, uint64_t off, uint64_t len)
{
    static uint32_t next_id = 100;
    struct pme_wire_rma r;
    memset(&r, 0, sizeof(r));
    r.op = (uint8_t)op;
    r.key = htonl(key);
    r.req_id = htonl(next_id++);
    r.offset = htobe64(off);
    r.len = htobe64(len);
    return r;
}

/* Send r and plen payload bytes in sequence; returns the status of the NAK naming r, or
 * 0 if the endpoint sent none within 200 ms. What the endpoint sends is acknowledged, so
 * that no answer comes twice. */
static uint32_t forge(struct fakepeer *fp, pme_ep_t *ep, const struct pme_wire_rma *r,
                      size_t plen, uint16_t flags)
{
    static uint8_t buf[sizeof(struct pme_wire_rma) + 9000];
    static struct fp_frame f;
    memcpy(buf, r, sizeof(*r));
    memset(buf + sizeof(*r), 0x66, plen);
    fp_send(fp, PME_T_RMA, FP_SEQ_AUTO, 0, 0, 0, flags, 0, buf, sizeof(*r) + plen);
    double end = now_s() + 0.2;
    while (now_s() < end) {
        pme_progress(ep);
        while (fp_take(fp, &f)) {
            if (f.type != PME_T_RMA || f.sublen < sizeof(struct pme_wire_rma))
                continue;
            fp_send(fp, PME_T_ACK, 0, 1, f.seq, 1 << 20, 0, 0, NULL, 0);
            const struct pme_wire_rma *a = (const void *)f.sub;
            if (a->op == PME_RMA_NAK && a->req_id == r->req_id)
                return ntohl(a->status);
        }
    }
    return 0;
}

static void test_hostile(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    pme_peer_t peer;
    char addr[PME_ADDR_MAX];
    uint32_t key;
    lp_open(&lp, NULL, NULL);
    fp_init(&fp, lp.wire, lp.a, fake_mac, 78, 0x0a0000fb, lp_secret, 0x7e57);
    fp_addr(&fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(lp.a, addr, &peer));
    CHECK(pme_send(lp.a, peer, "x", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE, "send");
    fp_handshake(&fp, lp.a, 9000, 1 << 20);
    guards_set();
    pattern_fill(WIN, WIN_BYTES, 5);
    CHECK_OK(pme_rma_expose(lp.a, WIN, 1000, &key));
    const uint16_t one = PME_F_FIRST | PME_F_LAST;
    struct pme_wire_rma r = forged(PME_RMA_PUT, key, 996, 8);
    CHECK(forge(&fp, lp.a, &r, 8, one) == PME_RMA_E_RANGE, "put past the end");
    r = forged(PME_RMA_PUT, key, UINT64_MAX - 3, 8);
    CHECK(forge(&fp, lp.a, &r, 8, one) == PME_RMA_E_RANGE, "put at a wrapping offset");
    r = forged(PME_RMA_PUT, key, 0, 8);
    CHECK(forge(&fp, lp.a, &r, 16, one) == PME_RMA_E_OP, "more payload than len");
    /* The first frame of a long put is refused (the whole does not fit): its next frame,
     * which would fit on its own, is dropped too. */
    r = forged(PME_RMA_PUT, key, 0, 5000);
    CHECK(forge(&fp, lp.a, &r, 64, PME_F_FIRST) == PME_RMA_E_RANGE, "long put");
    r = forged(PME_RMA_PUT, key, 64, 5000);
    CHECK(forge(&fp, lp.a, &r, 64, 0) == 0, "a NAK for a middle frame");
    r = forged(PME_RMA_GET, key, 0, 1001);
    CHECK(forge(&fp, lp.a, &r, 0, one) == PME_RMA_E_RANGE, "get past the end");
    r = forged(PME_RMA_ACC, key, 0, 8);
    r.aop = PME_AOP_BXOR;
    r.dtype = PME_DT_F32;
    CHECK(forge(&fp, lp.a, &r, 8, one) == PME_RMA_E_OP, "BXOR on floats");
    r.dtype = 200;
    CHECK(forge(&fp, lp.a, &r, 8, one) == PME_RMA_E_OP, "unknown type");
    r = forged(PME_RMA_CAS, key, 0, 4);
    r.dtype = PME_DT_U32;
    CHECK(forge(&fp, lp.a, &r, 4, one) == PME_RMA_E_OP, "CAS without the swap value");
    r = forged(PME_RMA_LOCK, key, 0, 0);
    r.flags = PME_RMA_F_SHARED | PME_RMA_F_EXCL;
    CHECK(forge(&fp, lp.a, &r, 0, one) == PME_RMA_E_OP, "both lock types");
    r = forged(PME_RMA_PUT, key, 0, 8);
    r.flags = PME_RMA_F_EXCL;
    CHECK(forge(&fp, lp.a, &r, 8, PME_F_FIRST) == PME_RMA_E_OP, "a locking put of two frames");
    r = forged(PME_RMA_UNLOCK, key, 0, 0);
    CHECK(forge(&fp, lp.a, &r, 0, one) == PME_RMA_E_NOLOCK, "unlock without lock");
    r = forged(99, key, 0, 0);
    CHECK(forge(&fp, lp.a, &r, 0, one) == PME_RMA_E_OP, "unknown op");
    r = forged(PME_RMA_PUT, key + 1, 0, 8);
    CHECK(forge(&fp, lp.a, &r, 8, one) == PME_RMA_E_NOWIN, "unknown window");
    CHECK(pattern_check(WIN, WIN_BYTES, 5) < 0, "a forged request changed byte %ld",
          pattern_check(WIN, WIN_BYTES, 5));
    guards_check();
    CHECK(COUNTER(lp.a, rma_refused) == 14, "%llu refused",
          (unsigned long long)COUNTER(lp.a, rma_refused));
    /* And an honest one is acted on and acknowledged. */
    r = forged(PME_RMA_PUT, key, 992, 8);
    r.req_id = 0;
    CHECK(forge(&fp, lp.a, &r, 8, one | PME_F_ACK_REQ) == 0, "a good put refused");
    CHECK(WIN[999] == 0x66 && WIN[991] == pattern_byte(5, 991), "the good put did not land");
    lp_close(&lp);
    printf("forged requests refused and answered NAK\n");
}

static void test_locks(void)
{
    struct trio t;
    uint32_t key;
    trio_open(&t, NULL, NULL);
    memset(WIN, 0, 64);
    CHECK_OK(pme_rma_expose(t.ep[0], WIN, 64, &key));
    pme_peer_t b = t.to[1][0], c = t.to[2][0];
    /* b takes it exclusively; c's exclusive request and our own shared one wait. */
    CHECK_OK(pme_rma_lock(t.ep[1], b, key, PME_RMA_LOCK_EXCL));
    settle(&t, 7, 1, 0, 5);
    CHECK_OK(pme_rma_lock(t.ep[2], c, key, PME_RMA_LOCK_EXCL));
    still_pending(&t, 7, 2, 0, 1);
    CHECK_OK(pme_rma_lock(t.ep[0], PME_PEER_SELF, key, PME_RMA_LOCK_SHARED));
    CHECK(pme_rma_pending(t.ep[0], PME_PEER_SELF) == 1, "our shared lock did not wait");
    uint32_t v = 1;
    CHECK_OK(pme_rma_put(t.ep[1], b, key, 0, &v, 4, 0));
    CHECK_OK(pme_rma_unlock(t.ep[1], b, key));
    settle(&t, 7, 1, 0, 5);
    settle(&t, 7, 2, 0, 5); /* c has it now */
    CHECK(pme_rma_pending(t.ep[0], PME_PEER_SELF) == 1, "shared granted beside exclusive");
    CHECK_OK(pme_rma_unlock(t.ep[2], c, key));
    settle(&t, 7, 2, 0, 5);
    settle(&t, 7, 0, -1, 5);
    /* We hold it shared: b's shared lock-with-put goes at once, c's exclusive one waits
     * in line with its payload, and so does b's next exclusive lock behind it. */
    CHECK_OK(pme_rma_put(t.ep[1], b, key, 4, &v, 4, PME_RMA_TAKE_SHARED));
    settle(&t, 7, 1, 0, 5);
    CHECK(WIN[4] == 1, "shared put did not land");
    CHECK_OK(pme_rma_unlock(t.ep[1], b, key));
    settle(&t, 7, 1, 0, 5);
    uint32_t w = 7;
    CHECK(pme_rma_frame_room(t.ep[2], c) >= 4, "no room for a locking put");
    CHECK_OK(pme_rma_put(t.ep[2], c, key, 8, &w, 4, PME_RMA_TAKE_EXCL));
    CHECK_OK(pme_rma_unlock(t.ep[2], c, key)); /* sent before the grant: released after */
    still_pending(&t, 7, 2, 0, 1);
    CHECK(WIN[8] == 0, "the waiting put landed before its lock");
    CHECK_OK(pme_rma_unlock(t.ep[0], PME_PEER_SELF, key));
    settle(&t, 7, 2, 0, 5);
    CHECK(WIN[8] == 7, "the put did not land when its lock was granted");
    /* ...and its unlock came along: the lock is free for a get that takes it. */
    uint32_t back = 0;
    CHECK_OK(pme_rma_get(t.ep[1], b, key, 8, &back, 4, PME_RMA_TAKE_EXCL));
    settle(&t, 7, 1, 0, 5);
    CHECK(back == 7, "locking get read %u", back);
    CHECK_OK(pme_rma_unlock(t.ep[1], b, key));
    settle(&t, 7, 1, 0, 5);
    /* An unlock right behind a large get: the lock is held until the get's answer, which
     * reads the window as it goes, is acknowledged; meanwhile nobody else gets it. */
    static uint8_t big[96 * 1024], got[96 * 1024];
    CHECK_OK(pme_rma_withdraw(t.ep[0], key));
    pattern_fill(big, sizeof(big), 21);
    CHECK_OK(pme_rma_expose(t.ep[0], big, sizeof(big), &key));
    CHECK_OK(pme_rma_lock(t.ep[1], b, key, PME_RMA_LOCK_EXCL));
    settle(&t, 7, 1, 0, 5);
    CHECK_OK(pme_rma_get(t.ep[1], b, key, 0, got, sizeof(got), 0));
    CHECK_OK(pme_rma_unlock(t.ep[1], b, key));
    CHECK_OK(pme_rma_lock(t.ep[2], c, key, PME_RMA_LOCK_EXCL));
    still_pending(&t, 5, 2, 0, 1); /* b, which would acknowledge, makes no progress */
    settle(&t, 7, 1, 0, 5);
    settle(&t, 7, 2, 0, 5);
    CHECK(pattern_check(got, sizeof(got), 21) < 0, "the get read the window after its unlock");
    CHECK_OK(pme_rma_unlock(t.ep[2], c, key));
    settle(&t, 7, 2, 0, 5);
    /* Two shared holders at once. */
    CHECK_OK(pme_rma_lock(t.ep[1], b, key, PME_RMA_LOCK_SHARED));
    CHECK_OK(pme_rma_lock(t.ep[2], c, key, PME_RMA_LOCK_SHARED));
    settle(&t, 7, 1, 0, 5);
    settle(&t, 7, 2, 0, 5);
    CHECK_OK(pme_rma_unlock(t.ep[1], b, key));
    CHECK_OK(pme_rma_unlock(t.ep[2], c, key));
    settle(&t, 7, 1, 0, 5);
    settle(&t, 7, 2, 0, 5);
    CHECK(pme_rma_error(t.ep[1], b) == PME_OK && pme_rma_error(t.ep[2], c) == PME_OK, "errors");
    trio_close(&t);
    printf("locks: exclusive and shared, in order, with operations riding on them\n");
}

static void test_lossy(void)
{
    struct pme_loop_faults faults = {.seed = 1234, .drop = 0.05, .dup = 0.02, .reorder = 0.05};
    struct trio t;
    uint32_t key = trio_with_window(&t, &faults, NULL);
    static uint64_t inc[2000];
    static uint8_t src[60000], back[60000];
    for (int i = 0; i < 2000; i++)
        inc[i] = 1;
    pattern_fill(src, sizeof(src), 9);
    /* Until a peer is known (its first answer), no more than the smallest frames take
     * may ride on a lock. */
    CHECK(pme_rma_frame_room(t.ep[1], t.to[1][0]) == 144, "room toward a stranger");
    CHECK(pme_rma_acc(t.ep[1], t.to[1][0], key, 0, inc, NULL, 8000, PME_AOP_SUM, PME_DT_U64,
                      PME_RMA_TAKE_SHARED) == PME_ERR_INVAL, "a locking accumulate to a stranger");
    CHECK_OK(pme_rma_lock(t.ep[1], t.to[1][0], key, PME_RMA_LOCK_SHARED));
    CHECK_OK(pme_rma_unlock(t.ep[1], t.to[1][0], key));
    settle(&t, 7, 1, 0, 20);
    for (int r = 0; r < 40; r++) {
        /* One frame's worth that takes the lock on the way, and two of them without. */
        CHECK_OK(pme_rma_acc(t.ep[1], t.to[1][0], key, 0, inc, NULL, 8000, PME_AOP_SUM,
                             PME_DT_U64, PME_RMA_TAKE_SHARED));
        CHECK_OK(pme_rma_acc(t.ep[2], t.to[2][0], key, 0, inc, NULL, sizeof(inc), PME_AOP_SUM,
                             PME_DT_U64, 0));
        settle(&t, 7, 1, 0, 20);
        CHECK_OK(pme_rma_unlock(t.ep[1], t.to[1][0], key));
        CHECK_OK(pme_rma_put(t.ep[2], t.to[2][0], key, 100000, src, sizeof(src), 0));
        spin(&t, 7);
    }
    settle(&t, 7, 1, 0, 30);
    settle(&t, 7, 2, 0, 30);
    for (int i = 0; i < 2000; i++) {
        uint64_t v;
        memcpy(&v, WIN + 8 * i, 8);
        CHECK(v == (i < 1000 ? 80u : 40u), "counter %d is %llu", i, (unsigned long long)v);
    }
    CHECK(pattern_check(WIN + 100000, sizeof(src), 9) < 0, "put wrong under loss");
    CHECK_OK(pme_rma_get(t.ep[1], t.to[1][0], key, 100000, back, sizeof(back), 0));
    settle(&t, 7, 1, 0, 30);
    CHECK(pattern_check(back, sizeof(back), 9) < 0, "get wrong under loss");
    struct pme_counters c;
    pme_ep_counters(t.ep[1], &c);
    CHECK(c.retransmits > 0, "no frame was lost (the test tests nothing)");
    printf("lossy wire: 80 accumulates counted once, puts and gets intact (%llu "
           "retransmissions)\n", (unsigned long long)c.retransmits);
    trio_close(&t);
}

static void with_helper(struct pme_config *cfg)
{
    cfg->helper = 1;
    cfg->helper_us = 2000;
}

static void test_helper(void)
{
    struct trio t;
    uint32_t key = trio_with_window(&t, NULL, with_helper);
    /* From here on the target's caller does not call PME at all: only origins progress. */
    static int32_t ones[4096];
    static uint8_t src[200000], back[200000];
    for (int i = 0; i < 4096; i++)
        ones[i] = 1;
    pattern_fill(src, sizeof(src), 3);
    for (int r = 0; r < 20; r++) {
        for (int o = 1; o <= 2; o++) {
            pme_peer_t p = t.to[o][0];
            CHECK_OK(pme_rma_lock(t.ep[o], p, key, PME_RMA_LOCK_EXCL));
            settle(&t, 6, o, 0, 10);
            CHECK_OK(pme_rma_acc(t.ep[o], p, key, 0, ones, NULL, sizeof(ones), PME_AOP_SUM,
                                 PME_DT_I32, 0));
            CHECK_OK(pme_rma_put(t.ep[o], p, key, 300000, src, sizeof(src), 0));
            CHECK_OK(pme_rma_unlock(t.ep[o], p, key));
            settle(&t, 6, o, 0, 10);
        }
    }
    for (int i = 0; i < 4096; i++) {
        int32_t v;
        memcpy(&v, WIN + 4 * i, 4);
        CHECK(v == 40, "counter %d is %d, not 40", i, v);
    }
    CHECK_OK(pme_rma_get(t.ep[1], t.to[1][0], key, 300000, back, sizeof(back),
                         PME_RMA_TAKE_SHARED));
    settle(&t, 6, 1, 0, 10);
    CHECK(pattern_check(back, sizeof(back), 3) < 0, "get through the helper wrong");
    CHECK_OK(pme_rma_unlock(t.ep[1], t.to[1][0], key));
    settle(&t, 6, 1, 0, 10);
    /* The caller says it updates exposed memory itself: the helper acts on nothing. */
    pme_rma_exclusive(t.ep[0], 1);
    int32_t one = 1;
    CHECK_OK(pme_rma_acc(t.ep[1], t.to[1][0], key, 0, &one, NULL, 4, PME_AOP_SUM, PME_DT_I32, 0));
    double end = now_s() + 0.05; /* 25 helper periods */
    while (now_s() < end)
        spin(&t, 2);
    CHECK(pme_rma_pending(t.ep[1], t.to[1][0]) == 1, "the helper acted while held out");
    int32_t v0;
    memcpy(&v0, WIN, 4);
    CHECK(v0 == 40, "the held-out accumulate landed");
    pme_rma_exclusive(t.ep[0], 0);
    settle(&t, 6, 1, 0, 10);
    memcpy(&v0, WIN, 4);
    CHECK(v0 == 41, "the accumulate after release: %d", v0);
    uint64_t passes = COUNTER(t.ep[0], helper_passes);
    CHECK(passes > 0, "no helper pass");
    trio_close(&t);
    printf("the target never called PME: its helper acted on 80 epochs (%llu passes)\n",
           (unsigned long long)passes);
}

static void test_notsup(void)
{
    struct lp_pair lp;
    struct fakepeer fp;
    pme_peer_t peer;
    char addr[PME_ADDR_MAX];
    lp_open(&lp, NULL, NULL);
    fp_init(&fp, lp.wire, lp.a, fake_mac, 79, 0x0a0000fc, lp_secret, 0x7e57);
    fp_addr(&fp, addr, sizeof(addr));
    CHECK_OK(pme_ep_add_peer(lp.a, addr, &peer));
    uint32_t v = 1;
    CHECK_OK(pme_rma_put(lp.a, peer, 1, 0, &v, 4, 0));
    CHECK_OK(pme_rma_get(lp.a, peer, 1, 0, &v, 4, 0));
    CHECK(pme_rma_pending(lp.a, peer) == 2, "not pending before the handshake");
    fp_handshake(&fp, lp.a, 9000, 1 << 20); /* announces no features */
    pme_progress(lp.a);
    CHECK(pme_rma_pending(lp.a, peer) == 0, "queued requests did not fail");
    CHECK(pme_rma_error(lp.a, peer) == PME_ERR_NOTSUP, "not NOTSUP");
    CHECK(pme_rma_put(lp.a, peer, 1, 0, &v, 4, 0) == PME_ERR_NOTSUP, "later put");
    static struct fp_frame f;
    while (fp_take(&fp, &f))
        CHECK(f.type != PME_T_RMA, "a request went to a peer without one-sided support");
    lp_close(&lp);
    printf("a peer without one-sided support: PME_ERR_NOTSUP, nothing sent\n");
}

static void short_timeout(struct pme_config *cfg)
{
    cfg->peer_timeout_ms = 300;
}

static void test_peer_dies(void)
{
    struct trio t;
    uint32_t key;
    trio_open(&t, NULL, short_timeout);
    CHECK_OK(pme_rma_expose(t.ep[0], WIN, 64, &key));
    CHECK_OK(pme_rma_lock(t.ep[1], t.to[1][0], key, PME_RMA_LOCK_EXCL));
    settle(&t, 7, 1, 0, 5);
    CHECK_OK(pme_rma_lock(t.ep[2], t.to[2][0], key, PME_RMA_LOCK_EXCL));
    still_pending(&t, 7, 2, 0, 1);
    /* The holder vanishes; the target notices when it owes an answer. */
    pme_loop_wire_cut(t.wire, t.ep[1]);
    CHECK(pme_send(t.ep[0], t.to[0][1], "?", 1, NULL, 0, PME_SEND_NO_EVENT, NULL) == PME_DONE,
          "send");
    settle(&t, 5, 2, 0, 5);
    CHECK(COUNTER(t.ep[0], peers_failed) == 1, "the holder was not declared dead");
    trio_close(&t);
    printf("a dead holder's lock goes to the next in line\n");
}

/* Two processes get from each other's windows at once, more gets each than a target
 * answers before it makes the origin wait (rma_target.c's MAX_ANSWERS): every get
 * lands. */
static void test_crossing(void)
{
    enum { GETS = 3000 };
    struct trio t;
    uint32_t key[3];
    static uint32_t win[3][GETS], got[3][GETS];
    trio_open(&t, NULL, NULL);
    for (int e = 1; e <= 2; e++) {
        for (int i = 0; i < GETS; i++)
            win[e][i] = 1000000u * (uint32_t)e + (uint32_t)i;
        CHECK_OK(pme_rma_expose(t.ep[e], win[e], sizeof(win[e]), &key[e]));
    }
    for (int i = 0; i < GETS; i++)
        for (int e = 1; e <= 2; e++) {
            int o = 3 - e;
            CHECK_OK(pme_rma_get(t.ep[e], t.to[e][o], key[o], 4 * (uint64_t)i, &got[e][i], 4, 0));
        }
    double end = now_s() + 10;
    while (pme_rma_pending(t.ep[1], t.to[1][2]) || pme_rma_pending(t.ep[2], t.to[2][1])) {
        CHECK(now_s() < end, "gets still pending after 10 s: %u and %u",
              pme_rma_pending(t.ep[1], t.to[1][2]), pme_rma_pending(t.ep[2], t.to[2][1]));
        spin(&t, 6);
    }
    for (int e = 1; e <= 2; e++)
        for (int i = 0; i < GETS; i++)
            CHECK(got[e][i] == 1000000u * (uint32_t)(3 - e) + (uint32_t)i,
                  "ep %d's get %d brought %u", e, i, got[e][i]);
    for (int e = 1; e <= 2; e++) {
        int rc;
        end = now_s() + 5;
        while ((rc = pme_rma_withdraw(t.ep[e], key[e])) == PME_EAGAIN && now_s() < end)
            spin(&t, 6);
        CHECK(rc == PME_OK, "withdraw: %s", pme_strerror(rc));
    }
    trio_close(&t);
    printf("%d gets crossing %d the other way, all landed\n", GETS, GETS);
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"put_get", test_put_get},   {"accumulate", test_accumulate}, {"bounds", test_bounds},
        {"hostile", test_hostile},   {"locks", test_locks},           {"lossy", test_lossy},
        {"helper", test_helper},     {"notsup", test_notsup},         {"peer_dies", test_peer_dies},
        {"crossing", test_crossing},
    };
    return run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
}
