/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.h - drive a sender and a receiver endpoint on one loop wire through a stream
 * of messages, checking that each arrives once, in order, intact.
 */
#ifndef PME_LOOP_HARNESS_H
#define PME_LOOP_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "pme.h"

struct lp_pair {
    struct pme_loop_wire *wire;
    pme_ep_t *a, *b;
    pme_peer_t a_to_b, b_to_a;
};

/* The job secret of every loop test endpoint: frames are authenticated (PME_AUTH_MAC)
 * unless a test asks otherwise. */
extern const uint8_t lp_secret[PME_SECRET_BYTES];

/* The job key of every loop test endpoint (lp_config). */
#define LP_JOB_KEY 0x7e57

/* Loop-device config with test-friendly timers. */
void lp_config(struct pme_config *cfg, struct pme_loop_wire *wire);
void lp_open(struct lp_pair *lp, const struct pme_loop_faults *faults,
             void (*tweak)(struct pme_config *cfg));
void lp_close(struct lp_pair *lp);
/* A loop pair (lp_open, with tweak) whose endpoint a knows a scripted peer fp
 * (fakepeer.h) of MAC mac, endpoint ep_id on node, with the loop endpoints' secret;
 * returns a's handle of it. */
struct fakepeer;
pme_peer_t lp_open_with_fake(struct lp_pair *lp, struct fakepeer *fp, const uint8_t mac[6],
                             uint16_t ep_id, uint32_t node,
                             void (*tweak)(struct pme_config *cfg));

struct lp_stream {
    size_t count;            /* messages */
    const size_t *sizes;     /* data bytes of each (cycled) */
    size_t nsizes;
    unsigned outstanding;    /* messages in flight at most */
    double timeout_s;        /* wall clock for the whole stream */
    int hold_events;         /* receiver keeps this many eager events before releasing */
    uint64_t *bytes_out;     /* optional: data bytes delivered */
    /* optional: called on every pass with how many messages arrived so far (a test
     * cuts a link mid-stream) */
    void (*each_pass)(struct lp_pair *lp, uint64_t received, void *arg);
    void *arg;
};

/* Send the stream from a to b; returns 0 when everything arrived intact and in order,
 * exits the test with a message otherwise. */
int lp_run_stream(struct lp_pair *lp, const struct lp_stream *s);

/* Progress both endpoints once. */
void lp_progress(struct lp_pair *lp);

void lp_print_counters(const char *label, pme_ep_t *ep);

/* Progress both until b gets an offer (at most `passes` times, -1: for ever) and accept
 * it into iov; returns 1 when it did. Any other event first is a test failure. */
int lp_accept_offer(struct lp_pair *lp, const struct iovec *iov, int iovcnt, int passes);

#endif
