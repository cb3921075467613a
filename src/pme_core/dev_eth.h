/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dev_eth.h - what the two raw-frame devices (libpcap's and the packet ring) share:
 * checking the interface, the kernel-side frame filter, gathered sends and the
 * messages a user can act on.
 */
#ifndef PME_DEV_ETH_H
#define PME_DEV_ETH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev.h"
#include "pme_wire.h"

/* The interface's MAC and MTU; fails with a message naming the fix when the interface
 * is missing, down or not Ethernet. */
int pme_eth_probe(const char *ifname, uint8_t mac[6], unsigned *mtu, char *err,
                  size_t errlen);

/* The libpcap filter expression that passes only frames of PME's EtherType for this
 * interface's MAC and this endpoint. */
void pme_eth_filter_expr(char *out, size_t outlen, uint16_t ethertype, const uint8_t mac[6],
                         uint16_t ep_id);

/* A device of `size` bytes (struct pme_dev first, the rest zeroed) for ifname, with its
 * ops, MAC and MTU filled in; NULL with *rc and err set when the interface cannot be used
 * or memory is short. */
void *pme_eth_dev_new(size_t size, const struct pme_dev_ops *ops, const char *ifname,
                      int *rc, char *err, size_t errlen);

/* How many bytes of a frame to keep: the largest frame of the MTU, and a VLAN tag. */
#define PME_ETH_SNAPLEN(mtu) ((mtu) + PME_ETH_HLEN + 4u)

/* A packet socket from PME's broker (src/tools/pme_rawsock.c) for a process that may
 * not open one: bound to ifname, passing only frames of ethertype for endpoint ep_id at
 * the interface's MAC, its filter locked. The broker is PME_RAWSOCK if set (0: none),
 * else pme_rawsock next to PME's installed tools, else on PATH. Returns the
 * descriptor, or -1 with why saying what became of the broker. */
int pme_eth_broker_socket(const char *ifname, uint16_t ethertype, uint16_t ep_id,
                          char *why, size_t whylen);

/* The error for a process without the right to raw frames on ifname: the ways to get
 * it, best first, each with its risk; why says what became of the broker. The second
 * form is for a device that cannot use the broker (pcap). */
int pme_eth_perm_error_why(const char *ifname, const char *why, char *err, size_t errlen);
int pme_eth_perm_error(const char *ifname, char *err, size_t errlen);

/* Whether ifname can carry frames: up, with a carrier. If not, state says why ("gone",
 * "down", "up without carrier"); an interface that cannot be asked counts as up. */
bool pme_eth_link_up(const char *ifname, char *state, size_t len);

/* The error for an interface that is down. */
int pme_eth_down_error(const char *ifname, char *err, size_t errlen);

/* Send frames on a packet socket bound to the interface, gathered, without blocking:
 * returns how many went out, 0 when the device is full, or PME_ERR_DEVICE. */
int pme_eth_send(int fd, const struct pme_dev_frame *frames, int n);

/* The shape of a packet ring (RX or TX) of about `bytes` (at most 1 GiB, at least two
 * blocks) of slots of frame_size bytes: blocks of a power of two bytes, at least 64 KiB
 * and 8 slots. */
struct pme_eth_ring_shape {
    size_t block_size;
    unsigned frames_per_block, nblocks, nframes;
};
struct pme_eth_ring_shape pme_eth_ring_shape(unsigned frame_size, size_t bytes);

/* dev_egress.c: whether frames may skip ifname's egress path (PACKET_QDISC_BYPASS):
 * only the kernel's default queueing disciplines there, no shaper, no egress filter. */
bool pme_eth_egress_plain(const char *ifname);

/* dev_txring.c: a packet TX ring past the queueing discipline, on a socket of its own
 * bound to ifname, for frames of up to snaplen bytes; NULL with err saying why not. */
struct pme_txring;
struct pme_txring *pme_txring_open(const char *ifname, size_t bytes, unsigned snaplen,
                                   char *err, size_t errlen);
void pme_txring_close(struct pme_txring *t);
/* Polls writable when a full ring has room again. */
int pme_txring_fd(const struct pme_txring *t);
/* Copy frames into the ring and have the kernel send them: returns how many it took,
 * 0 when the ring is full, or a pme_status. */
int pme_txring_send(struct pme_txring *t, const struct pme_dev_frame *frames, int n);
/* Whether frames the kernel left in the ring at the last send wait (its send buffer
 * was full), and send them. */
bool pme_txring_pending(const struct pme_txring *t);
void pme_txring_kick_pending(struct pme_txring *t);

#endif
