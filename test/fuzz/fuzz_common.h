/*
 * fuzz_common.h - what the frame fuzzer (fuzz_rx.c) and its corpus maker (mkcorpus.c)
 * share: the endpoint under test, set up the same way for every input, and how the
 * caller's side answers its events. An input is a mode byte, then frames, each as a
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
#define FZ_SENDS 0x02    /* the endpoint sends an eager and a rendezvous message first */

/* The peer the frames pretend to come from; the endpoint knows it. */
static const uint8_t fz_peer_mac[6] = {0x02, 0xf0, 0x22, 0x00, 0x00, 0x01};
#define FZ_PEER_EP 7
#define FZ_PEER_NODE 0x0f000001u
static const uint8_t fz_secret[PME_SECRET_BYTES] = {0x66, 0x75, 0x7a, 0x7a, 0x2d, 0x73, 0x65, 0x63,
                                                    0x72, 0x65, 0x74, 0x2d, 0x70, 0x6d, 0x65, 0x21};

struct fz {
    struct pme_loop_wire *wire;
    pme_ep_t *ep;
    pme_peer_t peer;
    unsigned msgs, offers, landed; /* events seen (mkcorpus checks its scenarios) */
    uint8_t rbuf[1 << 20];      /* where accepted rendezvous land */
    uint8_t sbuf[200000];       /* what the endpoint sends */
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
    if (mode & FZ_SENDS) {
        struct iovec small = {z->sbuf, 100}, big = {z->sbuf, sizeof(z->sbuf)};
        pme_send(z->ep, z->peer, "e", 1, &small, 1, PME_SEND_NO_EVENT, NULL);
        pme_send(z->ep, z->peer, "r", 1, &big, 1, 0, NULL);
    }
    return 0;
}

/* The caller's side: take every event; accept every offer (into a buffer of a size
 * that depends on the offer, to reach truncation too). */
static inline void fz_events(struct fz *z)
{
    struct pme_event ev;
    pme_progress(z->ep);
    while (pme_next_event(z->ep, &ev)) {
        if (ev.type == PME_EV_MSG) {
            z->msgs++;
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
}

static inline void fz_close(struct fz *z)
{
    pme_ep_close(z->ep);
    pme_loop_wire_destroy(z->wire);
}

#endif
