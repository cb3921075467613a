/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dev.h - the device ops table: how pme_core reaches a wire.
 *
 * A device sends and receives whole Ethernet frames of PME's EtherType for one
 * endpoint. The devices: ring (raw frames from user space through a packet ring PME
 * maps and reads itself, the default), pcap (the same through libpcap), loop (an
 * in-process wire for tests, with fault injection) and kernel (/dev/pme of kmod/).
 */
#ifndef PME_DEV_H
#define PME_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "pme.h"
#include "wire.h"

/* Called for each received frame; the bytes are valid only during the call. */
typedef void (*pme_rx_fn)(void *arg, const uint8_t *frame, size_t len);

struct pme_dev;

/* A frame sent (struct pme_dev_frame) and a payload placed (struct pme_dev_placed) are
 * in wire.h: the wire layer below reads them too. */

/* Who the endpoint is, for a device that stamps or filters on it (the kernel device
 * writes the source of every frame and keeps other jobs' and nodes' frames away). */
struct pme_dev_who {
    uint16_t ep_id;
    uint32_t node;          /* 0: not known before the device gives its MAC */
    uint32_t job_id;
    uint32_t incarnation;
    /* How the job checks its frames (PME_AUTH_*) and its MAC key (PME_AUTH_MAC): the
     * kernel device lets its driver answer liveness probes and say goodbye with them. */
    int auth;
    uint8_t mac_key[16];
};

struct pme_dev_ops {
    const char *name;
    /* Open for endpoint ep_id; fill mac and mtu. On failure write err. */
    int (*open)(struct pme_dev **dev, const struct pme_config *cfg, const struct pme_dev_who *who,
                char *err, size_t errlen);
    void (*close)(struct pme_dev *dev);
    /* Deliver up to max waiting frames to fn; return how many, or a pme_status. */
    int (*poll)(struct pme_dev *dev, int max, pme_rx_fn fn, void *arg);
    /* Send frames in order; return how many went out (0 when the device is full:
     * try again after waiting for POLLOUT), or a pme_status. */
    int (*send)(struct pme_dev *dev, const struct pme_dev_frame *frames, int n);
    /* A descriptor that polls readable when frames wait, -1 if none. */
    int (*fd)(struct pme_dev *dev);
    /* Optional: the descriptor to poll writable before sleeping, -1 for none: when the
     * device was full (`blocked`), the one that polls writable once it has room, and
     * when it holds frames the kernel has not taken yet, the one that polls writable
     * once the kernel can take them. Without it: fd, when blocked. */
    int (*tx_fd)(struct pme_dev *dev, bool blocked);
    /* Frames the device lost because its buffer was full (0 if unknown). */
    uint64_t (*rx_overruns)(struct pme_dev *dev);

    /* Zero copy of rendezvous data, NULL where the device has none (only the kernel
     * device has it). They fail harmlessly: the data is then copied as always.
     * zc_send_begin: until the matching zc_send_end, which comes after the peer
     * acknowledged the last frame, an RDATA frame whose payload (one iovec entry) lies
     * in [buf, buf + len) goes from the buffer's own pages, not copied. */
    int (*zc_send_begin)(struct pme_dev *dev, const void *buf, size_t len);
    void (*zc_send_end)(struct pme_dev *dev, const void *buf, size_t len);
    /* zc_recv_begin: the payload of RDATA frames of rendezvous `key` from (node, ep)
     * is written at its offset into buf (len bytes expected) by the device itself;
     * such a frame comes to the receive callback with its headers only, dev->placed
     * saying where its payload is. After zc_recv_end nothing writes into buf. */
    int (*zc_recv_begin)(struct pme_dev *dev, uint32_t key, uint32_t node, uint16_t ep,
                         void *buf, size_t len);
    void (*zc_recv_end)(struct pme_dev *dev, uint32_t key);
    /* Optional, called every PME_DEV_RECHECK_NS or so while the endpoint makes progress:
     * look again at what may change under the device (the ring device: whether the
     * interface's egress still lets it bypass the queueing discipline). */
    void (*recheck)(struct pme_dev *dev);
};
#define PME_DEV_RECHECK_NS 1000000000ull

/* Every device embeds this first. */
struct pme_dev {
    const struct pme_dev_ops *ops;
    uint8_t mac[6];
    unsigned mtu;
    /* Set by the device only while the receive callback runs on a frame whose payload
     * it placed (zc_recv_begin); NULL otherwise. */
    const struct pme_dev_placed *placed;
};

/* The descriptor that polls writable when the device can take frames again (see
 * tx_fd; `blocked`: it refused some), or -1 when there is none to wait on. */
static inline int pme_dev_room_fd(struct pme_dev *dev, bool blocked)
{
    if (dev->ops->tx_fd)
        return dev->ops->tx_fd(dev, blocked);
    return blocked ? dev->ops->fd(dev) : -1;
}

/* The loop device's test hook: cut it from its wire (its link reads as down). */
void pme_dev_loop_cut(struct pme_dev *dev);
int pme_dev_loop_is_cut(const struct pme_dev *dev);

extern const struct pme_dev_ops pme_dev_ring_ops;
extern const struct pme_dev_ops pme_dev_pcap_ops;
extern const struct pme_dev_ops pme_dev_loop_ops;
extern const struct pme_dev_ops pme_dev_kernel_ops;

/* The device an endpoint opens when the configuration names none: "auto" chooses. */
#define PME_DEV_AUTO "auto"
#define PME_DEV_DEFAULT PME_DEV_AUTO

/* The device of that name, or NULL ("auto" is not a device: see pme_dev_choose). */
const struct pme_dev_ops *pme_dev_find(const char *name);
/* Whether name is a device or "auto". */
int pme_dev_known(const char *name);
/* The device to open for name: itself, or for "auto" the kernel device when
 * pme_dev_kernel_usable(), else the ring. NULL for an unknown name. */
const struct pme_dev_ops *pme_dev_choose(const char *name);
/* /dev/pme exists and this process may open it for reading and writing. */
int pme_dev_kernel_usable(void);

#endif
