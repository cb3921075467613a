/*
 * dev_eth.h - what the two raw-frame devices (libpcap's and the packet ring) share:
 * checking the interface, the kernel-side frame filter, gathered sends and the
 * messages a user can act on.
 */
#ifndef PME_DEV_ETH_H
#define PME_DEV_ETH_H

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

/* The errors for a user without the right to raw frames on ifname, and for an
 * interface that is down. */
int pme_eth_perm_error(const char *ifname, char *err, size_t errlen);
int pme_eth_down_error(const char *ifname, char *err, size_t errlen);

/* Send frames on a packet socket bound to the interface, gathered, without blocking:
 * returns how many went out, 0 when the device is full, or PME_ERR_DEVICE. */
int pme_eth_send(int fd, const struct pme_dev_frame *frames, int n);

#endif
