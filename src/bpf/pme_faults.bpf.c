// SPDX-License-Identifier: GPL-2.0-only
/*
 * pme_faults - seeded faults on PME's frames at the TC egress hook of an interface:
 * drop, duplicate, corrupt one bit, delay, reorder, each with its own probability.
 * Test infrastructure: maint/faults loads it, sets it and reads its counters.
 *
 * Delay and reorder give a frame a departure time and hand it to the delay line (see
 * pme_faults.h), which sends it then. A delayed frame holds back the frames after it
 * (the link stalls, order is kept); a reordered frame leaves later while the frames
 * after it do not, so they overtake it. Frames of other EtherTypes pass untouched and
 * are only counted.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "pme_faults.h"

#define ETH_HLEN 14

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pme_faults_cfg);
} faults_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pme_faults_state);
} faults_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PME_FC_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} faults_cnt SEC(".maps");

/* The delay line: the ring buffer it reads, and what it and the program share. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PME_FAULTS_LINE_RING);
} faults_line SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pme_faults_line_state);
} faults_lstate SEC(".maps");

/* Where a frame is assembled for the ring buffer: one slot per CPU (the loader sets
 * max_entries to the number of CPUs; the hook runs with migration disabled). */
struct line_slot {
	struct pme_faults_line_rec rec;
	__u8 frame[PME_FAULTS_LINE_FRAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct line_slot);
} faults_slot SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *c = bpf_map_lookup_elem(&faults_cnt, &what);

	if (c)
		*c += 1;
}

static __always_inline __u64 draw(const struct pme_faults_cfg *cfg, __u64 frame, __u32 kind)
{
	return pme_faults_draw(cfg->seed, cfg->salt, frame, kind);
}

/* Flip one bit after the Ethernet header, at a place chosen by the PRNG. */
static __always_inline void corrupt(struct __sk_buff *skb, __u64 where)
{
	__u32 span = skb->len - ETH_HLEN;
	__u32 off;
	__u8 byte;

	if (skb->len <= ETH_HLEN)
		return;
	off = ETH_HLEN + (__u32)(where % span);
	if (bpf_skb_load_bytes(skb, off, &byte, 1))
		return;
	byte ^= (__u8)(1u << ((where >> 32) & 7));
	if (bpf_skb_store_bytes(skb, off, &byte, 1, 0) == 0)
		count(PME_FC_CORRUPTED);
}

/* hand_over: the frame goes to the delay line, to leave at `at`. 0: it did. */
static __always_inline int hand_over(struct __sk_buff *skb, __u64 at, int in_order,
				     struct pme_faults_line_state *ls, __u64 now)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct line_slot *slot = bpf_map_lookup_elem(&faults_slot, &cpu);
	__u32 len = skb->len;

	if (!slot || len == 0 || len > PME_FAULTS_LINE_FRAME_MAX ||
	    now - ls->alive_ns > PME_FAULTS_LINE_STALE_NS)
		return -1;
	if (bpf_skb_load_bytes(skb, 0, slot->frame, len))
		return -1;
	slot->rec.depart_ns = at;
	slot->rec.len = len;
	slot->rec.in_order = in_order;
	if (bpf_ringbuf_output(&faults_line, slot, sizeof(slot->rec) + len, 0))
		return -1;
	if (in_order)
		__sync_fetch_and_add(&ls->handed, 1);
	return 0;
}

/*
 * Delay and reorder: TC_ACT_OK to send the frame now, TC_ACT_STOLEN when the delay
 * line took it. A frame kept in order leaves no earlier than the one before it (the
 * floor), and goes through the line while in-order frames are still there.
 */
static __always_inline int schedule(struct __sk_buff *skb, const struct pme_faults_cfg *cfg,
				    struct pme_faults_state *st, __u64 frame)
{
	__u32 zero = 0;
	struct pme_faults_line_state *ls;
	__u64 now, at;
	int reorder;

	if (!cfg->delay_ppm && !cfg->reorder_ppm)
		return TC_ACT_OK;
	ls = bpf_map_lookup_elem(&faults_lstate, &zero);
	if (!ls)
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	at = st->floor_ns > now ? st->floor_ns : now;
	if (pme_faults_hit(draw(cfg, frame, PME_FD_DELAY), cfg->delay_ppm)) {
		if (now + cfg->delay_ns > at)
			at = now + cfg->delay_ns;
		count(PME_FC_DELAYED);
	}
	reorder = pme_faults_hit(draw(cfg, frame, PME_FD_REORDER), cfg->reorder_ppm);
	if (reorder) {
		/* Later than the frames that follow, which keep the floor they had. */
		at += cfg->reorder_ns;
		count(PME_FC_REORDERED);
	} else {
		st->floor_ns = at;
		if (at <= now && ls->handed == ls->released)
			return TC_ACT_OK; /* nothing to wait for */
	}
	if (hand_over(skb, at, !reorder, ls, now)) {
		count(PME_FC_LINE_MISSED);
		return TC_ACT_OK;
	}
	return TC_ACT_STOLEN;
}

SEC("tc")
int pme_faults(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct pme_faults_cfg *cfg = bpf_map_lookup_elem(&faults_cfg, &zero);
	struct pme_faults_state *st = bpf_map_lookup_elem(&faults_state, &zero);
	__u16 ethertype;
	__u64 frame;
	int copy;

	if (!cfg || !st || skb->mark == PME_FAULTS_PASS_MARK)
		return TC_ACT_OK;
	/* The EtherType from the frame itself: a raw socket's skb->protocol need not be it. */
	if (bpf_skb_load_bytes(skb, 12, &ethertype, 2) ||
	    __builtin_bswap16(ethertype) != cfg->ethertype) {
		count(PME_FC_OTHER);
		return TC_ACT_OK;
	}
	copy = skb->mark == PME_FAULTS_DUP_MARK;
	if (copy)
		skb->mark = 0;
	frame = __sync_fetch_and_add(&st->frames, 1);
	count(PME_FC_FRAMES);
	if (!copy) {
		if (pme_faults_hit(draw(cfg, frame, PME_FD_DROP), cfg->drop_ppm)) {
			/*
			 * Lost on the wire: STOLEN tells the sender it went out. SHOT
			 * would fail its send() with ENOBUFS, and a sender that takes
			 * that for a full queue (PME does) would just send it again.
			 */
			count(PME_FC_DROPPED);
			return TC_ACT_STOLEN;
		}
		if (pme_faults_hit(draw(cfg, frame, PME_FD_CORRUPT), cfg->corrupt_ppm))
			corrupt(skb, draw(cfg, frame, PME_FD_CORRUPT_WHERE));
		if (pme_faults_hit(draw(cfg, frame, PME_FD_DUP), cfg->dup_ppm)) {
			/* The copy passes this hook again, marked, before this call returns. */
			__u32 mark = skb->mark;

			skb->mark = PME_FAULTS_DUP_MARK;
			if (bpf_clone_redirect(skb, skb->ifindex, 0) == 0)
				count(PME_FC_DUPLICATED);
			skb->mark = mark;
		}
	}
	return schedule(skb, cfg, st, frame);
}

char LICENSE[] SEC("license") = "GPL";
