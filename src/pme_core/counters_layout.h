/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counters_layout.h - the layout of an endpoint's counter file: the header, the
 * endpoint's and each interface's counters, then one record per peer. The peer table
 * (peers.c) and the link (link_*.c) write into it through ep->shm; counters.c creates
 * and maps the file (counters_shm.h: where it lives, who may read it); pme_info reads
 * it. Types and data only, no file handling, so that any layer may include it.
 */
#ifndef PME_COUNTERS_LAYOUT_H
#define PME_COUNTERS_LAYOUT_H

#include <stdint.h>

#include "pme.h"
#include "pme_internal.h"

#define PME_SHM_MAGIC 0x504d4543u /* "PMEC" */
#define PME_SHM_LAYOUT 7 /* 6: rx_held; 7: hello_challenged */
#define PME_SHM_MAX_PEERS PME_MAX_PEERS

struct pme_shm_peer {
    uint32_t node;
    uint16_t ep_id;
    uint8_t mac[6];
    struct pme_peer_counters c;
};

struct pme_counters_shm {
    uint32_t magic;
    uint32_t layout;
    int32_t pid;
    uint16_t ep_id;
    uint16_t ethertype;
    uint8_t mac[6];
    uint8_t auth;           /* enum pme_auth */
    uint8_t pad;
    uint32_t node;
    uint32_t job_id;
    uint32_t mtu;
    uint32_t npeers;
    uint64_t netns;
    char ifname[32];
    char device[16];
    uint64_t rx_pool_bytes, rx_used, rx_reserved, tx_used;
    uint32_t nifs;          /* interfaces the endpoint spans (ifname lists them) */
    uint32_t pad2;
    struct pme_iface_counters ifs[PME_MAX_IFACES]; /* frames per interface (rail) */
    uint8_t reserved[128];
    struct pme_counters ep;
    struct pme_shm_peer peers[];
};

/* Bytes of a counter file able to hold n peers. */
static inline uint64_t pme_shm_size(uint32_t npeers)
{
    return sizeof(struct pme_counters_shm) + (uint64_t)npeers * sizeof(struct pme_shm_peer);
}

/* The counters of peer idx, as the peer table creates it: the record names the peer. */
static inline struct pme_peer_counters *pme_shm_peer_slot(struct pme_counters_shm *shm,
                                                          uint32_t idx, uint32_t node,
                                                          uint16_t ep_id,
                                                          const uint8_t mac[6])
{
    struct pme_shm_peer *sp = &shm->peers[idx];
    sp->node = node;
    sp->ep_id = ep_id;
    for (int i = 0; i < 6; i++)
        sp->mac[i] = mac[i];
    __atomic_store_n(&shm->npeers, idx + 1, __ATOMIC_RELEASE);
    return &sp->c;
}

#endif
