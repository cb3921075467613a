/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * pme_wire.h - PME's frame format. One definition for the user-space transport
 * (src/pme_core) and the kernel driver (kmod/), so it uses only <linux/types.h> and
 * no libc.
 *
 * A PME frame is an Ethernet II frame of PME's EtherType (0x88B5 unless configured):
 *
 *   | dst MAC | src MAC | EtherType | pme_wire_hdr (32 B) | sub-header | payload |
 *
 * All fields are big-endian. The first four bytes of pme_wire_hdr (destination
 * endpoint, version, type) keep their place and meaning in every version, so that a
 * receiver can filter on the endpoint in the kernel (BPF) and can tell a peer of
 * another version what it speaks (PME_T_VERSION_NAK keeps its number for ever).
 *
 * The CRC32C covers bytes [0, offsetof(crc)) of pme_wire_hdr and then everything after
 * the header up to hdr.len bytes; Ethernet padding after that is ignored.
 */
#ifndef PME_WIRE_H
#define PME_WIRE_H

#include <linux/types.h>

#define PME_WIRE_VERSION 1
#define PME_ETHERTYPE_DEFAULT 0x88B5
#define PME_ETH_HLEN 14
#define PME_EP_ID_MAX 0xFFFE        /* 0xFFFF is reserved */
#define PME_WIRE_MIN_FRAME 256      /* smallest max_frame a peer may announce */

enum pme_wire_type {
	/* Sequenced: carried by Go-Back-N, delivered once and in order. */
	PME_T_DATA = 1,         /* eager fragment: pme_wire_frag + bytes of hdr||data */
	PME_T_RTS = 2,          /* rendezvous offer: pme_wire_rts + user header */
	PME_T_CTS = 3,          /* rendezvous answer: pme_wire_cts */
	PME_T_RDATA = 4,        /* rendezvous fragment: pme_wire_rdata + bytes */
	PME_T_NOP = 5,          /* keepalive probe: no payload */
	/* Unsequenced control. */
	PME_T_ACK = 16,         /* hdr.ack acknowledges every frame up to it */
	PME_T_LOSE = 17,        /* a gap after hdr.ack: rewind to hdr.ack + 1 */
	PME_T_STOP = 18,        /* out of buffers: hdr.ack accepted, stop sending */
	PME_T_GO = 19,          /* buffers again: resume from hdr.ack + 1 */
	PME_T_CREDIT = 20,      /* hdr.credit carries a new eager credit limit */
	PME_T_HELLO = 21,       /* open the sender's direction: pme_wire_hello */
	PME_T_HELLO_ACK = 22,   /* answer to HELLO: pme_wire_hello, hdr.credit = grant */
	PME_T_CREDIT_REQ = 23,  /* a stalled sender asks for the current credit limit */
	PME_T_VERSION_NAK = 255,/* "I speak hdr.version": stable in every version */
};

static inline int pme_wire_type_is_sequenced(unsigned int type)
{
	return type >= PME_T_DATA && type <= PME_T_NOP;
}

/* hdr.flags */
#define PME_F_ACK_VALID   0x0001 /* hdr.ack and hdr.credit describe the reverse direction */
#define PME_F_ACK_REQ     0x0002 /* acknowledge at once (window full, last fragment, probe) */
#define PME_F_FIRST       0x0004 /* first fragment of a message */
#define PME_F_LAST        0x0008 /* last fragment of a message */
#define PME_F_NO_CRC      0x0010 /* hdr.crc is not set (sender runs without checksums) */

struct pme_wire_hdr {
	__be16 dst_ep;
	__u8 version;
	__u8 type;
	__be16 src_ep;
	__be16 len;             /* bytes after this header (sub-header + payload) */
	__be32 job_key;
	__be32 seq;             /* sequenced types: this frame's number */
	__be32 ack;             /* last in-order sequence received from the destination */
	__be32 credit;          /* eager credit limit granted to the destination (bytes, cumulative) */
	__be16 flags;
	__be16 aux;             /* type-specific */
	__be32 crc;
} __attribute__((packed));

/* PME_T_DATA: every fragment carries it; offset counts bytes of hdr||data. */
struct pme_wire_frag {
	__be32 total;           /* bytes of user header + data */
	__be32 offset;
	__be16 hdr_len;         /* bytes of user header at the start */
	__be16 pad;
} __attribute__((packed));

/* PME_T_RTS, followed by the user header. */
struct pme_wire_rts {
	__be32 send_id;         /* the sender's handle, echoed in CTS */
	__be16 hdr_len;
	__be16 pad;
	__be64 total;           /* bytes of data offered */
} __attribute__((packed));

/* PME_T_CTS */
struct pme_wire_cts {
	__be32 send_id;
	__be32 rndv_id;         /* the receiver's handle, carried by every RDATA */
	__be64 accepted;        /* bytes to send; 0 discards the offer */
} __attribute__((packed));

/* hdr.aux of PME_T_CTS */
#define PME_CTS_DISCARD 1       /* the receiver refused the offer */

/* PME_T_RDATA */
struct pme_wire_rdata {
	__be32 rndv_id;
	__be32 pad;
	__be64 offset;          /* of this fragment in the data */
} __attribute__((packed));

/* PME_T_HELLO and PME_T_HELLO_ACK */
struct pme_wire_hello {
	__be32 incarnation;     /* sender's: changes each time an endpoint opens */
	__be32 echo;            /* HELLO_ACK: the incarnation of the HELLO answered */
	__be32 first_seq;       /* HELLO: the first sequence number it will send */
	__be16 max_frame;       /* largest frame (from EtherType on) it takes, >= 256 */
	__be16 pad;
} __attribute__((packed));

/*
 * PME_T_VERSION_NAK: this layout is frozen for every version, so that whatever a peer
 * speaks it can read "the endpoint at src speaks version V" and trust it (magic and
 * CRC32C of the bytes before crc), instead of timing out.
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

/* Offsets a kernel-side filter may rely on (from the start of the Ethernet frame). */
#define PME_WIRE_OFF_DST_EP  (PME_ETH_HLEN + 0)
#define PME_WIRE_OFF_VERSION (PME_ETH_HLEN + 2)
#define PME_WIRE_OFF_TYPE    (PME_ETH_HLEN + 3)

/* Bytes of the header the CRC covers before the payload. */
#define PME_WIRE_CRC_COVERED_HDR 28

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
