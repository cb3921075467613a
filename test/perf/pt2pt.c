// SPDX-License-Identifier: BSD-3-Clause
/*
 * pt2pt.c - point-to-point benchmarks: pingpong, bw, bibw, msgrate.
 *
 * pingpong, bw and bibw run between rank 0 and rank N/2 (with hydra's block placement
 * and one or more ranks per node, on different nodes); the other ranks wait.
 * msgrate pairs rank i with rank i + N/2 for every i < N/2.
 */
#include "mpibench.h"

#include <stdlib.h>
#include <string.h>

#define TAG_DATA 11
#define TAG_ACK 12

struct p2p {
    int peer; /* the other rank of this rank's pair, or -1 */
    int sender; /* bw, msgrate: this rank sends the data */
    int window;
    unsigned char *sbuf, *rbuf; /* rbuf: window receive slots (pingpong: one) */
    unsigned char *expect; /* what one received message must hold */
    MPI_Request *req;
    uint64_t stamp;
    long errors;
};

static uint64_t data_seed(size_t size, int from)
{
    return ((uint64_t)size << 8) ^ (uint64_t)(from + 1) * 0x1000193u;
}

/* Common setup: the pair, buffers, the expected message. */
static int p2p_setup(struct bench_ctx *c, int all_pairs, int windowed)
{
    struct p2p *p = calloc(1, sizeof(*p));
    c->state = p;
    int half = c->nranks / 2;
    p->peer = -1;
    if (all_pairs) {
        if (c->rank < half)
            p->peer = c->rank + half, p->sender = 1;
        else if (c->rank < 2 * half)
            p->peer = c->rank - half;
    } else {
        p->peer = bench_pair_peer(c);
        p->sender = c->rank == 0;
    }
    c->active = p->peer >= 0;
    p->window = windowed ? bench_window(c) : 1;
    if (!c->active)
        return 0;
    p->sbuf = bench_alloc(c->size);
    pattern_fill(p->sbuf, c->size, data_seed(c->size, c->rank));
    p->rbuf = bench_alloc((size_t)p->window * c->size);
    p->expect = bench_alloc(c->size);
    pattern_fill(p->expect, c->size, data_seed(c->size, p->peer));
    p->req = calloc((size_t)(2 * p->window), sizeof(MPI_Request));
    return 0;
}

static void p2p_teardown(struct bench_ctx *c)
{
    struct p2p *p = c->state;
    if (!p)
        return;
    bench_free(p->sbuf);
    bench_free(p->rbuf);
    bench_free(p->expect);
    free(p->req);
    free(p);
    c->state = NULL;
}

/* Clear the receive slots so that verify() sees only the measured run's data. */
static void p2p_prepare(struct bench_ctx *c)
{
    struct p2p *p = c->state;
    if (c->active)
        memset(p->rbuf, 0, (size_t)p->window * c->size);
}

/* Every receive slot must hold the peer's message. */
static long slots_verify(struct bench_ctx *c)
{
    struct p2p *p = c->state;
    long errors = p->errors;
    if (!c->active)
        return errors;
    for (int w = 0; w < p->window; w++) {
        unsigned char *slot = p->rbuf + (size_t)w * c->size;
        if (memcmp(slot, p->expect, c->size) != 0)
            errors += pattern_check(slot, c->size, data_seed(c->size, p->peer), "receive slot");
    }
    return errors;
}

/* ------------------------------------------------------------------ pingpong */

static int pingpong_setup(struct bench_ctx *c)
{
    int rc = p2p_setup(c, 0, 0);
    c->bytes_per_iter = 2.0 * (double)c->size;
    c->ops_per_iter = 2; /* the value is half a round trip */
    return rc;
}

/* Rank 0 sends and receives into its own buffer; the peer echoes what it received.
 * Every check_every round trips (and on the last) rank 0 stamps a fresh number into
 * its message, clears its receive buffer, and compares the echo with what it sent. */
static double pingpong_run(struct bench_ctx *c, long iters)
{
    struct p2p *p = c->state;
    if (!c->active)
        return 0;
    MPI_Status st;
    double t0 = MPI_Wtime();
    if (p->sender) {
        for (long i = 0; i < iters; i++) {
            int check = (i + 1) % c->opts->check_every == 0 || i == iters - 1;
            if (check) {
                p->stamp++;
                if (c->size >= sizeof(p->stamp))
                    memcpy(p->sbuf, &p->stamp, sizeof(p->stamp));
                memset(p->rbuf, 0, c->size);
            }
            MPI_Send(p->sbuf, (int)c->size, MPI_BYTE, p->peer, TAG_DATA, c->comm);
            MPI_Recv(p->rbuf, (int)c->size, MPI_BYTE, p->peer, TAG_DATA, c->comm, &st);
            if (check) {
                int n;
                MPI_Get_count(&st, MPI_BYTE, &n);
                if ((size_t)n != c->size) {
                    bench_complain("pingpong %zu: echo of %d bytes", c->size, n);
                    p->errors++;
                } else if (memcmp(p->rbuf, p->sbuf, c->size) != 0) {
                    bench_complain("pingpong %zu: echo differs from the message", c->size);
                    p->errors++;
                }
            }
        }
    } else {
        for (long i = 0; i < iters; i++) {
            MPI_Recv(p->rbuf, (int)c->size, MPI_BYTE, p->peer, TAG_DATA, c->comm, &st);
            MPI_Send(p->rbuf, (int)c->size, MPI_BYTE, p->peer, TAG_DATA, c->comm);
        }
    }
    return MPI_Wtime() - t0;
}

static long pingpong_verify(struct bench_ctx *c)
{
    struct p2p *p = c->state;
    return c->active ? p->errors : 0;
}

const struct bench bench_pingpong = {
    .name = "pingpong",
    .kind = KIND_LATENCY,
    .unit = "us",
    .sizes = "0..4m",
    .message_sizes = 1,
    .what = "half round trip, blocking send/recv between rank 0 and rank N/2",
    .setup = pingpong_setup,
    .run = pingpong_run,
    .verify = pingpong_verify,
    .teardown = p2p_teardown,
};

/* ------------------------------------------------------------------ bw, msgrate */

/* The sender posts a window of nonblocking sends of one buffer and waits for them and
 * for a zero-byte acknowledgement; the receiver posts a window of nonblocking receives
 * into distinct slots, waits, and acknowledges. */
static double window_run(struct bench_ctx *c, long iters)
{
    struct p2p *p = c->state;
    if (!c->active)
        return 0;
    int n = (int)c->size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (p->sender) {
            for (int w = 0; w < p->window; w++)
                MPI_Isend(p->sbuf, n, MPI_BYTE, p->peer, TAG_DATA, c->comm, &p->req[w]);
            MPI_Waitall(p->window, p->req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, p->peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < p->window; w++)
                MPI_Irecv(p->rbuf + (size_t)w * c->size, n, MPI_BYTE, p->peer, TAG_DATA, c->comm,
                          &p->req[w]);
            MPI_Waitall(p->window, p->req, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, p->peer, TAG_ACK, c->comm);
        }
    }
    return MPI_Wtime() - t0;
}

static long receiver_verify(struct bench_ctx *c)
{
    struct p2p *p = c->state;
    if (!c->active || p->sender)
        return 0;
    return slots_verify(c);
}

/* Windowed tests: `streams` windows of messages are in flight per iteration (one per
 * direction and pair), which sets the bytes and messages an iteration moves. */
static int windowed_setup(struct bench_ctx *c, int all_pairs, double streams)
{
    int rc = p2p_setup(c, all_pairs, 1);
    struct p2p *p = c->state;
    c->ops_per_iter = streams * p->window;
    c->bytes_per_iter = c->ops_per_iter * (double)c->size;
    return rc;
}

static int bw_setup(struct bench_ctx *c)
{
    return windowed_setup(c, 0, 1);
}

const struct bench bench_bw = {
    .name = "bw",
    .kind = KIND_BANDWIDTH,
    .unit = "MB/s",
    .sizes = "0..4m",
    .message_sizes = 1,
    .what = "one-way bandwidth, windows of isend/irecv (-w, default 64), rank 0 to N/2",
    .setup = bw_setup,
    .run = window_run,
    .prepare = p2p_prepare,
    .verify = receiver_verify,
    .teardown = p2p_teardown,
};

static int msgrate_setup(struct bench_ctx *c)
{
    return windowed_setup(c, 1, c->nranks / 2);
}

const struct bench bench_msgrate = {
    .name = "msgrate",
    .kind = KIND_RATE,
    .unit = "Mmsg/s",
    .sizes = "0..4m",
    .message_sizes = 1,
    .what = "messages per second summed over the pairs (i, i+N/2), windows as bw",
    .setup = msgrate_setup,
    .run = window_run,
    .prepare = p2p_prepare,
    .verify = receiver_verify,
    .teardown = p2p_teardown,
};

/* ------------------------------------------------------------------ bibw */

static int bibw_setup(struct bench_ctx *c)
{
    return windowed_setup(c, 0, 2);
}

/* Both ranks post a window of receives and a window of sends, then wait for all. */
static double bibw_run(struct bench_ctx *c, long iters)
{
    struct p2p *p = c->state;
    if (!c->active)
        return 0;
    int n = (int)c->size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        for (int w = 0; w < p->window; w++)
            MPI_Irecv(p->rbuf + (size_t)w * c->size, n, MPI_BYTE, p->peer, TAG_DATA, c->comm,
                      &p->req[w]);
        for (int w = 0; w < p->window; w++)
            MPI_Isend(p->sbuf, n, MPI_BYTE, p->peer, TAG_DATA, c->comm, &p->req[p->window + w]);
        MPI_Waitall(2 * p->window, p->req, MPI_STATUSES_IGNORE);
    }
    return MPI_Wtime() - t0;
}

const struct bench bench_bibw = {
    .name = "bibw",
    .kind = KIND_BANDWIDTH,
    .unit = "MB/s",
    .sizes = "0..4m",
    .message_sizes = 1,
    .what = "bidirectional bandwidth (both directions summed), windows as bw",
    .setup = bibw_setup,
    .run = bibw_run,
    .prepare = p2p_prepare,
    .verify = slots_verify,
    .teardown = p2p_teardown,
};
