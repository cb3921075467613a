// SPDX-License-Identifier: GPL-2.0-only
/*
 * pme_fwd - PME's mesh forwarder at the TC ingress hook of each data interface of a
 * node (pme_route installs it). A PME frame of wire version 2 or later whose dst_node
 * is another node is switched in the kernel: hops_left is decremented (a frame that
 * arrives with 1 or 0 left is dropped), the Ethernet destination becomes the next hop
 * and the source the out interface, and the frame leaves on the route's interface.
 * Frames for this node (or for every node), version 1 frames and everything that is
 * not PME pass untouched. The route table is pme_route.h's binary form.
 *
 * Offsets are those of wire version 2 (pme_wire.h's PME_WIRE_OFF_*): after the 14-byte
 * Ethernet header, version at 2, dst_node at 8 (big-endian), hops_left at 16, which
 * the frame's MAC does not cover, so forwarders may change it.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "pme_fwd.h"
#include "pme_route.h"
#include "pme_wire.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PME_ROUTE_MAX_NODES);
	__type(key, __u32);
	__type(value, struct pme_route_entry);
} fwd_routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pme_route_self);
} fwd_self SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PME_FWD_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} fwd_cnt SEC(".maps");

static __always_inline int count(__u32 what, int verdict)
{
	__u64 *c = bpf_map_lookup_elem(&fwd_cnt, &what);

	if (c)
		*c += 1;
	return verdict;
}

/* The bytes of the frame this program reads: EtherType up to hops_left. */
struct fwd_view {
	__be16 ethertype;
	__be16 dst_ep;
	__u8 version;
	__u8 type;
	__be16 src_ep;
	__be16 len;
	__be32 dst_node;
	__be32 src_node;
	__u8 hops_left;
} __attribute__((packed));

/* The view starts at the EtherType, two bytes before the PME header. */
#define VIEW_AT (PME_ETH_HLEN - 2)
_Static_assert(VIEW_AT + __builtin_offsetof(struct fwd_view, version) == PME_WIRE_OFF_VERSION,
	       "version offset differs from pme_wire.h");
_Static_assert(VIEW_AT + __builtin_offsetof(struct fwd_view, dst_node) == PME_WIRE_OFF_DST_NODE,
	       "dst_node offset differs from pme_wire.h");
_Static_assert(VIEW_AT + __builtin_offsetof(struct fwd_view, hops_left) ==
	       PME_WIRE_OFF_HOPS_LEFT, "hops_left offset differs from pme_wire.h");

SEC("tc")
int pme_fwd(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct pme_route_self *self = bpf_map_lookup_elem(&fwd_self, &zero);
	struct pme_route_entry *r;
	struct fwd_view v;
	__u32 dst;
	__u8 hops;

	if (!self)
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, VIEW_AT, &v.ethertype, 2) ||
	    __builtin_bswap16(v.ethertype) != self->ethertype)
		return count(PME_FWD_NOT_PME, TC_ACT_OK);
	/* Too short for a version 2 header, or version 1: the endpoint judges it. */
	if (bpf_skb_load_bytes(skb, VIEW_AT, &v, sizeof(v)) || v.version < 2)
		return count(PME_FWD_LOCAL, TC_ACT_OK);
	dst = __builtin_bswap32(v.dst_node);
	if (dst == self->node || dst == PME_NODE_ANY)
		return count(PME_FWD_LOCAL, TC_ACT_OK);
	r = bpf_map_lookup_elem(&fwd_routes, &dst);
	if (!r)
		return count(PME_FWD_NO_ROUTE, TC_ACT_SHOT);
	if (v.hops_left <= 1)
		return count(PME_FWD_HOP_LIMIT, TC_ACT_SHOT);
	hops = v.hops_left - 1;
	if (bpf_skb_store_bytes(skb, PME_WIRE_OFF_HOPS_LEFT, &hops, 1, 0) ||
	    bpf_skb_store_bytes(skb, 0, r->next_hop, 6, 0) ||
	    bpf_skb_store_bytes(skb, 6, r->src_mac, 6, 0))
		return TC_ACT_SHOT;
	count(PME_FWD_FORWARDED, 0);
	return bpf_redirect(r->ifindex, 0);
}

char LICENSE[] SEC("license") = "GPL";
