// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_scale.c - memory scales like PM's: receive buffering is one pool per endpoint and
 * per-peer state is small and fixed. One hub endpoint talks with 4096 peers; its heap
 * grows by no more than the stated per-peer bytes per peer, and its receive pool is
 * the same budget with 4096 peers as with one.
 * pme-test: tier=default cpu=100 time=4
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pme_test.h"

enum { NPEERS = 4096 };

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

int main(void)
{
    size_t per_peer = pme_peer_state_bytes();
    printf("per-peer state: %zu bytes (protocol state and counters)\n", per_peer);
    CHECK(per_peer <= 512, "per-peer state grew to %zu bytes", per_peer);

    struct pme_loop_wire *wire;
    CHECK_OK(pme_loop_wire_create(NULL, &wire));
    struct pme_config cfg;
    lp_config(&cfg, wire);
    cfg.rx_pool_bytes = 4u << 20;
    char err[256], addr[PME_ADDR_MAX];
    pme_ep_t *hub;
    CHECK(pme_ep_open(&cfg, &hub, err, sizeof(err)) == 0, "hub: %s", err);

    /* 1. Registering 4096 peers costs per-peer state only. */
    size_t before = heap_in_use();
    static pme_peer_t ids[NPEERS];
    for (int i = 0; i < NPEERS; i++) {
        snprintf(addr, sizeof(addr), "pme3:0600%02x%02x/%d@06:00:%02x:%02x:00:01", i >> 8, i & 255, i,
                 i >> 8, i & 255);
        CHECK_OK(pme_ep_add_peer(hub, addr, &ids[i]));
    }
    size_t grew = heap_in_use() - before;
    printf("4096 registered peers: heap +%zu bytes (%.0f per peer)\n", grew,
           (double)grew / NPEERS);
    CHECK(grew <= (size_t)NPEERS * per_peer * 5 / 4,
          "heap grew %zu bytes for %d peers (limit %zu)", grew, NPEERS, NPEERS * per_peer * 5 / 4);
    pme_ep_close(hub);

    /* 2. Real traffic: 4096 endpoints each send one message to the hub and get one
     * back; all arrive, and the hub's pool is free again afterwards. */
    cfg.rto_us = 50000;
    /* A round over 4097 endpoints takes long on a loaded machine; this test is about
     * scale, not about declaring slow peers dead. */
    cfg.peer_timeout_ms = 600000;
    cfg.expected_peers = NPEERS; /* the hub shares its eager credit among all */
    CHECK(pme_ep_open(&cfg, &hub, err, sizeof(err)) == 0, "hub: %s", err);
    CHECK_OK(pme_ep_addr(hub, addr, sizeof(addr)));
    /* Under valgrind (PME_TEST_QUICK) the traffic part uses fewer endpoints. */
    int nep = getenv("PME_TEST_QUICK") ? 256 : NPEERS;
    pme_ep_t **eps = calloc(NPEERS, sizeof(*eps));
    static pme_peer_t to_hub[NPEERS];
    struct pme_config pcfg = cfg;
    pcfg.rx_pool_bytes = 64u << 10;
    pcfg.credit_bytes = 16u << 10;
    pcfg.expected_peers = 1;
    /* One thread serves 4097 endpoints in turn, so a round trip takes a whole round:
     * retransmission timers sized for that, as they would be for a slow network. */
    pcfg.rto_us = 50000;
    for (int i = 0; i < nep; i++) {
        CHECK(pme_ep_open(&pcfg, &eps[i], err, sizeof(err)) == 0, "peer %d: %s", i, err);
        CHECK_OK(pme_ep_add_peer(eps[i], addr, &to_hub[i]));
        uint32_t v = (uint32_t)i;
        struct iovec iov = {&v, sizeof(v)};
        CHECK(pme_send(eps[i], to_hub[i], NULL, 0, &iov, 1, PME_SEND_NO_EVENT, NULL) == PME_DONE,
              "send from %d", i);
    }
    static uint8_t seen[NPEERS];
    static uint32_t offered[NPEERS + 1];
    int got = 0, replies = 0, offers = 0;
    for (int round = 0; round < 2000 && (got < nep || replies < nep); round++) {
        for (int i = 0; i < nep; i++) {
            struct pme_event ev;
            pme_progress(eps[i]);
            while (pme_next_event(eps[i], &ev)) {
                CHECK(ev.type == PME_EV_MSG && ev.data_len == 4, "peer %d got %d (%s)", i, ev.type, pme_ep_last_error(eps[i]));
                uint32_t v;
                memcpy(&v, ev.data, 4);
                CHECK(v == (uint32_t)i + 1000000, "reply to %d carries %u", i, v);
                replies++;
                pme_event_release(eps[i], &ev);
            }
        }
        struct pme_event ev;
        for (int k = 0; k < 64; k++)
            pme_progress(hub);
        while (pme_next_event(hub, &ev)) {
            uint32_t v;
            if (ev.type == PME_EV_RTS) {
                /* a peer the hub could give no eager credit offers its message */
                CHECK(ev.total == 4, "offer of %llu bytes", (unsigned long long)ev.total);
                struct iovec iov = {&offered[ev.peer], 4};
                CHECK_OK(pme_rndv_accept(hub, ev.rndv, &iov, 1, &offered[ev.peer]));
                continue;
            }
            if (ev.type == PME_EV_RECV_DONE) {
                CHECK(ev.status == PME_OK, "offer failed");
                v = *(uint32_t *)ev.ctx;
                offers++;
            } else {
                CHECK(ev.type == PME_EV_MSG && ev.data_len == 4, "hub got event %d", ev.type);
                memcpy(&v, ev.data, 4);
            }
            CHECK(v < NPEERS && !seen[v], "message %u twice or bogus", v);
            seen[v] = 1;
            got++;
            uint32_t r = v + 1000000;
            struct iovec iov = {&r, sizeof(r)};
            CHECK(pme_send(hub, ev.peer, NULL, 0, &iov, 1, PME_SEND_NO_EVENT, NULL) == PME_DONE,
                  "reply");
            pme_event_release(hub, &ev);
        }
    }
    CHECK(got == nep && replies == nep, "hub got %d, replies %d of %d", got, replies, nep);
    CHECK(offers == 0, "%d peers got no eager credit although it was shared", offers);
    struct pme_counters c;
    pme_ep_counters(hub, &c);
    printf("hub exchanged with %d peers (%d by rendezvous for want of credit): %llu frames in, "
           "%llu out, %llu refused for buffers\n",
           nep, offers, (unsigned long long)c.rx_frames, (unsigned long long)c.tx_frames,
           (unsigned long long)c.drop_no_buffer);
    size_t used, reserved, size;
    pme_ep_pool(hub, &used, &reserved, &size);
    printf("hub pool after the exchange: %zu bytes in use, %zu reserved as credit, of %zu\n",
           used, reserved, size);
    CHECK(used == 0, "the hub still holds %zu bytes of received messages", used);
    CHECK(reserved <= size * 3 / 4, "credit reserved %zu of a %zu pool", reserved, size);
    for (int i = 0; i < nep; i++)
        pme_ep_close(eps[i]);
    free(eps);
    pme_ep_close(hub);
    pme_loop_wire_destroy(wire);
    printf("scales to %d peers\n", nep);
    return 0;
}
