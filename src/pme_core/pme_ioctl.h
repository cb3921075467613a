/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note OR BSD-3-Clause */
/*
 * pme_ioctl.h - the contract between PME's kernel driver (kmod/, /dev/pme) and the
 * processes that use it (src/pme_core/dev_kernel.c): ioctls, the layout of the mapped
 * rings, and the counters. One definition for both sides, so it uses only
 * <linux/types.h>, <linux/ioctl.h> and the wire header, which uses only the former.
 *
 * One open file of /dev/pme is one endpoint. PME_IOC_BIND ties it to an interface, an
 * endpoint id, a job and a node, and sizes its rings; mmap() of the file then maps
 *
 *   offset 0          struct pme_kring_ctl (one page)
 *   rx_offset         rx_slots receive slots of slot_size bytes
 *   tx_offset         tx_slots send slots of slot_size bytes
 *
 * Each slot is struct pme_kslot followed by one whole Ethernet frame. The status word
 * says who owns the slot, as in the kernel's TPACKET rings:
 *
 *   receive: PME_KRX_KERNEL -> the driver writes a frame -> PME_KRX_USER -> the process
 *            reads it and hands the slot back (PME_KRX_KERNEL). Slots are used in order.
 *   send:    PME_KTX_FREE -> the process writes a frame -> PME_KTX_SEND; after a batch it
 *            rings the doorbell (PME_IOC_SEND) once; the driver checks, stamps and
 *            sends every PME_KTX_SEND slot in order and hands it back (PME_KTX_FREE).
 *
 * Zero copy (ABI 3) adds two kinds of slot. A send slot marked PME_KTX_SEND_ZC holds
 * only the frame's headers; its payload is zc_len bytes at address zc_addr inside the
 * registered region zc_region (PME_IOC_ZC_REG), sent from the region's pinned pages.
 * A receive slot with PME_KZC_PLACED in zc_flags holds only the headers of a
 * rendezvous frame whose payload the packet handler wrote straight into a buffer the
 * process armed (PME_IOC_ZC_ARM): zc_len bytes at address zc_addr.
 *
 * A status word is written last with release semantics and read with acquire
 * semantics on both sides. The driver trusts nothing in the mapped memory: it copies a
 * frame out before it checks it, and a process that scribbles on its rings only loses
 * its own frames.
 */
#ifndef PME_IOCTL_H
#define PME_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#include "pme_wire.h"

/*
 * The ABI's version: bumped on any change to this file that an old module or an old
 * library would misread. PME_IOC_BIND refuses another version with EPROTO, and
 * PME_IOC_VERSION (whose number never changes) tells the library which one the module
 * speaks, so the error can name both.
 */
#define PME_ABI_VERSION 3
/*
 * The oldest version the module still binds: versions 1 and 2 have the same layout
 * (version 1 with flags and liveness_key 0: the driver then answers nothing for the
 * endpoint; neither uses the zero-copy slots and ioctls of version 3, which fail for
 * them with EPROTO), so processes linked with an older PME keep working with a newer
 * module.
 */
#define PME_ABI_VERSION_OLDEST 1

/* ---- the wire, as far as the driver reads and writes it ---- */

/*
 * Offsets from the start of the Ethernet frame (pme_wire.h defines them). dst_ep,
 * version and type are the same in every wire version; the others hold for version 2.
 */
#ifndef PME_WIRE_OFF_SRC_EP
#define PME_WIRE_OFF_SRC_EP      (PME_ETH_HLEN + 4)
#endif
#ifndef PME_WIRE_OFF_DST_NODE
#define PME_WIRE_OFF_DST_NODE    (PME_ETH_HLEN + 8)
#endif
#ifndef PME_WIRE_OFF_SRC_NODE
#define PME_WIRE_OFF_SRC_NODE    (PME_ETH_HLEN + 12)
#endif
#ifndef PME_WIRE_OFF_JOB_ID
#define PME_WIRE_OFF_JOB_ID      (PME_ETH_HLEN + 20)
#endif
#ifndef PME_WIRE_OFF_INCARNATION
#define PME_WIRE_OFF_INCARNATION (PME_ETH_HLEN + 40)
#endif

/*
 * The wire versions the driver carries, and the size of the PME header of each (a
 * shorter frame is refused). Version 1 has src_ep where version 2 has it, and nothing
 * else the driver matches or stamps; version 2 adds dst_node and job_id (matched on
 * receive) and src_node and incarnation (stamped on send). Version 3 has version 2's
 * header (only its handshake changed, which the driver does not read).
 */
#define PME_KWIRE_V1            1
#define PME_KWIRE_V1_HDR_LEN    32
#define PME_KWIRE_V2            2
#define PME_KWIRE_V2_HDR_LEN    72
#define PME_KWIRE_V3            3

/* Whether frames of this version have version 2's header. */
static inline int pme_kwire_v2_header(__u8 version)
{
	return version == PME_KWIRE_V2 || version == PME_KWIRE_V3;
}

#ifndef PME_NODE_ANY
#define PME_NODE_ANY 0xFFFFFFFFu /* never a real node */
#endif

/* ---- binding an endpoint ---- */

#define PME_KEP_ANY 0xFFFF /* pme_kbind.ep_id: any free id (the one chosen is returned) */

struct pme_kbind {
	__u32 abi_version;      /* in: PME_ABI_VERSION */
	__u32 flags;            /* in: PME_KBIND_* */
	char ifname[16];        /* in: interface name (IFNAMSIZ), in the caller's netns */
	__u16 ep_id;            /* in: 0..PME_EP_ID_MAX or PME_KEP_ANY; out: the id */
	__u16 ethertype;        /* in: 0 or the module's; out: the module's EtherType */
	__u32 job_id;           /* in: version 2 frames of other jobs are not delivered */
	__u32 node_id;          /* in: this node; PME_NODE_ANY takes any dst_node */
	__u32 incarnation;      /* in: 0 to let the driver choose; out: the one stamped */
	__u32 rx_bytes;         /* in: receive ring size wanted (0: default) */
	__u32 tx_bytes;         /* in: send ring size wanted (0: default) */
	__u32 rx_slots;         /* out */
	__u32 tx_slots;         /* out */
	__u32 slot_size;        /* out: bytes per slot, struct pme_kslot included */
	__u32 mtu;              /* out: the interface's MTU at bind time */
	__u8 mac[6];            /* out: the interface's MAC (stamped as Ethernet source) */
	__u16 pad;              /* 0 */
	__u64 rx_offset;        /* out: mmap offset of the receive ring */
	__u64 tx_offset;        /* out: mmap offset of the send ring */
	__u64 mmap_len;         /* out: bytes to map at offset 0 */
	/*
	 * The job's MAC key (the 16-byte secret) with PME_KBIND_CHECK_MAC, else 0. The
	 * driver uses it only for the frames it makes itself on the endpoint's behalf
	 * (PONG, BYE) and to check the PINGs it answers.
	 */
	__u64 liveness_key[2];
	__u64 reserved[4];      /* 0 */
};

/*
 * pme_kbind.flags. With PME_KBIND_LIVENESS the driver answers for the endpoint while
 * its file is open: a PING addressed to it is checked and answered with a PONG by the
 * driver (and not placed in the ring), and when the file is closed (the process ended
 * or died) every peer the endpoint sent to gets a BYE. Its frames carry PME_F_KERNEL
 * and nonces with PME_KNONCE_BASE set, and are checked like the job's (at most one of
 * the CHECK flags; neither: unchecked, PME_AUTH=none).
 */
#define PME_KBIND_LIVENESS  0x1
#define PME_KBIND_CHECK_CRC 0x2
#define PME_KBIND_CHECK_MAC 0x4
#define PME_KBIND_FLAGS     0x7

/* The nonces of kernel-made frames: a space of their own, apart from the process's. */
#define PME_KNONCE_BASE (1ULL << 63)

/* The first page of the mapping. The driver writes it; the process reads it. */
struct pme_kring_ctl {
	__u32 abi_version;
	__u32 state;            /* PME_KSTATE_* bits */
	__u32 rx_slots;
	__u32 tx_slots;
	__u32 slot_size;
	__u32 pad;
	__u64 rx_offset;
	__u64 tx_offset;
};

#define PME_KSTATE_DOWN 0x1      /* the interface is down: nothing moves until it is up */
#define PME_KSTATE_GONE 0x2      /* the interface went away: the endpoint is dead */

struct pme_kslot {
	__u32 status;           /* PME_KRX_* or PME_KTX_* */
	__u32 len;              /* bytes of the frame that follows (zero copy: its headers) */
	__u32 zc_len;           /* zero copy: payload bytes placed, or to send */
	__u32 zc_region;        /* send: the region the payload comes from */
	/* Zero copy: the payload's address, where it was placed or where it is sent from */
	__u64 zc_addr;
	__u32 zc_flags;         /* receive: PME_KZC_* */
	__u32 pad;
};

#define PME_KSLOT_HDR_LEN 32     /* sizeof(struct pme_kslot): where the frame starts */

#define PME_KRX_KERNEL 0
#define PME_KRX_USER   1
#define PME_KTX_FREE   0
#define PME_KTX_SEND   1
#define PME_KTX_SEND_ZC 2        /* headers in the slot, payload from a region (ABI 3) */

/* pme_kslot.zc_flags of a receive slot */
#define PME_KZC_PLACED   0x1     /* the payload is at zc_addr, not in the slot */
#define PME_KZC_FINISHED 0x2     /* and its arm got its last byte: the driver dropped it */

/* ---- counters ---- */

/*
 * Per endpoint (PME_IOC_COUNTERS) and for the whole module (PME_IOC_GLOBAL_COUNTERS,
 * /sys/class/misc/pme/counters/<name>). New counters go at the end.
 */
enum pme_kcounter {
	PME_KCNT_RX_FRAMES,             /* frames placed in a receive ring */
	PME_KCNT_RX_BYTES,              /* bytes of those frames */
	PME_KCNT_TX_FRAMES,             /* frames sent (to the wire or an endpoint here) */
	PME_KCNT_TX_BYTES,              /* bytes of those frames */
	PME_KCNT_RX_RING_FULL,          /* dropped: the receive ring was full */
	PME_KCNT_RX_NO_ENDPOINT,        /* dropped: no endpoint bound to that id */
	PME_KCNT_RX_WRONG_JOB,          /* dropped: version 2, another job */
	PME_KCNT_RX_WRONG_NODE,         /* dropped: version 2, another node */
	PME_KCNT_RX_BAD_FRAME,          /* dropped: too short, or an unknown version */
	PME_KCNT_RX_TOO_LONG,           /* dropped: longer than a ring slot */
	PME_KCNT_TX_BAD_ETHERTYPE,      /* refused: not PME's EtherType */
	PME_KCNT_TX_BAD_LENGTH,         /* refused: too short, or longer than the MTU */
	PME_KCNT_TX_BAD_VERSION,        /* refused: a wire version the driver lacks */
	PME_KCNT_TX_SRC_REWRITTEN,      /* sent with forged source fields rewritten */
	PME_KCNT_TX_DROPPED,            /* the interface did not take it (down, full) */
	PME_KCNT_TX_LOCAL,              /* delivered to an endpoint on the same interface */
	PME_KCNT_PONG_SENT,             /* PINGs the driver answered for the endpoint */
	PME_KCNT_PING_REFUSED,          /* PINGs dropped: bad MAC or CRC, malformed, replayed */
	PME_KCNT_BYE_SENT,              /* BYEs the driver sent when the file was closed */
	PME_KCNT_BYE_UNTRACKED,         /* peers beyond the driver's table: no BYE for them */
	PME_KCNT_ZC_PINNED_PAGES,       /* pages pinned for zero copy now (not a sum) */
	PME_KCNT_ZC_CACHE_HITS,         /* registrations served by a region already pinned */
	PME_KCNT_ZC_CACHE_MISSES,       /* registrations that pinned pages */
	PME_KCNT_ZC_INVALIDATIONS,      /* regions dropped because their memory changed */
	PME_KCNT_ZC_REFUSED,            /* registrations and arms refused (limits, faults) */
	PME_KCNT_ZC_RX_FRAMES,          /* frames whose payload was placed in a user buffer */
	PME_KCNT_ZC_RX_BYTES,           /* payload bytes of those */
	PME_KCNT_ZC_RX_COPIED,          /* frames of an armed receive passed whole instead */
	PME_KCNT_ZC_TX_FRAMES,          /* frames sent from pinned pages */
	PME_KCNT_ZC_TX_BYTES,           /* payload bytes of those */
	PME_KCNT_ZC_TX_COPIED,          /* zero-copy slots of a dropped region: copied or lost */
	/* PINGs left to the process (into the ring): of a peer the endpoint never sent to,
	 * of another incarnation than the one the driver answers, over the peer's budget
	 */
	PME_KCNT_PING_PASSED,
	PME_KCNT_NR
};

/* Their names, in the order above (sysfs file names, /proc/driver/pme columns). */
#define PME_KCNT_NAMES { \
	"rx_frames", "rx_bytes", "tx_frames", "tx_bytes", \
	"rx_ring_full", "rx_no_endpoint", "rx_wrong_job", "rx_wrong_node", \
	"rx_bad_frame", "rx_too_long", "tx_bad_ethertype", "tx_bad_length", \
	"tx_bad_version", "tx_src_rewritten", "tx_dropped", "tx_local", \
	"pong_sent", "ping_refused", "bye_sent", "bye_untracked", \
	"zc_pinned_pages", "zc_cache_hits", "zc_cache_misses", "zc_invalidations", \
	"zc_refused", "zc_rx_frames", "zc_rx_bytes", "zc_rx_copied", "zc_tx_frames", \
	"zc_tx_bytes", "zc_tx_copied", "ping_passed", \
}

#define PME_KCNT_MAX 32          /* room in the ABI; PME_KCNT_NR <= PME_KCNT_MAX */

struct pme_kcounters {
	__u32 count;            /* out: counters filled (PME_KCNT_NR of the module) */
	__u32 pad;
	__u64 v[PME_KCNT_MAX];   /* out: indexed by enum pme_kcounter */
};

/* ---- ioctls ---- */

#define PME_IOC_MAGIC 0xB5

/* The module's PME_ABI_VERSION. This number never changes. */
#define PME_IOC_VERSION         _IOR(PME_IOC_MAGIC, 0, __u32)
/*
 * Bind this file to an interface and endpoint id (once per file). EBUSY: the id is
 * taken on that interface; ENODEV: no such interface; ENETDOWN: it is down; EPROTO:
 * another ABI version; EDQUOT: the rings would take the caller's user past the
 * module's user_ring_mb; ENOMEM: no memory for them (the caller's memory cgroup is
 * charged for them).
 */
#define PME_IOC_BIND            _IOWR(PME_IOC_MAGIC, 1, struct pme_kbind)
/*
 * The doorbell: send every PME_KTX_SEND slot, in order. Returns how many slots it took
 * (sent or refused, see the counters), or fails: ENETDOWN, ENODEV (interface gone).
 */
#define PME_IOC_SEND            _IO(PME_IOC_MAGIC, 2)
#define PME_IOC_COUNTERS        _IOR(PME_IOC_MAGIC, 3, struct pme_kcounters)
#define PME_IOC_GLOBAL_COUNTERS _IOR(PME_IOC_MAGIC, 4, struct pme_kcounters)

/* ---- zero copy (ABI 3) ---- */

/*
 * Register [addr, addr + len) of the caller's memory: its pages are pinned (charged
 * to RLIMIT_MEMLOCK) until the last user lets go and the driver's cache of idle
 * regions drops it, or at once when the process unmaps or remaps any of it (an MMU
 * notifier). A region already pinned that covers the range is reused (a cache hit).
 * Returns the region's id: frames of PME_KTX_SEND_ZC slots name it. EINVAL: len 0,
 * unknown flags; E2BIG: longer than the module's zc_max_region_mb; EFAULT: not
 * mapped (or read-only, for PME_KZC_RECV); ENOMEM: over RLIMIT_MEMLOCK; ENOSPC: too
 * many regions; EPERM: another process's endpoint; EPROTO: bound with an older ABI.
 */
struct pme_kzc_reg {
	__u64 addr;             /* in */
	__u64 len;              /* in */
	__u32 flags;            /* in: PME_KZC_SEND or PME_KZC_RECV */
	__u32 id;               /* out */
	__u64 reserved[2];      /* 0 */
};

#define PME_KZC_SEND 0x1         /* the driver reads the pages (sends from them) */
#define PME_KZC_RECV 0x2         /* the driver writes them: writable memory only */

/*
 * Arm a rendezvous receive: the payload of RDATA frames with this rndv_id from
 * (src_node, src_ep) is written by the packet handler at addr + the frame's offset,
 * in order, for as long as the arm lasts; each such frame still reaches the receive
 * ring, with its headers only (PME_KZC_PLACED). A frame out of order (a loss, a
 * retransmission) reaches the ring whole, as without an arm. The arm ends with its last
 * byte (PME_KZC_FINISHED on that frame) or with PME_IOC_ZC_DISARM; the buffer is the
 * driver's to write until then. Errors as for PME_IOC_ZC_REG, and EEXIST (armed
 * already), ENOSPC (too many arms).
 */
struct pme_kzc_arm {
	__u64 addr;             /* in: where offset 0 goes */
	__u64 len;              /* in: bytes expected */
	__u32 rndv_id;          /* in: the receiver's handle RDATA carries */
	__u32 src_node;         /* in: the sender */
	__u16 src_ep;           /* in */
	__u16 pad;              /* 0 */
	__u32 reserved[3];      /* 0 */
};

#define PME_IOC_ZC_REG          _IOWR(PME_IOC_MAGIC, 5, struct pme_kzc_reg)
/* Let go of a region (its id); it may stay pinned in the cache. EINVAL: not held. */
#define PME_IOC_ZC_UNREG        _IOW(PME_IOC_MAGIC, 6, __u32)
#define PME_IOC_ZC_ARM          _IOW(PME_IOC_MAGIC, 7, struct pme_kzc_arm)
/*
 * End the arm of this rndv_id: once it returns the packet handler writes nothing more
 * into the buffer. ENOENT: no such arm (never armed, or finished already).
 */
#define PME_IOC_ZC_DISARM       _IOW(PME_IOC_MAGIC, 8, __u32)
/* Numbers 9 to 15 stay free. */

#endif /* PME_IOCTL_H */
