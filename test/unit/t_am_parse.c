// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_am_parse.c - the netmod's reader of its own header and of the MPIDIG header behind
 * it (MPIDI_PME_am_parse, src/mpid/ch4/netmod/pme/pme_am_wire.h), compiled on its own
 * as in test/fuzz/fuzz_am.c, so that it runs in every stage of CI (plain, ASan/UBSan,
 * valgrind). MPIDIG's handlers read their header structure whole, whatever arrived: a
 * member of the job (or anyone, without the MAC) can send a header shorter than that.
 * Each case checks the parser's verdict and what a handler would then read:
 *   - a header shorter than its handler's structure: accepted, and the handler reads the
 *     bytes that arrived followed by zeros, never the memory after them (the header sits
 *     against an unmapped page, so a read past it kills the test);
 *   - lengths that would point past what arrived (a runt shorter than the netmod's own
 *     header, whose MPIDIG length would wrap): refused; the payload that follows a short
 *     header in memory is never shown to the handler as header;
 *   - unknown handler ids and kinds: refused;
 *   - an empty MPIDIG header (the netmod's header alone): accepted, all zeros;
 *   - valid headers, short and long: fields decoded, bytes intact, long ones in place.
 * pme-test: tier=default cpu=130 time=1
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pme_am_wire.h"
#include "pme_test.h"

#define HANDLERS_MAX 64

/* Bytes the handlers of this test read, by handler id: stand-ins for MPIDIG's header
 * structures (MPIDIG_hdr_t and the RMA ones are between 40 and 200 bytes). */
static size_t handler_reads(int handler_id)
{
    return (size_t) (handler_id % 4 + 1) * 48;
}

/* A region whose last bytes are followed by an unmapped page. */
static uint8_t *guarded;
static size_t page;

static void guard_init(void)
{
    page = (size_t) sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    guarded = m;
    CHECK(mprotect(guarded + page, page, PROT_NONE) == 0, "mprotect");
}

/* Copy n bytes (a multiple of 8: the netmod pads its headers so) to the end of the
 * guarded page, where reading one byte more faults. */
static const void *at_page_end(const void *bytes, size_t n)
{
    CHECK(n % 8 == 0 && n <= page, "test setup: %zu bytes", n);
    uint8_t *p = guarded + page - n;
    memcpy(p, bytes, n);
    return p;
}

/* A header as the netmod builds it: its own 8 bytes, then am_len bytes of MPIDIG header
 * (the value 1 + i % 251 at offset i, never zero). */
static size_t make_hdr(uint8_t *buf, int kind, int handler_id, size_t am_len)
{
    MPIDI_PME_wire_hdr_t wh = {
        .handler_id = (uint8_t) handler_id, .src_vci = 2, .dst_vci = 3,
        .kind = (uint8_t) kind, .tag = 0xC0FFEEu
    };
    memcpy(buf, &wh, sizeof(wh));
    for (size_t i = 0; i < am_len; i++)
        buf[sizeof(wh) + i] = (uint8_t) (1 + i % 251);
    return sizeof(wh) + am_len;
}

/* The scratch buffer with canaries on both sides: the parser writes only inside. */
static struct {
    uint64_t before[4];
    uint64_t scratch[MPIDI_PME_AM_HDR_FLOOR / 8];
    uint64_t after[4];
} s;

static int parse(const void *hdr, size_t len, MPIDI_PME_am_parsed_t * out)
{
    memset(&s, 0x5A, sizeof(s));        /* stale bytes from an earlier message */
    memset(out, 0xEE, sizeof(*out));
    int rc = MPIDI_PME_am_parse(hdr, len, HANDLERS_MAX, s.scratch, out);
    for (int i = 0; i < 4; i++)
        CHECK(s.before[i] == 0x5A5A5A5A5A5A5A5Aull && s.after[i] == 0x5A5A5A5A5A5A5A5Aull,
              "the parser wrote outside its scratch buffer");
    return rc;
}

/* What a handler would do with an accepted header: read its structure whole. Checks the
 * bytes that arrived are there and everything after them is zero. */
static void handler_reads_header(const MPIDI_PME_am_parsed_t * am, size_t arrived,
                                 size_t reads, const char *what)
{
    const volatile uint8_t *h = am->am_hdr;
    CHECK(reads <= MPIDI_PME_AM_HDR_FLOOR || reads <= arrived, "%s: test setup", what);
    for (size_t i = 0; i < reads; i++) {
        uint8_t want = i < arrived ? (uint8_t) (1 + i % 251) : 0;
        CHECK(h[i] == want, "%s: header byte %zu of %zu (%zu arrived) is %u, not %u", what,
              i, reads, arrived, h[i], want);
    }
}

static void short_headers(void)
{
    uint8_t buf[512];
    MPIDI_PME_am_parsed_t am;
    /* Every length from nothing up to one word short of what each handler reads. */
    for (int id = 0; id < 4; id++) {
        size_t reads = handler_reads(id);
        for (size_t am_len = 0; am_len < reads; am_len += 8) {
            size_t n = make_hdr(buf, MPIDI_PME_KIND_AM, id, am_len);
            const void *hdr = at_page_end(buf, n);
            fprintf(stderr, "short header: handler %d reads %zu, %zu arrived\n", id, reads,
                    am_len);
            CHECK(parse(hdr, n, &am) == 0, "a short header of handler %d (%zu bytes) refused",
                  id, am_len);
            CHECK(am.kind == MPIDI_PME_KIND_AM && am.handler_id == id, "kind %d handler %d",
                  am.kind, am.handler_id);
            CHECK(am.am_hdr_len == am_len, "am_hdr_len %zu, %zu arrived", am.am_hdr_len,
                  am_len);
            handler_reads_header(&am, am_len, reads, "short header");
            /* And as far as any handler may read. */
            handler_reads_header(&am, am_len, MPIDI_PME_AM_HDR_FLOOR, "short header, floor");
        }
    }
}

static void past_the_end(void)
{
    uint8_t buf[512];
    MPIDI_PME_am_parsed_t am;
    /* Runts: shorter than the netmod's header; their MPIDIG length would wrap around. */
    make_hdr(buf, MPIDI_PME_KIND_AM, 1, 0);
    for (size_t n = 0; n < sizeof(MPIDI_PME_wire_hdr_t); n++)
        CHECK(parse(buf, n, &am) == -1, "a runt header of %zu bytes accepted", n);
    CHECK(parse(NULL, 64, &am) == -1, "no header accepted");

    /* A 24-byte MPIDIG header followed in memory by the payload (as pme_core lays out an
     * eager message): the handler reading its 96 bytes sees zeros, not the payload. */
    size_t n = make_hdr(buf, MPIDI_PME_KIND_AM, 1, 24);
    memset(buf + n, 0xAA, sizeof(buf) - n);
    CHECK(parse(buf, n, &am) == 0, "a header before its payload refused");
    CHECK(am.am_hdr_len == 24, "am_hdr_len %zu", am.am_hdr_len);
    handler_reads_header(&am, 24, handler_reads(1), "header before its payload");

    /* Lengths that are not a multiple of 8 (a forged frame): the same. */
    for (size_t am_len = 1; am_len < 16; am_len++) {
        n = make_hdr(buf, MPIDI_PME_KIND_AM, 0, am_len);
        memset(buf + n, 0xAA, sizeof(buf) - n);
        CHECK(parse(buf, n, &am) == 0, "a %zu-byte header refused", am_len);
        CHECK(am.am_hdr_len == am_len, "am_hdr_len %zu, %zu arrived", am.am_hdr_len, am_len);
        handler_reads_header(&am, am_len, handler_reads(0), "odd length");
    }
}

static void unknown_ids(void)
{
    uint8_t buf[512];
    MPIDI_PME_am_parsed_t am;
    size_t n;
    for (int id = HANDLERS_MAX; id < 256; id++) {
        n = make_hdr(buf, MPIDI_PME_KIND_AM, id, 48);
        CHECK(parse(at_page_end(buf, n), n, &am) == -1, "handler id %d of %d accepted", id,
              HANDLERS_MAX);
    }
    n = make_hdr(buf, MPIDI_PME_KIND_AM, HANDLERS_MAX - 1, 48);
    CHECK(parse(at_page_end(buf, n), n, &am) == 0 && am.handler_id == HANDLERS_MAX - 1,
          "the last handler id refused");
    for (int kind = 2; kind < 256; kind++) {
        n = make_hdr(buf, kind, 0, 48);
        CHECK(parse(at_page_end(buf, n), n, &am) == -1, "kind %d accepted", kind);
    }
    /* A handshake of dynamic processes names no handler: its id is not looked at. */
    n = make_hdr(buf, MPIDI_PME_KIND_DYNPROC, 200, 0);
    CHECK(parse(at_page_end(buf, n), n, &am) == 0, "a handshake refused");
    CHECK(am.kind == MPIDI_PME_KIND_DYNPROC && am.tag == 0xC0FFEEu, "handshake kind %d tag %x",
          am.kind, am.tag);
}

static void empty_header(void)
{
    uint8_t buf[64];
    MPIDI_PME_am_parsed_t am;
    size_t n = make_hdr(buf, MPIDI_PME_KIND_AM, 5, 0);
    CHECK(parse(at_page_end(buf, n), n, &am) == 0, "the netmod's header alone refused");
    CHECK(am.am_hdr_len == 0 && am.handler_id == 5, "am_hdr_len %zu handler %d",
          am.am_hdr_len, am.handler_id);
    /* The scratch buffer held an earlier message's bytes: none of them shows. */
    handler_reads_header(&am, 0, MPIDI_PME_AM_HDR_FLOOR, "empty header");
}

static void valid_headers(void)
{
    static uint8_t buf[2048];
    MPIDI_PME_am_parsed_t am;
    size_t lens[] = { 48, 96, 200, MPIDI_PME_AM_HDR_FLOOR - 8, MPIDI_PME_AM_HDR_FLOOR,
        MPIDI_PME_AM_HDR_FLOOR + 8, 1024
    };
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t n = make_hdr(buf, MPIDI_PME_KIND_AM, 7, lens[i]);
        const uint8_t *hdr = at_page_end(buf, n);
        CHECK(parse(hdr, n, &am) == 0, "a valid %zu-byte header refused", lens[i]);
        CHECK(am.kind == MPIDI_PME_KIND_AM && am.handler_id == 7 && am.src_vci == 2 &&
              am.dst_vci == 3 && am.tag == 0xC0FFEEu, "fields %d %d %d %d %x", am.kind,
              am.handler_id, am.src_vci, am.dst_vci, am.tag);
        CHECK(am.am_hdr_len == lens[i], "am_hdr_len %zu, %zu sent", am.am_hdr_len, lens[i]);
        /* A header as long as the floor is read where it arrived, not copied. */
        if (lens[i] >= MPIDI_PME_AM_HDR_FLOOR)
            CHECK(am.am_hdr == hdr + sizeof(MPIDI_PME_wire_hdr_t), "a long header was copied");
        handler_reads_header(&am, lens[i], lens[i], "valid header");
    }
}

int main(int argc, char **argv)
{
    static const struct scenario all[] = {
        {"short", short_headers},
        {"past", past_the_end},
        {"ids", unknown_ids},
        {"empty", empty_header},
        {"valid", valid_headers},
    };
    guard_init();
    run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
    printf("t_am_parse: all checks passed\n");
    return 0;
}
