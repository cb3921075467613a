// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_once - a stream of numbered PME messages of every size class (empty, eager,
 * multi-frame eager, rendezvous) whose receiver checks that each message arrives
 * exactly once, in order, with every byte right; for the fault-injection tests.
 *
 *   pme_once recv -i IFACE --addr-file F
 *   pme_once send -i IFACE --peer ADDR --seconds S
 *
 * The sender sends for S seconds (up to 8 rendezvous sends in flight), then an END
 * message with how many messages and bytes it sent; the receiver answers with what it
 * received, and both exit 0 only if the two agree and nothing was out of place. Both
 * print their PME counters as key=value (retransmits, frames dropped as corrupt,
 * duplicate or out of order) so the tests can see PME recover from the faults.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pme.h"

enum { OP_DATA = 1, OP_END = 2, OP_DONE = 3 };
#define WINDOW 8
#define MAX_SIZE (1u << 20)

struct msg_hdr {
    uint32_t op, seq;
    uint64_t size, count, bytes;
};

static const uint64_t sizes[] = {0, 1, 64, 1000, 1472, 4000, 9000, 20000, 32768, 65536,
                                 300000, MAX_SIZE};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static pme_ep_t *ep;
static pme_peer_t peer;

static void die(const char *what, int rc)
{
    fprintf(stderr, "pme_once: %s: %s", what, pme_strerror(rc));
    if (ep && *pme_ep_last_error(ep))
        fprintf(stderr, " (%s)", pme_ep_last_error(ep));
    fprintf(stderr, "\n");
    exit(1);
}

/* wrong: something arrived that should not have; the test fails here. */
__attribute__((format(printf, 1, 2))) static void wrong(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pme_once: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t pattern(uint32_t seq, uint64_t i)
{
    return (uint8_t)(((i * 2654435761u) >> 13) ^ seq ^ (i >> 8));
}

static void check_bytes(uint32_t seq, const uint8_t *p, uint64_t len, uint64_t want)
{
    if (len != want)
        wrong("message %" PRIu32 ": %" PRIu64 " bytes arrived, %" PRIu64 " were sent", seq, len,
              want);
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != pattern(seq, i))
            wrong("message %" PRIu32 ": byte %" PRIu64 " is wrong", seq, i);
}

static void print_counters(const char *who)
{
    struct pme_counters c;
    pme_ep_counters(ep, &c);
    printf("%s counters: tx_frames=%" PRIu64 " rx_frames=%" PRIu64 " retransmits=%" PRIu64
           " drop_crc=%" PRIu64 " drop_duplicate=%" PRIu64 " drop_out_of_order=%" PRIu64 "\n",
           who, c.tx_frames, c.rx_frames, c.retransmits, c.drop_crc, c.drop_duplicate,
           c.drop_out_of_order);
}

/* next_event: wait for one; a failed peer ends the program. */
static void next_event(struct pme_event *ev)
{
    while (!pme_next_event(ep, ev))
        pme_wait(ep, -1);
    if (ev->type == PME_EV_PEER_FAILED)
        die("peer failed", ev->status);
}

/* ---------------------------------------------------------------- receiver */

struct offer {
    struct msg_hdr h;
    uint8_t *buf;
};

static int receiver(void)
{
    uint32_t next = 0;
    uint64_t bytes = 0;
    int pending = 0, ended = 0;
    struct msg_hdr end = {0, 0, 0, 0, 0};
    while (!ended || pending) {
        struct pme_event ev;
        struct msg_hdr h;
        next_event(&ev);
        if (ev.type == PME_EV_MSG || ev.type == PME_EV_RTS) {
            if (ev.hdr_len != sizeof(h))
                wrong("a header of %zu bytes (expected %zu)", ev.hdr_len, sizeof(h));
            memcpy(&h, ev.hdr, sizeof(h));
            peer = ev.peer;
            if (h.op == OP_END) {
                end = h;
                ended = 1;
                pme_event_release(ep, &ev);
                continue;
            }
            if (h.op != OP_DATA || h.seq != next)
                wrong("message %" PRIu32 " (op %" PRIu32 ") arrived where %" PRIu32 " was due",
                      h.seq, h.op, next);
            next++;
        }
        if (ev.type == PME_EV_MSG) {
            check_bytes(h.seq, ev.data, ev.data_len, h.size);
            bytes += ev.data_len;
            pme_event_release(ep, &ev);
        } else if (ev.type == PME_EV_RTS) {
            struct offer *o = malloc(sizeof(*o));
            if (!o || !(o->buf = malloc(ev.total ? ev.total : 1)))
                die("out of memory", PME_ERR_INVAL);
            o->h = h;
            struct iovec iov = {o->buf, ev.total};
            int rc = pme_rndv_accept(ep, ev.rndv, &iov, 1, o);
            if (rc)
                die("accept", rc);
            pending++;
        } else if (ev.type == PME_EV_RECV_DONE) {
            struct offer *o = ev.ctx;
            if (ev.status)
                die("rendezvous receive", ev.status);
            check_bytes(o->h.seq, o->buf, ev.data_len, o->h.size);
            bytes += ev.data_len;
            free(o->buf);
            free(o);
            pending--;
        }
    }
    if (end.count != next || end.bytes != bytes) {
        fprintf(stderr, "pme_once: the sender sent %llu messages (%llu bytes), %u (%llu bytes) "
                "arrived\n", (unsigned long long)end.count, (unsigned long long)end.bytes, next,
                (unsigned long long)bytes);
        return 1;
    }
    struct msg_hdr done = {OP_DONE, next, 0, next, bytes};
    int rc;
    while ((rc = pme_send(ep, peer, &done, sizeof(done), NULL, 0, PME_SEND_NO_EVENT, NULL)) ==
           PME_EAGAIN)
        pme_wait(ep, 1);
    if (rc < 0)
        die("send", rc);
    pme_ep_flush(ep, 5000);
    printf("pme_once: received %u messages (%llu bytes), each once, in order, intact\n", next,
           (unsigned long long)bytes);
    print_counters("receiver");
    return 0;
}

/* ---------------------------------------------------------------- sender */

static uint8_t *slot_buf[WINDOW];
static int slot_busy[WINDOW];

/* send_one: hdr (+ data) to the peer; a rendezvous send holds slot until SEND_DONE. */
static void send_one(const struct msg_hdr *h, int slot)
{
    struct iovec iov = {slot >= 0 ? slot_buf[slot] : NULL, h->size};
    for (;;) {
        int rc = pme_send(ep, peer, h, sizeof(*h), &iov, h->size ? 1 : 0, PME_SEND_NO_EVENT,
                          (void *)(intptr_t)slot);
        if (rc == PME_DONE)
            return;
        if (rc == PME_OK) {
            slot_busy[slot] = 1;
            return;
        }
        if (rc != PME_EAGAIN)
            die("send", rc);
        pme_wait(ep, 1);
    }
}

/* free_slot: a slot no rendezvous send holds, waiting for completions if need be. */
static int free_slot(void)
{
    for (;;) {
        for (int i = 0; i < WINDOW; i++)
            if (!slot_busy[i])
                return i;
        struct pme_event ev;
        next_event(&ev);
        if (ev.type != PME_EV_SEND_DONE)
            die("unexpected event while sending", PME_ERR_INVAL);
        if (ev.status)
            die("send", ev.status);
        slot_busy[(intptr_t)ev.ctx] = 0;
    }
}

static int sender(double seconds)
{
    for (int i = 0; i < WINDOW; i++)
        if (!(slot_buf[i] = malloc(MAX_SIZE)))
            die("out of memory", PME_ERR_INVAL);
    uint32_t seq = 0;
    uint64_t bytes = 0;
    double t0 = now_s();
    while (now_s() - t0 < seconds) {
        struct msg_hdr h = {OP_DATA, seq, sizes[seq % NSIZES], 0, 0};
        int slot = free_slot();
        for (uint64_t i = 0; i < h.size; i++)
            slot_buf[slot][i] = pattern(seq, i);
        send_one(&h, slot);
        bytes += h.size;
        seq++;
    }
    struct msg_hdr end = {OP_END, seq, 0, seq, bytes};
    send_one(&end, -1);
    for (;;) {
        struct pme_event ev;
        next_event(&ev);
        if (ev.type == PME_EV_SEND_DONE) {
            if (ev.status)
                die("send", ev.status);
            slot_busy[(intptr_t)ev.ctx] = 0;
            continue;
        }
        if (ev.type != PME_EV_MSG)
            die("unexpected event", PME_ERR_INVAL);
        struct msg_hdr got;
        memcpy(&got, ev.hdr, sizeof(got));
        pme_event_release(ep, &ev);
        if (got.op != OP_DONE || got.count != seq || got.bytes != bytes)
            wrong("the receiver reports %" PRIu64 " messages and %" PRIu64 " bytes; %" PRIu32
                  " and %" PRIu64 " were sent", got.count, got.bytes, seq, bytes);
        break;
    }
    printf("pme_once: sent %u messages (%llu bytes) in %.1f s; the receiver got each once, in "
           "order, intact\n", seq, (unsigned long long)bytes, now_s() - t0);
    print_counters("sender");
    return 0;
}

int main(int argc, char **argv)
{
    struct pme_config cfg;
    char err[512];
    const char *peer_addr = NULL, *addr_file = NULL;
    double seconds = 5;
    pme_config_init(&cfg);
    cfg.job_key = 0x0ce;
    if (pme_config_from_env(&cfg, err, sizeof(err))) {
        fprintf(stderr, "pme_once: %s\n", err);
        return 2;
    }
    static const struct option lo[] = {{"iface", 1, 0, 'i'}, {"peer", 1, 0, 'p'},
                                       {"addr-file", 1, 0, 'A'}, {"seconds", 1, 0, 'S'},
                                       {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "i:p:", lo, NULL)) != -1) {
        switch (c) {
        case 'i': cfg.iface = optarg; break;
        case 'p': peer_addr = optarg; break;
        case 'A': addr_file = optarg; break;
        case 'S': seconds = atof(optarg); break;
        default: return 2;
        }
    }
    int is_send = optind == argc - 1 && !strcmp(argv[optind], "send");
    if ((!is_send && (optind != argc - 1 || strcmp(argv[optind], "recv"))) ||
        (is_send && !peer_addr) || (!is_send && !addr_file)) {
        fprintf(stderr, "usage: pme_once recv -i IFACE --addr-file F\n"
                        "       pme_once send -i IFACE --peer ADDR [--seconds S]\n");
        return 2;
    }
    int rc = pme_ep_open(&cfg, &ep, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "pme_once: %s\n", err);
        return 1;
    }
    if (is_send) {
        if ((rc = pme_ep_add_peer(ep, peer_addr, &peer)))
            die("peer address", rc);
        rc = sender(seconds);
    } else {
        char addr[PME_ADDR_MAX], tmp[4096];
        pme_ep_addr(ep, addr, sizeof(addr));
        snprintf(tmp, sizeof(tmp), "%s.tmp", addr_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%s\n", addr) < 0 || fclose(f) || rename(tmp, addr_file)) {
            fprintf(stderr, "pme_once: cannot write %s: %s\n", addr_file, strerror(errno));
            return 1;
        }
        rc = receiver();
    }
    pme_ep_close(ep);
    return rc;
}
