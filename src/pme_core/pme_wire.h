/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note OR BSD-3-Clause */
/*
 * pme_wire.h - PME's frame format. One definition for the user-space transport
 * (src/pme_core) and the kernel driver (kmod/), so it uses only <linux/types.h> and
 * no libc.
 *
 * Version 2 changed the format once for everything that needed it:
 *   - authentication: a per-job secret and a keyed MAC (GMAC, AES-128) over header and
 *     payload, with a per-sender frame counter in the nonce;
 *   - node addressing and routing: frames name source and destination nodes, so a node
 *     with several NICs is one peer, and frames for a non-neighbour can be forwarded by
 *     the nodes on the way (eBPF at TC ingress, the kernel driver later) under a hop
 *     limit;
 *   - kernel-stamped sources: everything the kernel driver writes for the sender
 *     (Ethernet source, src_node, src_ep, incarnation) sits in the fixed header under
 *     the MAC, so a frame whose source was changed fails authentication;
 *   - rails: each frame names the rail whose sequence space its seq and ack belong to.
 *     Rail k joins the sender's k-th NIC to the receiver's k-th NIC (the k-th interface
 *     of each endpoint's list) and is a Go-Back-N channel of its own; HELLO on rail 0
 *     opens the connection and lists the sender's NICs, HELLO on rail k > 0 opens rail
 *     k. Items that must arrive in order travel on one rail at a time and carry an
 *     order number, so that a receiver takes each once when a dead rail's items are
 *     sent again over another; rendezvous data lands at its offset from any rail.
 *
 * Version 3 changed the handshake only (the header is version 2's): a HELLO carries a
 * challenge its receiver must echo before it believes in the sender's incarnation, so
 * that a HELLO recorded in another run under the same secret, or of an incarnation
 * that was replaced, changes nothing (see struct pme_wire_hello).
 *
 * A PME frame is an Ethernet II frame of PME's EtherType (0x88B5 unless configured):
 *
 *   | dst MAC | src MAC | EtherType | pme_wire_hdr (72 B) | sub-header | payload |
 *
 * All fields are big-endian. Bytes 0..3 of the PME header (dst_ep, version, type) keep
 * their place and meaning in every version (see PME_T_VERSION_NAK).
 */
#ifndef PME_WIRE_H
#define PME_WIRE_H

#include <linux/types.h>

#define PME_WIRE_VERSION 3
#define PME_ETHERTYPE_DEFAULT 0x88B5
#define PME_ETH_HLEN 14
#define PME_EP_ID_MAX 0xFFFE            /* 0xFFFF is reserved */
#define PME_NODE_ANY 0xFFFFFFFFu        /* never a real node */
#define PME_WIRE_MIN_FRAME 256          /* smallest max_frame a peer may announce */
#define PME_HOP_LIMIT_DEFAULT 16

enum pme_wire_type {
	/* Sequenced (per peer and rail): Go-Back-N, delivered once and in order. */
	PME_T_DATA = 1,         /* eager fragment: pme_wire_frag + bytes of hdr||data */
	PME_T_RTS = 2,          /* rendezvous offer: pme_wire_rts + user header */
	PME_T_CTS = 3,          /* rendezvous answer: pme_wire_cts */
	PME_T_RDATA = 4,        /* rendezvous fragment: pme_wire_rdata + bytes */
	PME_T_NOP = 5,          /* sequenced no-op (window probe) */
	PME_T_RMA = 6,          /* one-sided request or answer: pme_wire_rma + bytes */
	/* Unsequenced control. */
	PME_T_ACK = 16,         /* hdr.ack acknowledges every frame up to it */
	PME_T_LOSE = 17,        /* frames lost: pme_wire_lose (none: from hdr.ack + 1) */
	PME_T_STOP = 18,        /* out of buffers: hdr.ack accepted, stop sending */
	PME_T_GO = 19,          /* buffers again: resume from hdr.ack + 1 */
	PME_T_CREDIT = 20,      /* hdr.credit carries a new eager credit limit */
	PME_T_HELLO = 21,       /* open the sender's direction: pme_wire_hello */
	PME_T_HELLO_ACK = 22,   /* answer to HELLO: pme_wire_hello, hdr.credit = grant */
	PME_T_CREDIT_REQ = 23,  /* a stalled sender asks for the current credit limit */
	PME_T_PING = 24,        /* liveness probe: pme_wire_ping; answered by PONG */
	PME_T_PONG = 25,        /* answer to PING (from the process, its helper or the kernel) */
	PME_T_BYE = 26,         /* this incarnation is gone (closed, or killed: kernel) */
	PME_T_VERSION_NAK = 255,/* "I speak hdr.version": layout frozen for every version */
};

/* hdr.flags */
#define PME_F_ACK_VALID   0x0001 /* hdr.ack and hdr.credit describe the reverse direction */
#define PME_F_ACK_REQ     0x0002 /* acknowledge at once (window full, last fragment, probe) */
#define PME_F_FIRST       0x0004 /* first fragment of a message */
#define PME_F_LAST        0x0008 /* last fragment of a message */
#define PME_F_CHECK_CRC   0x0010 /* check[0..3] is CRC32C (no MAC) */
#define PME_F_CHECK_MAC   0x0020 /* check[] is the GMAC tag */
#define PME_F_KERNEL      0x0040 /* made by the kernel driver on the endpoint's behalf */

struct pme_wire_hdr {
	__be16 dst_ep;          /*  0 */
	__u8 version;           /*  2 */
	__u8 type;              /*  3 */
	__be16 src_ep;          /*  4 */
	__be16 len;             /*  6: bytes after this header (sub-header + payload) */
	__be32 dst_node;        /*  8 */
	__be32 src_node;        /* 12 */
	__u8 hops_left;         /* 16: forwarders decrement, drop at 0; outside the MAC */
	__u8 rail;              /* 17: the sender's rail: seq/ack below belong to it */
	__be16 flags;           /* 18 */
	__be32 job_id;          /* 20: public id of the job's secret; cheap early drop */
	__be32 seq;             /* 24: sequenced types: this frame's number on this rail */
	__be32 ack;             /* 28: last in-order seq received from the destination (rail) */
	__be32 credit;          /* 32: eager credit limit granted to the destination (bytes) */
	__be16 aux;             /* 36: type-specific */
	__be16 reserved;        /* 38: 0 */
	__be32 incarnation;     /* 40: the sender endpoint's, random per open */
	/* 44: DATA, RTS, CTS: the item's number in the sender's in-order stream to this
	 * peer (one count over all rails, never 0); 0 in other frames and from senders
	 * without it
	 */
	__be32 order;
	__be64 nonce;           /* 48: per-sender frame counter, never repeats per incarnation */
	__u8 check[16];         /* 56: GMAC tag, or CRC32C in check[0..3], or zeros */
} __attribute__((packed));  /* 72 bytes */

/*
 * The MAC (PME_F_CHECK_MAC): GMAC = AES-128-GCM with an empty plaintext, key = the job
 * key (derived from the job secret), IV = the 20 bytes
 *      src_node (4) || src_ep (2) || 0 (2) || incarnation (4) || nonce (8)
 * (GCM's rule for IVs that are not 96 bits long applies), additional data = the header
 * with hops_left and check[] zeroed, followed by the hdr.len bytes after the header.
 * The CRC (PME_F_CHECK_CRC) covers the same bytes.
 */

/* PME_T_DATA: every fragment carries it; offset counts bytes of hdr||data. */
struct pme_wire_frag {
	__be32 total;           /* bytes of user header + data */
	__be32 offset;
	__be16 hdr_len;         /* bytes of user header at the start */
	__be16 pad;
} __attribute__((packed));

/*
 * PME_T_DATA with hdr.aux = PME_DATA_BUNDLE (on every fragment): a bundle, several
 * small messages to one peer carried as one message (one order number, one credit
 * charge of pme_wire_pool_cost(total)), sent only to a peer that announced
 * PME_FEAT_BUNDLE. Its bytes (pme_wire_frag.total of them, hdr_len 0) are a
 * pme_wire_bundle, then `count` records, each a pme_wire_rec followed by the len bytes
 * of one message's user header and data. The first record starts at byte 8, each next
 * one at pme_wire_rec_after(the end of the bytes before it), and the last one ends the
 * bundle: so every message's bytes start at a multiple of PME_BUNDLE_ALIGN from the
 * bundle's start, and a receiver hands each out where it lies, aligned as a single
 * message's. A receiver checks every record against the bundle's length before it
 * delivers any. Other values of hdr.aux on PME_T_DATA are not defined.
 */
#define PME_DATA_BUNDLE 1

struct pme_wire_bundle {
	__be16 count;           /* records, at least 1 */
	__be16 pad;
	__be32 pad2;
} __attribute__((packed));

struct pme_wire_rec {
	__be32 len;             /* bytes of user header + data after this record header */
	__be16 hdr_len;         /* bytes of user header at their start */
	__be16 pad;
} __attribute__((packed));

#define PME_BUNDLE_ALIGN 16u

/* Where the record after one whose bytes end at `end` starts. */
static inline __u32 pme_wire_rec_after(__u32 end)
{
	return ((end + PME_BUNDLE_ALIGN - 1) & ~(PME_BUNDLE_ALIGN - 1)) +
	       (__u32)sizeof(struct pme_wire_rec);
}

/* PME_T_RTS, followed by the user header. */
struct pme_wire_rts {
	__be32 send_id;         /* the sender's handle, echoed in CTS */
	__be16 hdr_len;
	__be16 pad;
	__be64 total;           /* bytes of data offered */
} __attribute__((packed));

/* PME_T_CTS (hdr.aux: PME_CTS_DISCARD) */
struct pme_wire_cts {
	__be32 send_id;
	__be32 rndv_id;         /* the receiver's handle, carried by every RDATA */
	__be64 accepted;        /* bytes to send; 0 discards the offer */
} __attribute__((packed));
#define PME_CTS_DISCARD 1

/* PME_T_RDATA: lands at offset (rails may carry fragments of one transfer). */
struct pme_wire_rdata {
	__be32 rndv_id;
	__be32 pad;
	__be64 offset;
} __attribute__((packed));

/*
 * PME_T_HELLO and PME_T_HELLO_ACK, followed by the sender's NIC of each rail (6 bytes
 * each, rail 0 first, at least rail 0's): a receiver reads what hdr.len covers and
 * learns a peer's NICs only from these lists, which the MAC covers, never from the
 * Ethernet source.
 *
 * The challenge: a receiver does not believe a HELLO of an incarnation it has not met
 * (a new peer, or a peer's new process) until that incarnation has echoed a challenge
 * of the receiver's own in an authenticated HELLO or HELLO_ACK. Until then the HELLO
 * changes nothing: the receiver answers with a HELLO of its own carrying its challenge
 * (and the echo of the HELLO's, which lets the sender believe in it too). A HELLO
 * recorded in another run under the same secret, or one of an incarnation that was
 * replaced since, cannot echo a challenge made after it, so replaying it opens,
 * resets and delivers nothing. A challenge is never 0; echo 0 answers none.
 */
struct pme_wire_hello {
	__be64 chal;            /* HELLO: the sender's challenge to the receiver; HELLO_ACK: 0 */
	/* HELLO_ACK: the chal of the HELLO answered; HELLO: the chal of the receiver's last
	 * HELLO that the sender has not answered yet, or 0
	 */
	__be64 echo;
	__be32 first_seq;       /* the first sequence number it will send on this rail */
	__be16 max_frame;       /* largest frame (from EtherType on) it takes, >= 256 */
	__u8 nrails;            /* rails the sender has (0 counts as 1) */
	__u8 pad;
	__be32 features;        /* PME_FEAT_*: optional frame types the sender understands */
	__be32 pad2;
} __attribute__((packed));  /* 32 bytes */
#define PME_WIRE_MAX_RAILS 8

/* pme_wire_hello.features */
#define PME_FEAT_RMA      0x00000001u /* takes PME_T_RMA frames (one-sided communication) */
#define PME_FEAT_BUNDLE   0x00000002u /* takes bundles (PME_T_DATA, PME_DATA_BUNDLE) */
#define PME_FEAT_RMA_BUNDLE 0x00000004u /* takes PME_T_RMA bundles (PME_RMA_BUNDLE) */

/*
 * PME_T_RMA: one-sided communication. The origin's requests name a window the target
 * exposed (key) and a byte offset in it; the target checks both and acts on arrival,
 * whatever its process is doing. Requests without an answer (PUT, ACC, UNLOCK) are
 * complete when the link acknowledges them: the target acknowledges a frame only after
 * acting on it. The others are answered (DATA, DONE or NAK) with the origin's req_id.
 * An operation of several frames repeats the sub-header in each, offset advancing by
 * the payload of the frames before; payloads of one operation are multiples of 16
 * bytes but the last, so that no element of an accumulate straddles two frames.
 */
enum pme_wire_rma_op {
	/* requests (origin to target) */
	PME_RMA_PUT = 1,        /* the payload lands at offset */
	PME_RMA_ACC = 2,        /* the payload is combined into the window at offset (aop, dtype) */
	PME_RMA_GET = 3,        /* answer len bytes from offset (DATA) */
	PME_RMA_FETCH = 4,      /* as ACC, answering the values before it (DATA); one frame */
	/* payload = compare || swap, one element: swap if equal; answers the value
	 * before (DATA)
	 */
	PME_RMA_CAS = 5,
	PME_RMA_LOCK = 6,       /* take the window's lock (flags), answered DONE once granted */
	PME_RMA_UNLOCK = 7,     /* release it */
	/* answers (target to origin), naming the request by req_id */
	PME_RMA_DATA = 16,      /* bytes answering GET, FETCH or CAS, at offset of the answer */
	PME_RMA_DONE = 17,      /* the lock is granted (and the request carrying it done) */
	PME_RMA_NAK = 18,       /* refused: status (PME_RMA_E_*); aop = the refused request's op */
};

/*
 * PME_T_RMA with hdr.aux = PME_RMA_BUNDLE: a bundle of one-sided requests and answers
 * to one peer in one frame (PME_F_FIRST and PME_F_LAST both set), sent only to a peer
 * that announced PME_FEAT_RMA_BUNDLE. Its bytes (no sub-header before them) are laid
 * out as a PME_DATA_BUNDLE's: a pme_wire_bundle, then records (pme_wire_rec, hdr_len
 * 0), each the pme_wire_rma of an operation that fits one frame and its payload, as
 * that operation would travel in a frame of its own. The receiver checks every record
 * first and acts on them in order; it takes the bundle whole or refuses it whole (no
 * room for the answers it asks for: the link resends it). A record that takes a lock
 * (PME_RMA_LOCK, PME_RMA_F_SHARED or _EXCL) is refused with PME_RMA_E_OP: those
 * travel alone. The frame is acknowledged as one.
 */
#define PME_RMA_BUNDLE 1

/* Answers travel from target to origin; anything else is a request (or nonsense, which
 * the target refuses).
 */
static inline int pme_wire_rma_is_answer(unsigned int op)
{
	return op == PME_RMA_DATA || op == PME_RMA_DONE || op == PME_RMA_NAK;
}

/* pme_wire_rma.flags of a request: take the window's lock before acting on it. PUT, ACC
 * and the answered requests may carry it when they fit one frame; such a request is
 * answered (DONE or DATA) only once the lock was granted and the request done.
 */
#define PME_RMA_F_SHARED  0x01
#define PME_RMA_F_EXCL    0x02

/* pme_wire_rma.status of a NAK */
enum pme_wire_rma_error {
	PME_RMA_E_NOWIN = 1,    /* no window with that key is exposed */
	PME_RMA_E_RANGE = 2,    /* the bytes lie (partly) outside the window */
	PME_RMA_E_OP = 3,       /* unknown op, aop or dtype, or a combination MPI forbids */
	PME_RMA_E_NOLOCK = 4,   /* UNLOCK of a lock the origin neither holds nor waits for */
};

/* Accumulate operations (aop) and element types (dtype). */
enum pme_wire_rma_aop {
	PME_AOP_REPLACE = 0, PME_AOP_NO_OP = 1, PME_AOP_SUM = 2, PME_AOP_PROD = 3,
	PME_AOP_MAX = 4, PME_AOP_MIN = 5, PME_AOP_LAND = 6, PME_AOP_LOR = 7, PME_AOP_LXOR = 8,
	PME_AOP_BAND = 9, PME_AOP_BOR = 10, PME_AOP_BXOR = 11, PME_AOP_COUNT = 12,
};
enum pme_wire_rma_dtype {
	PME_DT_I8 = 0, PME_DT_U8 = 1, PME_DT_I16 = 2, PME_DT_U16 = 3, PME_DT_I32 = 4,
	PME_DT_U32 = 5, PME_DT_I64 = 6, PME_DT_U64 = 7, PME_DT_F32 = 8, PME_DT_F64 = 9,
	PME_DT_COUNT = 10,
};

struct pme_wire_rma {
	__u8 op;                /* enum pme_wire_rma_op */
	__u8 flags;             /* PME_RMA_F_* */
	__u8 aop;               /* ACC, FETCH: enum pme_wire_rma_aop */
	__u8 dtype;             /* ACC, FETCH, CAS: enum pme_wire_rma_dtype */
	__be32 key;             /* requests: the target's window */
	__be32 req_id;          /* the origin's handle of an answered request, echoed */
	__be32 status;          /* NAK: enum pme_wire_rma_error */
	/* requests: bytes from the window's base of this frame's payload; DATA: bytes
	 * from the start of the answer
	 */
	__be64 offset;
	/* bytes of the whole operation (GET: bytes asked; CAS: of one element) */
	__be64 len;
} __attribute__((packed));  /* 32 bytes */

#define PME_RMA_FRAG_ALIGN 16u

/* Payload bytes of one PME_T_RMA frame to a peer whose frames take max_frame bytes after
 * the Ethernet header (every frame of an operation but its last carries this many).
 */
static inline __u32 pme_wire_rma_room(__u32 max_frame)
{
	__u32 hdrs = (__u32)(sizeof(struct pme_wire_hdr) + sizeof(struct pme_wire_rma));

	return max_frame > hdrs ? (max_frame - hdrs) & ~(PME_RMA_FRAG_ALIGN - 1) : 0;
}

/* PME_T_PING / PME_T_PONG */
/* LOSE: frames [first, first + count) of the rail did not arrive; the receiver holds
 * the ones after them that did, so only these are resent. A receiver that holds
 * nothing (PME_HOLD=0, or out of room) sends LOSE without it: go back to hdr.ack + 1.
 */
struct pme_wire_lose {
	__be32 first;
	__be32 count;
} __attribute__((packed));

struct pme_wire_ping {
	__be64 token;           /* echoed by PONG */
	__be32 rcv_nxt;         /* PONG: the answerer's next expected seq from the pinger (rail) */
	__be32 pad;
} __attribute__((packed));

/*
 * PME_T_VERSION_NAK: the first 16 bytes are frozen for every version, so that whatever
 * a peer speaks it can read "the endpoint at src speaks version V". From version 2 on
 * the frozen part is followed by pme_wire_nak_auth, so a job that authenticates can
 * trust it (an unauthenticated NAK cannot cut a connection).
 */
#define PME_VERSION_NAK_MAGIC 0x504d4556u /* "PMEV" */
struct pme_wire_version_nak {
	__be16 dst_ep;
	__u8 version;           /* the version the sender speaks */
	__u8 type;              /* PME_T_VERSION_NAK */
	__be16 src_ep;
	__be16 pad;
	__be32 magic;
	__be32 crc;             /* CRC32C of the 12 bytes above */
} __attribute__((packed));

struct pme_wire_nak_auth {
	__be32 src_node;
	__be32 incarnation;
	__be32 job_id;
	__be32 pad;
	__be64 nonce;
	__u8 tag[16];           /* GMAC as for a header, additional data = the 40 bytes before */
} __attribute__((packed));

/* Offsets a kernel-side filter, forwarder or driver may rely on (from the start of the
 * Ethernet frame).
 */
#define PME_WIRE_OFF_DST_EP    (PME_ETH_HLEN + 0)
#define PME_WIRE_OFF_VERSION   (PME_ETH_HLEN + 2)
#define PME_WIRE_OFF_TYPE      (PME_ETH_HLEN + 3)
#define PME_WIRE_OFF_SRC_EP    (PME_ETH_HLEN + 4)
#define PME_WIRE_OFF_DST_NODE  (PME_ETH_HLEN + 8)
#define PME_WIRE_OFF_SRC_NODE  (PME_ETH_HLEN + 12)
#define PME_WIRE_OFF_HOPS_LEFT (PME_ETH_HLEN + 16)
#define PME_WIRE_OFF_JOB_ID    (PME_ETH_HLEN + 20)
#define PME_WIRE_OFF_INCARNATION (PME_ETH_HLEN + 40)

/* Length of the GMAC IV described above. */
#define PME_WIRE_MAC_IV_BYTES 20

static inline int pme_wire_type_is_sequenced(unsigned int type)
{
	return type >= PME_T_DATA && type <= PME_T_RMA;
}

/*
 * Eager credit is counted in what one message costs the receiver's pool: its bytes
 * rounded up to the pool unit, plus one unit for the message's bookkeeping. Both sides
 * compute it with this function, so it is part of the protocol.
 */
#define PME_WIRE_POOL_UNIT 64u
static inline __u32 pme_wire_pool_cost(__u32 msg_bytes)
{
	return PME_WIRE_POOL_UNIT +
	       ((msg_bytes + PME_WIRE_POOL_UNIT - 1) & ~(PME_WIRE_POOL_UNIT - 1));
}

#endif /* PME_WIRE_H */
