// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_perf - transport latency and bandwidth between two PME endpoints.
 *
 *   pme_perf server -i IFACE [-e EP] [--addr-file F]
 *   pme_perf client -i IFACE --peer ADDR [-t pingpong|stream|both|msgrate] [-s SIZES] ...
 *
 * The client drives: for ping-pong it sends a message and the server echoes it; for
 * streaming it keeps a window of messages in flight and the server answers once it
 * has them all; for the message rate it sends windows of messages back to back (as
 * MPI_Isend does, with no progress call between them) and the server acknowledges each
 * whole window, as OSU's bandwidth and message-rate tests do. Half round trip = elapsed
 * / iterations / 2; bandwidth in MB/s (10^6 bytes per second); message rate in millions
 * of messages per second. With --verify every byte is checked.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pme.h"

enum op { OP_PING = 1, OP_STREAM = 2, OP_STREAM_END = 3, OP_STREAM_DONE = 4, OP_BYE = 5,
          OP_RATE = 6, OP_RATE_ACK = 7 };

struct msg_hdr {
    uint32_t op;
    uint32_t seq;
    uint64_t size;
    uint64_t count;
};

struct opts {
    int server;
    const char *peer, *addr_file, *sizes, *test;
    int iters, warmup, window, verify, csv, counters;
    double seconds;
};

static pme_ep_t *ep;
static int outstanding_rndv; /* rendezvous sends not yet complete */
static pme_peer_t peer;
static uint8_t *sbuf, *rbuf;
static size_t max_size;
/* Rendezvous receives in flight each get a slice of rbuf of their own, the lowest free
 * one (so a ping-pong always reuses the first): two messages never land in the same
 * bytes at once, as MPI requires of its receive buffers (the kernel device writes them
 * as the frames arrive). */
#define RSLOTS 64
static uint64_t rslots_busy;
static const uint8_t *rdata; /* the last message received */

struct rctx {
    struct msg_hdr h;
    int slot;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "pme_perf: %s: %s", what, pme_strerror(rc));
    if (ep && *pme_ep_last_error(ep))
        fprintf(stderr, " (%s)", pme_ep_last_error(ep));
    fprintf(stderr, "\n");
    exit(1);
}

static uint8_t pattern(uint64_t i, uint32_t seq)
{
    return (uint8_t)((i * 131u) ^ (i >> 9) ^ seq);
}

/* A message that arrived while we waited for our sends to complete (with rails, the
 * peer's next offer may overtake the acknowledgement of our last fragment). */
static struct pme_event pending;
static int have_pending;

/* Accept an offer into a free slice of rbuf; its header and slice ride to its
 * RECV_DONE. */
static void take_offer(const struct pme_event *ev)
{
    struct rctx *c = malloc(sizeof(*c));
    if (!c || ev->total > max_size)
        die("offer larger than the largest size", PME_ERR_INVAL);
    memcpy(&c->h, ev->hdr, sizeof(c->h));
    uint64_t nslots = ev->total ? max_size / ev->total : 1;
    c->slot = rslots_busy == ~0ull ? 0 : __builtin_ctzll(~rslots_busy);
    if ((uint64_t)c->slot >= nslots || c->slot >= RSLOTS)
        c->slot = 0;
    rslots_busy |= 1ull << c->slot;
    struct iovec iov = {rbuf + (size_t)c->slot * ev->total, ev->total};
    int rc = pme_rndv_accept(ep, ev->rndv, &iov, 1, c);
    if (rc)
        die("accept", rc);
}

/* Receive one whole message (eager or rendezvous); returns its header, and rdata its
 * bytes. Offers are accepted into a free slice of rbuf as they come (several may be in
 * flight when streaming); each carries a copy of its header to its RECV_DONE. */
static struct msg_hdr recv_msg(size_t *len)
{
    struct pme_event ev;
    for (;;) {
        if (have_pending) {
            ev = pending;
            have_pending = 0;
        } else {
            while (!pme_next_event(ep, &ev))
                pme_wait(ep, -1);
        }
        if (ev.type == PME_EV_PEER_FAILED)
            die("peer failed", ev.status);
        if (ev.type == PME_EV_SEND_DONE) {
            if (ev.status)
                die("send", ev.status);
            outstanding_rndv--;
            continue;
        }
        if (ev.type == PME_EV_MSG) {
            struct msg_hdr h;
            memcpy(&h, ev.hdr, sizeof(h));
            if (ev.data_len)
                memcpy(rbuf, ev.data, ev.data_len);
            rdata = rbuf;
            *len = ev.data_len;
            peer = ev.peer; /* the server answers whoever spoke */
            pme_event_release(ep, &ev);
            return h;
        }
        if (ev.type == PME_EV_RTS) {
            take_offer(&ev);
            continue;
        }
        if (ev.type == PME_EV_RECV_DONE) {
            if (ev.status)
                die("receive", ev.status);
            struct rctx *c = ev.ctx;
            struct msg_hdr h = c->h;
            rdata = rbuf + (size_t)c->slot * ev.total;
            rslots_busy &= ~(1ull << c->slot);
            free(c);
            *len = ev.data_len;
            peer = ev.peer;
            return h;
        }
    }
}

/* Send; eager sends complete at once, rendezvous ones are counted until done. */
static void send_msg(uint32_t op, uint32_t seq, uint64_t size, uint64_t count)
{
    struct msg_hdr h = {op, seq, size, count};
    struct iovec iov = {sbuf, size};
    for (;;) {
        int rc = pme_send(ep, peer, &h, sizeof(h), &iov, size ? 1 : 0, PME_SEND_NO_EVENT, NULL);
        if (rc == PME_DONE)
            return;
        if (rc == PME_OK) {
            outstanding_rndv++;
            return;
        }
        if (rc != PME_EAGAIN)
            die("send", rc);
        pme_wait(ep, 1);
    }
}

/* Reap send completions until at most `keep` rendezvous sends are outstanding. */
static void reap_sends(int keep, struct msg_hdr *got, int *have_got)
{
    struct pme_event ev;
    while (outstanding_rndv > keep) {
        if (!pme_next_event(ep, &ev)) {
            pme_wait(ep, -1);
            continue;
        }
        if (ev.type == PME_EV_SEND_DONE) {
            if (ev.status)
                die("send", ev.status);
            outstanding_rndv--;
        } else if (ev.type == PME_EV_PEER_FAILED) {
            die("peer failed", ev.status);
        } else if (ev.type == PME_EV_MSG && got) {
            memcpy(got, ev.hdr, sizeof(*got));
            *have_got = 1;
            pme_event_release(ep, &ev);
        } else if (ev.type == PME_EV_RTS) {
            take_offer(&ev);
        } else if ((ev.type == PME_EV_MSG || ev.type == PME_EV_RECV_DONE) && !have_pending) {
            pending = ev; /* for recv_msg: it holds the receive buffer until then */
            have_pending = 1;
        } else {
            die("unexpected event while sending", PME_ERR_INVAL);
        }
    }
}

static void fill(uint64_t size, uint32_t seq, int verify)
{
    if (verify)
        for (uint64_t i = 0; i < size; i++)
            sbuf[i] = pattern(i, seq);
}

static void check(uint64_t size, uint32_t seq, size_t len)
{
    if (len != size) {
        fprintf(stderr, "pme_perf: message %u: %zu bytes arrived, %llu sent\n", seq, len,
                (unsigned long long)size);
        exit(1);
    }
    for (uint64_t i = 0; i < size; i++)
        if (rdata[i] != pattern(i, seq)) {
            fprintf(stderr, "pme_perf: message %u: byte %llu is wrong\n", seq,
                    (unsigned long long)i);
            exit(1);
        }
}

static int server(const struct opts *o)
{
    uint64_t window_got = 0; /* messages of the current message-rate window */
    for (;;) {
        size_t len;
        struct msg_hdr h = recv_msg(&len);
        if (o->verify && (h.op == OP_PING || h.op == OP_STREAM || h.op == OP_RATE))
            check(h.size, h.seq, len);
        switch (h.op) {
        case OP_PING:
            if (o->verify)
                memcpy(sbuf, rdata, len);
            send_msg(OP_PING, h.seq, h.size, 0);
            reap_sends(0, NULL, NULL);
            break;
        case OP_STREAM:
            break;
        case OP_RATE: /* count: the window's messages */
            if (++window_got == h.count) {
                send_msg(OP_RATE_ACK, h.seq, 0, window_got);
                window_got = 0;
            }
            break;
        case OP_STREAM_END:
            send_msg(OP_STREAM_DONE, h.seq, 0, h.count);
            break;
        case OP_BYE:
            pme_ep_flush(ep, 2000);
            return 0;
        }
    }
}

static double pingpong(const struct opts *o, uint64_t size, uint32_t *seq)
{
    int n = o->iters;
    double t0 = 0;
    for (int i = 0; i < n + o->warmup; i++) {
        if (i == o->warmup)
            t0 = now_s();
        fill(size, *seq, o->verify);
        send_msg(OP_PING, *seq, size, 0);
        size_t len;
        struct msg_hdr h = recv_msg(&len);
        reap_sends(0, NULL, NULL);
        if (h.op != OP_PING || h.seq != *seq) {
            fprintf(stderr, "pme_perf: reply %u to %u\n", h.seq, *seq);
            exit(1);
        }
        if (o->verify)
            check(size, *seq, len);
        (*seq)++;
    }
    return (now_s() - t0) / n / 2 * 1e6;
}

static double stream(const struct opts *o, uint64_t size, uint32_t *seq)
{
    /* Enough messages for a measurable time, at least the iteration count. */
    /* Aim at `seconds` assuming about 2 GB/s and at most a million messages/s. */
    uint64_t count = (uint64_t)o->iters;
    double by_bytes = o->seconds * 2e9 / (double)(size ? size : 1);
    double by_rate = o->seconds * 1e6;
    uint64_t want = (uint64_t)(by_bytes < by_rate ? by_bytes : by_rate);
    if (want > count)
        count = want;
    if (count > 1000000)
        count = 1000000;
    fill(size, *seq, o->verify);
    double t0 = now_s();
    for (uint64_t i = 0; i < count; i++) {
        send_msg(OP_STREAM, *seq, size, 0);
        reap_sends(o->window, NULL, NULL);
        if (o->verify) {
            reap_sends(0, NULL, NULL); /* the buffer changes: let rendezvous reads end */
            (*seq)++;
            fill(size, *seq, 1);
        }
    }
    send_msg(OP_STREAM_END, *seq, 0, count);
    struct msg_hdr got;
    int have = 0;
    reap_sends(0, &got, &have);
    size_t len;
    if (!have)
        got = recv_msg(&len);
    if (got.op != OP_STREAM_DONE || got.count != count) {
        fprintf(stderr, "pme_perf: stream answer op %u count %llu\n", got.op,
                (unsigned long long)got.count);
        exit(1);
    }
    double t = now_s() - t0;
    (*seq)++;
    return (double)count * (double)size / t / 1e6;
}

/* Windows of `window` messages sent back to back, each acknowledged as a whole by the
 * server; returns millions of messages per second. */
static double msgrate(const struct opts *o, uint64_t size, uint32_t *seq)
{
    uint64_t w = (uint64_t)o->window;
    /* Aim at `seconds` assuming at most two million messages a second. */
    uint64_t windows = (uint64_t)(o->seconds * 2e6 / (double)w);
    if (windows < 10)
        windows = 10;
    fill(size, *seq, o->verify);
    double t0 = 0;
    for (uint64_t k = 0; k < windows + 10; k++) {
        if (k == 10)
            t0 = now_s(); /* ten windows untimed */
        for (uint64_t i = 0; i < w; i++)
            send_msg(OP_RATE, *seq, size, w);
        size_t len;
        struct msg_hdr h = recv_msg(&len);
        if (h.op != OP_RATE_ACK || h.count != w) {
            fprintf(stderr, "pme_perf: window answered by op %u count %llu\n", h.op,
                    (unsigned long long)h.count);
            exit(1);
        }
    }
    double t = now_s() - t0;
    reap_sends(0, NULL, NULL);
    (*seq)++;
    return (double)windows * (double)w / t / 1e6;
}

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v;
}

/* "8,64,1k" or "1:4m" (powers of two from 1 to 4 MiB). */
static int parse_sizes(const char *spec, uint64_t *out, int max)
{
    int n = 0;
    char *copy = strdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (colon) {
            *colon = 0;
            uint64_t lo = parse_size(tok), hi = parse_size(colon + 1);
            for (uint64_t s = lo ? lo : 1; s <= hi && n < max; s *= 2)
                out[n++] = s;
            if (lo == 0 && n < max) {
                memmove(out + 1, out, (size_t)n * sizeof(*out));
                out[0] = 0;
                n++;
            }
        } else {
            out[n++] = parse_size(tok);
        }
    }
    free(copy);
    return n;
}

/* Why a stream retransmitted, say: every counter of the endpoint that is not 0. */
static void print_counters(const char *role)
{
    struct pme_counters cn;
    pme_ep_counters(ep, &cn);
#define SHOW(name)                                                                            \
    if (cn.name)                                                                              \
        printf("%s counter %s %llu\n", role, #name, (unsigned long long)cn.name);
    PME_COUNTER_NAMES(SHOW)
#undef SHOW
    fflush(stdout);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: pme_perf server|client [options]\n"
            "  -i, --iface IF      interface (default PME_IFACE)\n"
            "  -e, --ep ID         endpoint id (default: PME_EP_ID or a free one)\n"
            "  -p, --peer ADDR     the server's address (client)\n"
            "      --addr-file F   server: write the address to F\n"
            "  -t, --test T        pingpong, stream, both (default) or msgrate\n"
            "  -s, --sizes S       e.g. 8,1k,1m or 1:4m (default 8,1k,64k,1m)\n"
            "  -n, --iters N       ping-pong iterations per size (default 10000)\n"
            "      --seconds S     stream duration target per size (default 1)\n"
            "  -W, --window N      rendezvous sends in flight when streaming (default 16);\n"
            "                      msgrate: messages per acknowledged window (default 64)\n"
            "      --wait MODE     spin, block or auto (default PME_WAIT or auto)\n"
            "  -k, --key K         job key (default PME_JOB_KEY or 0x5e5e)\n"
            "      --verify        check every byte\n"
            "      --csv           print CSV: test,wait,size,value,unit\n"
            "      --counters      at the end, print every endpoint counter that is not 0\n"
            "All PME_* environment variables apply.\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {.iters = 10000, .warmup = 100, .window = 0, .seconds = 1,
                     .sizes = "8,1k,64k,1m", .test = "both"};
    struct pme_config cfg;
    char err[512];
    pme_config_init(&cfg);
    cfg.job_key = 0x5e5e;
    if (pme_config_from_env(&cfg, err, sizeof(err))) {
        fprintf(stderr, "pme_perf: %s\n", err);
        return 2;
    }
    static const struct option lo[] = {
        {"iface", 1, 0, 'i'}, {"ep", 1, 0, 'e'}, {"peer", 1, 0, 'p'}, {"addr-file", 1, 0, 'A'},
        {"test", 1, 0, 't'}, {"sizes", 1, 0, 's'}, {"iters", 1, 0, 'n'},
        {"seconds", 1, 0, 'S'}, {"window", 1, 0, 'W'}, {"wait", 1, 0, 'w'}, {"key", 1, 0, 'k'},
        {"verify", 0, 0, 'v'}, {"csv", 0, 0, 'c'},
        {"counters", 0, 0, 'C'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "i:e:p:t:s:n:W:k:h", lo, NULL)) != -1) {
        switch (c) {
        case 'i': cfg.iface = optarg; break;
        case 'e': cfg.ep_id = atoi(optarg); break;
        case 'p': o.peer = optarg; break;
        case 'A': o.addr_file = optarg; break;
        case 't': o.test = optarg; break;
        case 's': o.sizes = optarg; break;
        case 'n': o.iters = atoi(optarg); break;
        case 'S': o.seconds = atof(optarg); break;
        case 'W': o.window = atoi(optarg); break;
        case 'w':
            if (!strcmp(optarg, "spin")) cfg.wait_mode = PME_WAIT_SPIN;
            else if (!strcmp(optarg, "block")) cfg.wait_mode = PME_WAIT_BLOCK;
            else if (!strcmp(optarg, "auto")) cfg.wait_mode = PME_WAIT_AUTO;
            else usage();
            break;
        case 'k': cfg.job_key = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'v': o.verify = 1; break;
        case 'c': o.csv = 1; break;
        case 'C': o.counters = 1; break;
        default: usage();
        }
    }
    if (optind != argc - 1)
        usage();
    o.server = !strcmp(argv[optind], "server");
    if (!o.server && strcmp(argv[optind], "client"))
        usage();
    if (!o.server && !o.peer) {
        fprintf(stderr, "pme_perf: the client needs --peer ADDR (printed by the server)\n");
        return 2;
    }
    int do_rate = !strcmp(o.test, "msgrate");
    if (!o.window)
        o.window = do_rate ? 64 : 16;
    if (o.iters < 1 || o.window < 1)
        usage();
    uint64_t sizes[64];
    int nsizes = parse_sizes(o.sizes, sizes, 64);
    max_size = 64u << 20;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > max_size)
            max_size = sizes[i];
    sbuf = calloc(1, max_size);
    rbuf = calloc(1, max_size);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "pme_perf: out of memory\n");
        return 1;
    }
    int rc = pme_ep_open(&cfg, &ep, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "pme_perf: %s\n", err);
        return 1;
    }
    /* Control messages (a header, no data) must be eager: a reply offered by rendezvous
     * while the other side streams would need a receive buffer of its own. */
    if (pme_ep_eager_max(ep) < 2 * sizeof(struct msg_hdr)) {
        fprintf(stderr, "pme_perf: PME_EAGER_MAX=%zu is too small for pme_perf: it needs at "
                "least %zu bytes (its control messages are eager)\n", pme_ep_eager_max(ep),
                2 * sizeof(struct msg_hdr));
        return 1;
    }
    char addr[PME_ADDR_MAX];
    pme_ep_addr(ep, addr, sizeof(addr));
    if (o.server) {
        printf("pme_perf server at %s (mtu %u, device %s)\n", addr, pme_ep_mtu(ep), pme_ep_device(ep));
        fflush(stdout);
        if (o.addr_file) {
            char tmp[4096];
            snprintf(tmp, sizeof(tmp), "%s.tmp", o.addr_file);
            FILE *f = fopen(tmp, "w");
            if (!f || fprintf(f, "%s\n", addr) < 0 || fclose(f) || rename(tmp, o.addr_file)) {
                fprintf(stderr, "pme_perf: cannot write %s: %s\n", o.addr_file, strerror(errno));
                return 1;
            }
        }
        rc = server(&o);
        if (o.counters)
            print_counters("server");
        pme_ep_close(ep);
        return rc;
    }
    rc = pme_ep_add_peer(ep, o.peer, &peer);
    if (rc)
        die("peer address", rc);

    int do_pp = !strcmp(o.test, "pingpong") || !strcmp(o.test, "both");
    int do_bw = !strcmp(o.test, "stream") || !strcmp(o.test, "both");
    uint32_t seq = 1;
    const char *mode = cfg.wait_mode == PME_WAIT_SPIN ? "spin"
                       : cfg.wait_mode == PME_WAIT_BLOCK ? "block" : "auto";
    if (o.csv)
        printf("test,wait,size,value,unit\n");
    else
        printf("pme_perf client %s -> %s, mtu %u, device %s, wait %s\n", addr, o.peer, pme_ep_mtu(ep),
               pme_ep_device(ep), mode);
    /* One small exchange opens the connection before anything is timed. */
    pingpong(&(struct opts){.iters = 10, .warmup = 0, .verify = o.verify}, 8, &seq);
    for (int i = 0; i < nsizes && do_pp; i++) {
        double us = pingpong(&o, sizes[i], &seq);
        if (o.csv)
            printf("pingpong,%s,%llu,%.3f,us\n", mode, (unsigned long long)sizes[i], us);
        else
            printf("pingpong size %llu: half-RTT %.2f us\n", (unsigned long long)sizes[i], us);
        fflush(stdout);
    }
    for (int i = 0; i < nsizes && do_rate; i++) {
        double mps = msgrate(&o, sizes[i], &seq);
        if (o.csv)
            printf("msgrate,%s,%llu,%.4f,Mmsg/s\n", mode, (unsigned long long)sizes[i], mps);
        else
            printf("msgrate size %llu: %.4f million messages/s (windows of %d)\n",
                   (unsigned long long)sizes[i], mps, o.window);
        fflush(stdout);
    }
    for (int i = 0; i < nsizes && do_bw; i++) {
        double mbs = stream(&o, sizes[i], &seq);
        if (o.csv)
            printf("stream,%s,%llu,%.1f,MB/s\n", mode, (unsigned long long)sizes[i], mbs);
        else
            printf("stream size %llu: %.1f MB/s\n", (unsigned long long)sizes[i], mbs);
        fflush(stdout);
    }
    send_msg(OP_BYE, seq, 0, 0);
    reap_sends(0, NULL, NULL);
    rc = pme_ep_flush(ep, 5000);
    if (rc)
        die("flush", rc);
    if (o.verify)
        printf("all data verified\n");
    struct pme_counters cn;
    pme_ep_counters(ep, &cn);
    if (!o.csv)
        printf("frames out %llu, in %llu, retransmitted %llu, dropped corrupt %llu\n",
               (unsigned long long)cn.tx_frames, (unsigned long long)cn.rx_frames,
               (unsigned long long)cn.retransmits, (unsigned long long)cn.drop_crc);
    if (o.counters)
        print_counters("client");
    pme_ep_close(ep);
    return 0;
}
