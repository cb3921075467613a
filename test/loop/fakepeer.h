/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fakepeer.h - a scripted peer for tests: a MAC on a loop wire that is not an endpoint
 * but speaks PME frames the test writes by hand, to reach states an honest peer never
 * produces (forged, stale, hostile or merely unusual frames) and to read what the
 * endpoint under test sends.
 */
#ifndef PME_FAKEPEER_H
#define PME_FAKEPEER_H

#include <stddef.h>
#include <stdint.h>

#include "pme.h"
#include "wire.h"

struct fakepeer {
    struct pme_loop_wire *wire;
    struct pme_wire_self self;      /* mac, ep, node, incarnation of the fake peer */
    struct pme_wire_keys keys;
    uint64_t nonce;
    /* the endpoint under test, as the fake peer addresses it */
    uint8_t ep_mac[6];
    uint16_t ep_ep_id;
    uint32_t ep_node;
    uint32_t ep_incarnation;        /* learnt from its HELLO */
    uint64_t ep_chal;               /* the challenge of its last HELLO (fp_handshake) */
    /* sequence state of the fake peer's own sending direction */
    uint32_t snd_nxt;
    /* what it last saw of the endpoint's direction */
    uint32_t rcv_nxt;
};

/* One frame the endpoint sent to the fake peer, decoded. */
struct fp_frame {
    uint8_t raw[70000];
    size_t len;
    int type;
    uint16_t flags, aux;
    uint32_t seq, ack, credit, incarnation;
    const uint8_t *sub;     /* the bytes after the PME header */
    size_t sublen;
};

/* A fake peer with MAC `mac`, endpoint id `ep_id` and node `node` facing endpoint `ep`,
 * sealing its frames with `secret` (a MAC) or, when NULL, a CRC under job id `job_key`. */
void fp_init(struct fakepeer *fp, struct pme_loop_wire *wire, pme_ep_t *ep,
             const uint8_t mac[6], uint16_t ep_id, uint32_t node, const uint8_t *secret,
             uint32_t job_key);
/* Its address, for pme_ep_add_peer. */
void fp_addr(const struct fakepeer *fp, char *buf, size_t len);

/* Send a frame of `type` to the endpoint; sub/sublen are the bytes after the header.
 * Sequenced types take fp->snd_nxt (and advance it) unless `seq` overrides
 * (FP_SEQ_AUTO). ack/credit are sent with PME_F_ACK_VALID when `with_ack`. */
#define FP_SEQ_AUTO UINT64_MAX
void fp_send(struct fakepeer *fp, int type, uint64_t seq, int with_ack, uint32_t ack,
             uint32_t credit, uint16_t flags, uint16_t aux, const void *sub, size_t sublen);
/* The same with complete control over the frame's bytes: build, then let the test
 * spoil it, then inject. */
size_t fp_build(struct fakepeer *fp, uint8_t *buf, int type, uint32_t seq, int with_ack,
                uint32_t ack, uint32_t credit, uint16_t flags, uint16_t aux, const void *sub,
                size_t sublen);
void fp_seal(struct fakepeer *fp, uint8_t *frame, size_t len);
void fp_inject(struct fakepeer *fp, const uint8_t *frame, size_t len);

/* Take the oldest frame the endpoint sent to the fake peer; 0 if none. */
int fp_take(struct fakepeer *fp, struct fp_frame *f);
/* Take frames (progressing ep between looks) until one of `type` comes, for at most
 * `ms` milliseconds; 0 if none came. Frames of other types are dropped. */
int fp_expect(struct fakepeer *fp, pme_ep_t *ep, int type, struct fp_frame *f, int ms);

/* The HELLO or HELLO_ACK sub-header of the fake peer, its MAC listed as rail 0's (a
 * receiver learns NICs only from these lists): chal, echo, first_seq and max_frame as
 * given; returns its length (at most FP_HELLO_BYTES). */
#define FP_HELLO_BYTES (sizeof(struct pme_wire_hello) + 6)
size_t fp_hello(const struct fakepeer *fp, void *buf, uint64_t chal, uint64_t echo,
                uint32_t first_seq, uint16_t max_frame);
/* The fake peer's challenge in its HELLOs (any number but 0 will do). */
#define FP_CHAL 0xc0ffee5eed000001ull

/* Open both directions with the endpoint, which must have the fake peer as a peer and
 * be sending it something (its HELLO comes first): answers its HELLO, echoing its
 * challenge (which makes the endpoint believe in the fake peer), sends the fake peer's
 * own HELLO and consumes the endpoint's HELLO_ACK. `max_frame` is what the fake
 * peer announces; `grant` the credit it grants. */
void fp_handshake(struct fakepeer *fp, pme_ep_t *ep, uint16_t max_frame, uint32_t grant);

#endif
