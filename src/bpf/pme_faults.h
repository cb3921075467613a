/* SPDX-License-Identifier: GPL-2.0-only OR BSD-3-Clause */
/*
 * pme_faults.h - what the fault injector (pme_faults.bpf.c) and its control program
 * (faultctl.c and faultline.c, run by maint/faults) share: the maps' names and their
 * value layouts.
 *
 * One copy of the program is loaded per interface and attached to its TC egress hook,
 * so every map below describes one interface. The control program finds the maps again
 * through the program attached to the interface (no pinning, nothing left behind when
 * the interface or its network namespace goes away).
 *
 * Delay and reorder need somewhere to hold frames. The kernel's fq qdisc would honour
 * a departure time set in skb->tstamp, but kernels are built without it (this
 * project's machines are: no fq, no netem), so the program hands a held frame to the
 * "delay line" instead: it copies the frame and its departure time into a ring buffer
 * and steals it; the line (faultline.c, a process beside the program) sends it at
 * that time through a packet socket whose frames carry PME_FAULTS_PASS_MARK, which
 * the program lets through untouched.
 */
#ifndef PME_FAULTS_H
#define PME_FAULTS_H

#include <linux/types.h>

/* Probabilities are in parts per million of the frames of PME's EtherType. */
#define PME_FAULTS_PPM 1000000u

/*
 * A duplicate made with bpf_clone_redirect passes the egress hook a second time; this
 * mark tells the program it is the copy (the mark is cleared before it leaves, and a
 * veth crossing into another namespace scrubs marks anyway).
 */
#define PME_FAULTS_DUP_MARK 0x504d4544u /* "PMED" */

/* Frames the delay line sends: the program passes them untouched. */
#define PME_FAULTS_PASS_MARK 0x504d4550u /* "PMEP" */

/* The longest delay accepted. */
#define PME_FAULTS_MAX_DELAY_NS 1000000000ull

/* The delay line: the largest frame it holds (a veth's largest MTU plus the Ethernet
 * header), the ring buffer between program and line, and how long the line may stay
 * silent before the program stops handing it frames (it has died or is stuck). */
#define PME_FAULTS_LINE_FRAME_MAX 65552u
#define PME_FAULTS_LINE_RING (4u << 20)
#define PME_FAULTS_LINE_STALE_NS 500000000ull

/* A record of the ring buffer "faults_line": this header, then len bytes of frame. */
struct pme_faults_line_rec {
	__u64 depart_ns;     /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 len;
	__u32 in_order;      /* 1: counted in pme_faults_line_state, kept in order */
};

/*
 * The one-entry, memory-mapped map "faults_lstate", shared by program and line: the
 * program counts what it hands over, the line what it has sent and when it was last
 * alive. While an in-order frame is still in the line, the frames after it must follow
 * it through the line, or they would overtake it.
 */
struct pme_faults_line_state {
	__u64 alive_ns;      /* line: last sign of life */
	__u64 released;      /* line: in-order frames sent */
	__u64 handed;        /* program: in-order frames handed over (atomic) */
};

/* Value of the one-entry map "faults_cfg", written by the control program. */
struct pme_faults_cfg {
	__u64 seed;          /* the PRNG's seed (see pme_faults_draw) */
	__u64 salt;          /* per interface, so the links of a cluster differ */
	__u64 delay_ns;      /* how much later a delayed frame leaves */
	__u64 reorder_ns;    /* how much later a reordered frame leaves */
	__u32 drop_ppm;
	__u32 dup_ppm;
	__u32 corrupt_ppm;
	__u32 delay_ppm;
	__u32 reorder_ppm;
	__u16 ethertype;     /* host order; the frames subject to faults */
	__u16 pad;
};

/* Value of the one-entry map "faults_state", kept by the program. */
struct pme_faults_state {
	__u64 frames;        /* PME frames seen so far: the PRNG's position */
	__u64 floor_ns;      /* departure time of the last frame kept in order */
};

/* Indices of the per-CPU counters in the map "faults_cnt". */
enum pme_faults_counter {
	PME_FC_FRAMES,       /* PME frames that reached the hook (duplicates included) */
	PME_FC_DROPPED,
	PME_FC_DUPLICATED,   /* copies sent */
	PME_FC_CORRUPTED,    /* frames with one bit flipped after the Ethernet header */
	PME_FC_DELAYED,
	PME_FC_REORDERED,
	PME_FC_OTHER,        /* frames of other EtherTypes, passed untouched */
	PME_FC_LINE_MISSED,  /* meant to be held, but the delay line was down or full */
	PME_FC_COUNT
};

/* The order of this list is the order of enum pme_faults_counter. */
#define PME_FAULTS_COUNTER_NAMES \
	{ "frames", "dropped", "duplicated", "corrupted", "delayed", "reordered", "other", \
	  "line_missed" }

/* The decisions drawn for each frame, in the order the program takes them. */
enum pme_faults_draw_kind {
	PME_FD_DROP,
	PME_FD_CORRUPT,
	PME_FD_CORRUPT_WHERE,
	PME_FD_DUP,
	PME_FD_DELAY,
	PME_FD_REORDER,
	PME_FD_KINDS
};

/*
 * The seeded PRNG: every decision is a pure function of (seed, salt, frame number,
 * kind), so the n-th PME frame through an interface meets the same fate in every run
 * with the same seed, whichever CPU handles it (splitmix64's output function over a
 * counter). The frame number is taken with an atomic add.
 */
static inline __u64 pme_faults_draw(__u64 seed, __u64 salt, __u64 frame, __u32 kind)
{
	__u64 z = seed + salt * 0xD1B54A32D192ED03ull +
		  (frame * PME_FD_KINDS + kind + 1) * 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline int pme_faults_hit(__u64 draw, __u32 ppm)
{
	return ppm && (draw % PME_FAULTS_PPM) < ppm;
}

#endif /* PME_FAULTS_H */
