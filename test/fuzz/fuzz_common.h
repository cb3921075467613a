/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_common.h - what the frame fuzzer (fuzz_rx.c) and its corpus maker (mkcorpus.c)
 * share: the endpoint under test, set up the same way for every input (it exposes a
 * window for one-sided requests, and in FZ_SENDS mode makes some of its own), and how
 * the caller's side answers its events. An input is a mode byte, then frames, each as a
 * two-byte big-endian length and the bytes, injected one by one into the endpoint.
 */
#ifndef PME_FUZZ_COMMON_H
#define PME_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pme.h"
#include "pme_wire.h"

void pme_fuzz_reset_random(void);

/* mode byte */
#define FZ_MAC 0x01      /* frames authenticated (else PME_AUTH_NONE: the parser's depths) */
#define FZ_SENDS 0x02    /* the endpoint sends an eager and a rendezvous message first,
                          * then one-sided requests (FZ_REQ_*) to the peer's window */

/* The peer the frames pretend to come from; the endpoint knows it. */
static const uint8_t fz_peer_mac[6] = {0x02, 0xf0, 0x22, 0x00, 0x00, 0x01};
#define FZ_PEER_EP 7
#define FZ_PEER_NODE 0x0f000001u
/* Keys and request ids are slot handles, the first of each table: the same every run. */
#define FZ_WIN_KEY 0x00100000u  /* the endpoint's window, and the peer's it names */
#define FZ_REQ_GET 0x00100000u  /* a get of 3000 bytes */
#define FZ_REQ_LOCK 0x00100001u /* an exclusive lock */
#define FZ_REQ_FETCH 0x00100002u /* a fetching sum of one int64 */
#define FZ_REQ_CAS 0x00100003u  /* a compare-and-swap of one uint32 */
static const uint8_t fz_secret[PME_SECRET_BYTES] = {0x66, 0x75, 0x7a, 0x7a, 0x2d, 0x73, 0x65, 0x63,
                                                    0x72, 0x65, 0x74, 0x2d, 0x70, 0x6d, 0x65, 0x21};

struct fz {
    struct pme_loop_wire *wire;
    pme_ep_t *ep;
    pme_peer_t peer;
    unsigned msgs, offers, landed; /* events seen (mkcorpus checks its scenarios) */
    uint8_t rbuf[1 << 20];      /* where accepted rendezvous land */
    uint8_t sbuf[200000];       /* what the endpoint sends */
    uint8_t win[8192];          /* the window it exposes */
    uint8_t gbuf[4096];         /* where the answers to its own requests land */
};

static inline int fz_open(struct fz *z, uint8_t mode)
{
    struct pme_config cfg;
    char err[256], addr[PME_ADDR_MAX];
    pme_fuzz_reset_random();
    z->msgs = z->offers = z->landed = 0;
    if (pme_loop_wire_create(NULL, &z->wire))
        return -1;
    pme_config_init(&cfg);
    cfg.device = "loop";
    cfg.loop_wire = z->wire;
    cfg.ep_id = 3;
    cfg.counters_shm = 0;
    cfg.rto_us = 100000; /* no retransmission noise within an input */
    cfg.rx_pool_bytes = 1 << 20;
    cfg.credit_bytes = 64 << 10;
    cfg.eager_max = 4096;
    cfg.auth = mode & FZ_MAC ? PME_AUTH_MAC : PME_AUTH_NONE;
    if (mode & FZ_MAC) {
        memcpy(cfg.secret, fz_secret, PME_SECRET_BYTES);
        cfg.secret_len = PME_SECRET_BYTES;
    }
    if (pme_ep_open(&cfg, &z->ep, err, sizeof(err))) {
        pme_loop_wire_destroy(z->wire);
        return -1;
    }
    snprintf(addr, sizeof(addr), "pme%d:%08x/%u@%02x:%02x:%02x:%02x:%02x:%02x", PME_WIRE_VERSION,
             FZ_PEER_NODE, FZ_PEER_EP, fz_peer_mac[0], fz_peer_mac[1], fz_peer_mac[2],
             fz_peer_mac[3], fz_peer_mac[4], fz_peer_mac[5]);
    pme_ep_add_peer(z->ep, addr, &z->peer);
    uint32_t key;
    pme_rma_expose(z->ep, z->win, sizeof(z->win), &key);
    if (mode & FZ_SENDS) {
        struct iovec small = {z->sbuf, 100}, big = {z->sbuf, sizeof(z->sbuf)};
        pme_send(z->ep, z->peer, "e", 1, &small, 1, PME_SEND_NO_EVENT, NULL);
        pme_send(z->ep, z->peer, "r", 1, &big, 1, 0, NULL);
        pme_rma_get(z->ep, z->peer, FZ_WIN_KEY, 0, z->gbuf, 3000, 0);
        pme_rma_lock(z->ep, z->peer, FZ_WIN_KEY, PME_RMA_LOCK_EXCL);
        pme_rma_acc(z->ep, z->peer, FZ_WIN_KEY, 8, z->sbuf, z->gbuf + 3000, 8, PME_AOP_SUM,
                    PME_DT_I64, 0);
        pme_rma_cas(z->ep, z->peer, FZ_WIN_KEY, 16, z->sbuf, z->sbuf + 4, z->gbuf + 3008,
                    PME_DT_U32, 0);
        pme_rma_put(z->ep, z->peer, FZ_WIN_KEY, 100, z->sbuf, 2000, 0);
    }
    return 0;
}

/* The caller's side: take every event; accept every offer (into a buffer of a size
 * that depends on the offer, to reach truncation too). */
static inline void fz_events(struct fz *z)
{
    /* Messages are released last to first, after the others: those of a bundle share
     * one buffer, which must outlive all but the last release. */
    struct pme_event ev, held[16];
    unsigned nheld = 0;
    pme_progress(z->ep);
    while (pme_next_event(z->ep, &ev)) {
        if (ev.type == PME_EV_MSG) {
            z->msgs++;
            if (nheld < sizeof(held) / sizeof(held[0]))
                held[nheld++] = ev;
            else
                pme_event_release(z->ep, &ev);
        } else if (ev.type == PME_EV_RECV_DONE) {
            z->landed++;
        } else if (ev.type == PME_EV_RTS) {
            z->offers++;
            size_t room = ev.total % 3 == 2 ? ev.total / 2 : sizeof(z->rbuf);
            struct iovec iov = {z->rbuf, room < sizeof(z->rbuf) ? room : sizeof(z->rbuf)};
            if (ev.total % 5 == 4)
                pme_rndv_discard(z->ep, ev.rndv);
            else
                pme_rndv_accept(z->ep, ev.rndv, &iov, 1, NULL);
        }
    }
    while (nheld)
        pme_event_release(z->ep, &held[--nheld]);
}

static inline void fz_close(struct fz *z)
{
    pme_rma_withdraw(z->ep, FZ_WIN_KEY);
    pme_ep_close(z->ep);
    pme_loop_wire_destroy(z->wire);
}

#endif
