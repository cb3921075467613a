/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.h - the wire layer: everything that knows how a PME frame's bytes are laid out,
 * checked and sealed, in one place. It knows nothing of peers, queues or endpoints: it
 * is handed who "we" are (struct pme_wire_self) and the job's keys, and works on bytes.
 *
 * Sending: pme_wire_start writes the Ethernet and PME headers; the caller fills the
 * protocol fields and the sub-header; pme_wire_seal stamps the nonce and the check (MAC
 * or CRC) over the whole frame as gathered for the device.
 * Receiving: pme_wire_check decides, before anything else looks at a frame, whether it
 * is ours, intact and authentic; nothing changes state before it says PME_WIRE_OK.
 */
#ifndef PME_WIRE_LAYER_H
#define PME_WIRE_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "gmac.h"
#include "pme.h"
#include "pme_wire.h"

/* ---- frames as the devices (dev.h) send and receive them ---- */

/* One outgoing frame, gathered from iov (the first entry holds the Ethernet header).
 * Here, below the devices, because the wire layer seals it (and checks what a device
 * placed, below). */
#define PME_DEV_MAX_IOV 8
struct pme_dev_frame {
    struct iovec iov[PME_DEV_MAX_IOV];
    int iovcnt;
};

/* The payload of a received rendezvous frame that the device wrote straight into the
 * receiver's buffer (zero copy, see zc_recv_begin in dev.h). */
struct pme_dev_placed {
    const uint8_t *data;
    size_t len;
};

/* ---- sealing and checking ---- */

/* What this endpoint stamps on every frame it sends and expects on every frame it takes. */
struct pme_wire_self {
    uint8_t mac[6];
    uint16_t ep;
    uint32_t node;
    uint32_t incarnation;
    uint16_t ethertype_be;
    uint8_t hop_limit;
};

struct pme_wire_keys {
    int auth;
    uint32_t job_id;        /* public: derived from the secret when there is one */
    struct pme_gmac gmac;   /* auth == PME_AUTH_MAC */
};

#define PME_WIRE_SECRET_BYTES PME_SECRET_BYTES

/* Set up the keys: with a secret (PME_WIRE_SECRET_BYTES), the job id is derived from
 * it; without one, job_id is used as is and auth may not be PME_AUTH_MAC. */
int pme_wire_keys_init(struct pme_wire_keys *k, int auth, const uint8_t *secret,
                       size_t secret_len, uint32_t job_id, char *err, size_t errlen);
void pme_wire_keys_wipe(struct pme_wire_keys *k);

/* Write the Ethernet header and a PME header of `type` from self to (dst_node,
 * dst_ep) through dst_mac, with `len` bytes to follow it; every other field zero.
 * Returns the PME header inside buf. */
struct pme_wire_hdr *pme_wire_start(uint8_t *buf, const struct pme_wire_self *self,
                                    const uint8_t dst_mac[6], uint32_t dst_node,
                                    uint16_t dst_ep, int type, size_t len);

/* Seal a frame gathered in f (f->iov[0] starts with the Ethernet header): stamp the
 * nonce and the hop limit, then the check the keys call for. */
void pme_wire_seal(const struct pme_wire_keys *k, const struct pme_wire_self *self,
                   uint64_t nonce, struct pme_dev_frame *f);

/* The verdict on a received frame. */
enum pme_wire_verdict {
    PME_WIRE_OK = 0,
    PME_WIRE_SHORT,         /* shorter than its headers say */
    PME_WIRE_NOT_MINE,      /* another EtherType, MAC, node or endpoint */
    PME_WIRE_OTHER_VERSION, /* another wire version (maybe a VERSION_NAK) */
    PME_WIRE_FOREIGN_JOB,   /* another job's id */
    PME_WIRE_BAD_HEADER,    /* longer than our frames may be, or malformed */
    PME_WIRE_BAD_CRC,       /* the CRC does not match */
    PME_WIRE_BAD_MAC,       /* no MAC where one is required, or a wrong one */
};

/* Check frame[0..len) for endpoint self: addressing, job, length, then the check. On
 * PME_WIRE_OK the PME header is at frame + PME_ETH_HLEN and hdr.len bytes follow it. */
enum pme_wire_verdict pme_wire_check(const struct pme_wire_keys *k,
                                     const struct pme_wire_self *self, const uint8_t *frame,
                                     size_t len, unsigned mtu);
/* The same for a frame whose payload the device placed elsewhere (zero copy): frame
 * holds its headers, placed (if not NULL) the rest, which the MAC or CRC covers too. */
enum pme_wire_verdict pme_wire_check_placed(const struct pme_wire_keys *k,
                                            const struct pme_wire_self *self,
                                            const uint8_t *frame, size_t len,
                                            const struct pme_dev_placed *placed, unsigned mtu);

/* ---- VERSION_NAK ---- */

/* Bytes of the NAK this endpoint sends (frozen part and its authentication). */
#define PME_WIRE_NAK_BYTES \
    (PME_ETH_HLEN + sizeof(struct pme_wire_version_nak) + sizeof(struct pme_wire_nak_auth))

/* Build the NAK answering `frame` (of another version) into buf (PME_WIRE_NAK_BYTES,
 * padded by the caller to the Ethernet minimum if it likes), saying we speak `version`
 * (PME_WIRE_VERSION; tests play other versions). */
size_t pme_wire_nak_build(const struct pme_wire_keys *k, const struct pme_wire_self *self,
                          uint64_t nonce, const uint8_t *frame, unsigned version,
                          uint8_t *buf);

struct pme_wire_nak {
    uint16_t src_ep;
    uint32_t src_node;      /* 0 when the NAK carries no authentication part */
    uint32_t incarnation;
    uint64_t nonce;
    unsigned version;       /* what its sender speaks */
    bool authenticated;     /* its MAC verified under our key */
};

/* Read a VERSION_NAK addressed to self: true when it is one (magic and CRC of the
 * frozen part), with what it says; authenticated tells whether its MAC checked out. */
bool pme_wire_nak_parse(const struct pme_wire_keys *k, const struct pme_wire_self *self,
                        const uint8_t *frame, size_t len, struct pme_wire_nak *out);

/* ---- replay protection ---- */

/* Which nonces of one sender incarnation were seen: the highest, and a window of the 64
 * below it (frames of one sender reach us nearly in order). */
struct pme_replay {
    uint64_t top;
    uint64_t window;    /* bit i: top - i was seen; 0: nothing seen yet */
};

/* Would nonce be new? pme_replay_mark records it once the frame was accepted. */
bool pme_replay_fresh(const struct pme_replay *r, uint64_t nonce);
void pme_replay_mark(struct pme_replay *r, uint64_t nonce);

#endif
